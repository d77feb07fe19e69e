"""People: the raters page, invitations, adding accounts and making the assignments."""

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation import assignment, assignment_jobs
from annotation.models import AssignmentJob
from annotation.selectors import rater_pair_overlap_range, rater_progress_table
from core import throttle
from studies import access, invitations
from studies.models import Membership, Study


class InvitationForm(forms.Form):
    note = forms.CharField(
        max_length=200,
        required=False,
        help_text="For you, e.g. who the link is for. The rater does not see it.",
    )
    days = forms.IntegerField(
        label="Valid for (days)", min_value=1, max_value=invitations.MAX_DAYS, initial=14
    )
    role = forms.ChoiceField(
        choices=Membership.Role.choices, initial=Membership.Role.RATER, required=False
    )


class AddAccountForm(forms.Form):
    username = forms.CharField(
        max_length=150,
        help_text="An existing account's username. The person is invited and joins once they "
        "accept.",
    )


def _invitation_form(study: Study, user, data=None) -> InvitationForm:
    form = InvitationForm(data)
    if user.pk != study.lead_id:
        # Only the study lead brings in other coordinators.
        del form.fields["role"]
    return form


def _raters_page(request, study, *, invitation_form=None, add_form=None, status=200):
    raters = list(rater_progress_table(study=study))
    active = [r for r in raters if r.status == Membership.Status.ACTIVE]
    unassigned = [r.pseudonym for r in active if r.total == 0]
    overlaps = None if unassigned else rater_pair_overlap_range(raters=active)
    return render(
        request,
        "studies/people/raters.html",
        {
            "study": study,
            "raters": raters,
            "unassigned": unassigned,
            "overlap_min": overlaps[0] if overlaps else None,
            "overlap_max": overlaps[1] if overlaps else None,
            "design": assignment.design_summary(study=study),
            "can_assign": not study.is_closed,
            "assign_job": assignment_jobs.assignment_job_running(study=study),
            "invitations": invitations.invitations_for_study(study=study),
            "invitation_form": invitation_form or _invitation_form(study, request.user),
            "add_form": add_form or AddAccountForm(),
        },
        status=status,
    )


@login_required
def raters(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return _raters_page(request, study)


@login_required
@require_POST
def invitation_create(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    form = _invitation_form(study, request.user, request.POST)
    if not form.is_valid():
        return _raters_page(request, study, invitation_form=form, status=400)
    role = form.cleaned_data.get("role") or Membership.Role.RATER
    try:
        invitation, token = invitations.invitation_create(
            study=study,
            created_by=request.user,
            role=role,
            note=form.cleaned_data["note"],
            days=form.cleaned_data["days"],
        )
    except invitations.InvitationError as error:
        form.add_error(None, str(error))
        return _raters_page(request, study, invitation_form=form, status=400)
    # The token exists only in this response: it is shown once and never stored.
    link = request.build_absolute_uri(reverse("annotation:invitation", args=[token]))
    response = render(
        request,
        "studies/people/invitation_created.html",
        {"study": study, "invitation": invitation, "link": link},
    )
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def invitation_revoke(request, slug, token_hash):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    invitation = study.invitations.filter(token_hash=token_hash).first()
    if invitation is None:
        raise Http404
    try:
        invitations.invitation_revoke(invitation=invitation, actor=request.user)
    except invitations.InvitationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Invitation revoked: the link no longer works.")
    return redirect("annotation:raters", slug=study.slug)


# The same answer whether or not the name is an account that can join: the form must not
# tell a coordinator who has an account here or who takes part in a study.
ACCOUNT_INVITED = (
    "If an account with that name exists and is not yet part of this study, it has been "
    "invited. The person joins as a rater once they accept."
)


@login_required
@require_POST
def rater_add(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    form = AddAccountForm(request.POST)
    if form.is_valid():
        try:
            invitations.rater_invite_account(
                study=study, username=form.cleaned_data["username"], actor=request.user
            )
        except invitations.InvitationError as error:
            form.add_error("username", str(error))
        else:
            messages.success(request, ACCOUNT_INVITED)
            return redirect("annotation:raters", slug=study.slug)
    return _raters_page(request, study, add_form=form, status=400)


@login_required
@require_POST
def invitation_respond(request, token_hash):
    """The invited person accepts or declines a personal invitation (home page buttons)."""
    accept = request.POST.get("action") == "accept"
    try:
        if accept:
            membership = invitations.invitation_accept_personal(
                invitation_hash=token_hash, user=request.user
            )
            return _joined(request, membership)
        invitations.invitation_decline(invitation_hash=token_hash, user=request.user)
    except invitations.InvitationError as error:
        if error.reason == "invalid":
            raise Http404 from error
        messages.error(request, str(error))
    else:
        messages.info(request, "Invitation declined.")
    return redirect("home")


@login_required
@require_POST
def assign(request, slug):
    """Assign: a small design inside this request, a large one as a job whose progress the
    next page shows (``annotation.assignment_jobs``); the raters page shows the result."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    job = assignment_jobs.assignment_job_start(study=study, actor=request.user)
    return _assign_job_outcome(request, study, job)


def _study_job(request, slug, job_uuid):
    """The study (its coordinators only) and its Assign job; 404 for another study's job."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    job = study.assignment_jobs.filter(uuid=job_uuid).first()
    if job is None:
        raise Http404
    return study, job


@login_required
@require_GET
def assign_job(request, slug, job_uuid):
    """A running job's progress; once it has ended, the raters page with its result."""
    study, job = _study_job(request, slug, job_uuid)
    return _assign_job_outcome(request, study, job)


@login_required
@require_GET
def assign_job_status(request, slug, job_uuid):
    """The job's progress as JSON, for the page's script."""
    _, job = _study_job(request, slug, job_uuid)
    return JsonResponse(assignment_jobs.assignment_job_status(job=job))


def _assign_job_outcome(request, study, job):
    status = assignment_jobs.assignment_job_status(job=job)
    if status["state"] == AssignmentJob.State.RUNNING:
        if request.method == "POST":
            return redirect("annotation:assign_job", slug=study.slug, job_uuid=job.uuid)
        return render(
            request,
            "studies/people/assign_progress.html",
            {"study": study, "job": job, "status": status},
        )
    created = status["created"]
    if status["state"] != AssignmentJob.State.DONE:
        messages.error(request, status["problem"])
    elif created:
        total = sum(created.values())
        messages.success(
            request,
            f"{total} case{'s' if total != 1 else ''} assigned to "
            f"{len(created)} rater{'s' if len(created) != 1 else ''}.",
        )
    else:
        messages.info(request, "Every rater already has their cases; nothing changed.")
    return redirect("annotation:raters", slug=study.slug)


@never_cache
@throttle.sign_in_throttled(username_fields=["signin-username", "signup-username"])
def invitation_open(request, token):
    """The page behind an invitation link: join as the signed-in user, sign in or sign up.

    Joining always takes a POST, so a link previewed or prefetched by a mail program is
    not used up.
    """
    invitation = invitations.invitation_find(token=token)
    state = invitations.invitation_state(invitation) if invitation else "invalid"
    if state != "pending":
        return _invitation_dead(request, state)
    study = invitation.study
    # Prefixes keep the two forms' field ids apart on one page.
    sign_in = AuthenticationForm(request, prefix="signin")
    sign_up = UserCreationForm(prefix="signup")
    error = None
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "join" and request.user.is_authenticated:
                membership = invitations.invitation_accept(token=token, user=request.user)
                return _joined(request, membership)
            if action == "sign_in":
                sign_in = AuthenticationForm(request, data=request.POST, prefix="signin")
                if sign_in.is_valid():
                    login(request, sign_in.get_user())
                    membership = invitations.invitation_accept(token=token, user=request.user)
                    return _joined(request, membership)
            elif action == "sign_up":
                sign_up = UserCreationForm(request.POST, prefix="signup")
                if sign_up.is_valid():
                    membership = invitations.invitation_accept_signup(
                        token=token,
                        username=sign_up.cleaned_data["username"],
                        password=sign_up.cleaned_data["password1"],
                    )
                    login(request, membership.user)
                    return _joined(request, membership)
        except invitations.InvitationError as exc:
            if exc.reason in ("used", "expired", "invalid"):
                return _invitation_dead(request, exc.reason)
            if exc.reason == "member" and request.user.is_authenticated:
                messages.info(request, f"You are already part of “{study.name}”.")
                return redirect("home")
            error = str(exc)
    return render(
        request,
        "studies/people/invitation.html",
        {
            "invitation": invitation,
            "study": study,
            "sign_in": sign_in,
            "sign_up": sign_up,
            "error": error,
        },
        status=400 if error or request.method == "POST" else 200,
    )


def _invitation_dead(request, state):
    return render(
        request,
        "studies/people/invitation_dead.html",
        {"state": state},
        status=404 if state == "invalid" else 410,
    )


def _joined(request, membership: Membership):
    study = membership.study
    if membership.role == Membership.Role.RATER:
        messages.success(request, f"Welcome to “{study.name}”.")
        return redirect("annotation:assignments", slug=study.slug)
    messages.success(request, f"You now coordinate “{study.name}”.")
    return redirect("annotation:overview", slug=study.slug)

"""People: the raters page, invitations, adding accounts and making the assignments."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import assignment_jobs
from annotation.forms import AddAccountForm, InvitationForm
from annotation.selectors import (
    rater_pair_overlap_range,
    rater_progress_table,
    study_adjudicators,
)
from annotation.services import assignment
from jobs.models import Job
from studies import access
from studies import selectors as study_selectors
from studies.models import Membership
from studies.services import invitations


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
            "assign_failure": assignment_jobs.assignment_last_failure(study=study)
            if unassigned
            else "",
            "invitations": study_selectors.invitations_for_study(study=study),
            "invitation_form": invitation_form or InvitationForm(study=study, user=request.user),
            "add_form": add_form or AddAccountForm(),
            "is_lead": request.user.pk == study.lead_id,
            "adjudicators": study_adjudicators(study=study),
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
    form = InvitationForm(request.POST, study=study, user=request.user)
    if not form.is_valid():
        return _raters_page(request, study, invitation_form=form, status=400)
    role = form.cleaned_data.get("role") or Membership.Role.RATER
    if form.cleaned_data["email"]:
        try:
            invitations.invitation_email_create(
                study=study,
                created_by=request.user,
                email=form.cleaned_data["email"],
                site=request.build_absolute_uri("/").rstrip("/"),
                role=role,
                note=form.cleaned_data["note"],
                days=form.cleaned_data["days"],
            )
        except invitations.InvitationError as error:
            form.add_error(None, str(error))
            return _raters_page(request, study, invitation_form=form, status=400)
        messages.success(request, "The invitation was e-mailed; the link was shown to no one.")
        return redirect("annotation:raters", slug=study.slug)
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
    link = request.build_absolute_uri(reverse("studies:invitation", args=[token]))
    response = render(
        request,
        "studies/people/invitation_created.html",
        {"study": study, "invitation": invitation, "link": link},
    )
    response["Cache-Control"] = "no-store"
    return response


def account_role(posted, *, study, user) -> str:
    """The role an account is invited to by name (the button pressed): a rater, or for the
    lead only, an adjudicator; anything else is refused."""
    if posted in (None, "", Membership.Role.RATER):
        return Membership.Role.RATER
    if posted == Membership.Role.ADJUDICATOR:
        if user.pk != study.lead_id:
            raise PermissionDenied("Only the study lead invites adjudicators.")
        return Membership.Role.ADJUDICATOR
    raise PermissionDenied("An account is invited to rate or to adjudicate.")


@login_required
@require_POST
def rater_add(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    role = account_role(request.POST.get("role"), study=study, user=request.user)
    form = AddAccountForm(request.POST)
    if form.is_valid():
        try:
            invitations.rater_invite_account(
                study=study, username=form.cleaned_data["username"], actor=request.user, role=role
            )
        except invitations.InvitationError as error:
            form.add_error("username", str(error))
        else:
            messages.success(request, invitations.ACCOUNT_INVITED)
            return redirect("annotation:raters", slug=study.slug)
    return _raters_page(request, study, add_form=form, status=400)


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
    job = assignment_jobs.assignment_job_of(study=study, job_uuid=job_uuid)
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
    slug = study.slug
    status = assignment_jobs.assignment_job_status(job=job)
    if status["state"] == Job.State.RUNNING:
        if request.method == "POST":
            return redirect("annotation:assign_job", slug=study.slug, job_uuid=job.uuid)
        return render(
            request,
            "studies/people/assign_progress.html",
            {
                "study": study,
                "job": job,
                "status": status,
                "status_url": reverse("annotation:assign_job_status", args=[slug, job.uuid]),
                "page_url": reverse("annotation:assign_job", args=[slug, job.uuid]),
            },
        )
    created = status["created"]
    if status["state"] != Job.State.DONE:
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

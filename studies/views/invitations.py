"""The invitation pages: the link's page (join, sign in or sign up), the answer to a personal
invitation, and revoking a link. Invitations are the study's (``studies.invitations``)."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.contrib.auth.models import User
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from core import throttle
from studies import access, selectors
from studies.models import Membership
from studies.services import invitations


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


@never_cache
@throttle.sign_in_throttled(username_fields=["signin-username", "signup-username"])
def invitation_open(request, token):
    """The page behind an invitation link: join as the signed-in user, sign in or sign up.

    Joining always takes a POST, so a link previewed or prefetched by a mail program is
    not used up.
    """
    invitation = selectors.invitation_find(token=token)
    if invitation is None:
        return _invitation_dead(request, "invalid")
    state = selectors.invitation_state(invitation)
    if state != "pending":
        return _invitation_dead(request, state)
    study = invitation.study
    # Prefixes keep the two forms' field ids apart on one page.
    sign_in = AuthenticationForm(request, prefix="signin")
    sign_up: UserCreationForm[User] = UserCreationForm(prefix="signup")
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
    if membership.role == Membership.Role.ADJUDICATOR:
        messages.success(request, f"You now adjudicate in “{study.name}”.")
        return redirect("annotation:adjudication_queue", slug=study.slug)
    messages.success(request, f"You now coordinate “{study.name}”.")
    return redirect("annotation:overview", slug=study.slug)

"""What a rater must do before rating, as a redirect the rating views share."""

from django.contrib import messages
from django.shortcuts import redirect

from core.user_input import UserInputError, json_read
from studies import access
from studies.errors import ApplicationError
from studies.models import Membership, Study

from .. import selectors


def rater_study(request, slug) -> tuple[Study, Membership]:
    """The study and the signed-in rater's membership: 404 for outsiders, 403 for others."""
    return access.get_membership_for_user(request.user, slug, role=access.RATER)


STEP_MESSAGES = {
    "withdrawn": "You have withdrawn from this study.",
    "consent": "Please read the information sheet and answer the questions before you start.",
    "qualification": "Please take the qualification test before you start rating.",
    "calibration_call": (
        "You have passed the qualification test. Before you rate the study's cases, this "
        "study asks you to attend a calibration call; the study lead will record that you "
        "attended, and you can start then."
    ),
}


NOT_STARTED = (
    "This study has not started yet: the information sheet, practice and cases open when "
    "the coordinator starts it."
)


def not_started(request, *, study: Study) -> bool:
    """True (with a message) while the study is a draft: nothing before rating is open yet,
    so no one consents to a protocol still changing or practises on cases still changing."""
    if not study.is_draft:
        return False
    messages.info(request, NOT_STARTED)
    return True


def blocking_redirect(request, *, rater: Membership, state=None):
    """A redirect to the step the rater must complete first, or None when they may rate."""
    if not_started(request, study=rater.study):
        return redirect("annotation:assignments", slug=rater.study.slug)
    step = state.blocking_step if state else selectors.onboarding_blocking_step(rater=rater)
    if step is None:
        return None
    messages.info(request, STEP_MESSAGES[step])
    slug = rater.study.slug
    if step == "consent":
        return redirect("annotation:consent", slug=slug)
    if step == "qualification":
        return redirect("annotation:qualification", slug=slug)
    return redirect("annotation:assignments", slug=slug)


class PayloadError(ApplicationError):
    """The rating form's data could not be read (a broken page or a tampered request)."""


def parse_payload(raw: str | None) -> dict:
    """The rating form's JSON, or ``PayloadError`` with a message for the rater."""
    try:
        payload = json_read(raw or "{}")
    except UserInputError as error:
        raise PayloadError(
            f"The form could not be read: {error.reason}. Reload the page and try again."
        ) from None
    if not isinstance(payload, dict):
        raise PayloadError("The form could not be read; reload the page.")
    return payload


def parse_int(raw, *, default=None):
    try:
        return int(raw)
    except (TypeError, ValueError):
        return default

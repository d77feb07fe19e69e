"""The study lifecycle: draft -> pilot -> open -> closed (-> open again) -> unblinded.

``TRANSITIONS`` is the one table of the status changes a coordinator makes: which statuses
each starts from, the service that makes it, and the words the pages use. The services
check the table; the set-up views read it to offer the changes. Unblinding, the study
lead's one-way step, lives in ``studies.services.unblinding``.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from studies import selectors
from studies.activity import UnfinishedWork, unfinished_work
from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.models import Study, StudyEvent
from studies.signals import analysis_inputs_announce, raters_need_cases_announce

from .guards import locked_study
from .webhooks import webhook_event_announce


@dataclass(frozen=True)
class Transition:
    sources: tuple[str, ...]  # the statuses it starts from
    target: str
    service: Callable[..., Study]
    refusal: str  # "A study that is closed cannot <refusal>."
    title: str
    done: str

    def allowed_from(self, study: Study) -> bool:
        return study.status in self.sources


class CloseNotConfirmedError(StudySetupError):
    """Closing would leave ratings undone and was not confirmed; ``unfinished`` says what."""

    def __init__(self, unfinished: UnfinishedWork):
        self.unfinished = unfinished
        super().__init__(
            "Closing would leave ratings undone: "
            + " ".join(unfinished.sentences())
            + " Confirm to close anyway."
        )


def _refuse_unless_allowed(study: Study, name: str) -> None:
    transition = TRANSITIONS[name]
    if not transition.allowed_from(study):
        raise StudySetupError(
            f"A study that is {study.get_status_display().lower()} cannot {transition.refusal}."
        )


def _refuse_unless_ready(study: Study) -> None:
    problems = selectors.study_open_problems(study=study)
    if problems:
        raise StudySetupError(" ".join(problems))


@transaction.atomic
def study_pilot_start(*, study: Study, actor: User | None) -> Study:
    """Draft -> pilot: raters can rate, to try the rubric and the interface."""
    study = locked_study(study)
    _refuse_unless_allowed(study, "pilot")
    _refuse_unless_ready(study)
    study.status = Study.Status.PILOT
    study.save(update_fields=["status"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.PILOT_STARTED,
        fingerprint=selectors.study_protocol_fingerprint(study=study),
    )
    analysis_inputs_announce(study_id=study.pk, reason="pilot")
    raters_need_cases_announce(study_id=study.pk, reason="pilot")
    return study


@transaction.atomic
def study_open(*, study: Study, actor: User | None, acknowledge_warnings: bool = False) -> Study:
    """Draft or pilot -> open: freezes the protocol and stores its fingerprint."""
    study = locked_study(study)
    _refuse_unless_allowed(study, "open")
    _refuse_unless_ready(study)
    passages, responses = selectors.study_identity_mention_counts(study=study)
    if passages and not acknowledge_warnings:
        raise StudySetupError(
            f"The blinding check found {responses} response{'s' if responses != 1 else ''} "
            "that may say which system or model wrote them. Review them and confirm before "
            "opening."
        )
    previous = study.status
    study.protocol_fingerprint = selectors.study_protocol_fingerprint(study=study)
    study.status = Study.Status.OPEN
    study.opened_at = timezone.now()
    study.save(update_fields=["protocol_fingerprint", "status", "opened_at"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.OPENED,
        previous_status=previous,
        fingerprint=study.protocol_fingerprint,
        blinding_warnings_acknowledged=passages,
    )
    # The analysis now reads the main phase, not the pilot.
    analysis_inputs_announce(study_id=study.pk, reason="open")
    raters_need_cases_announce(study_id=study.pk, reason="open")
    return study


@transaction.atomic
def study_close(
    *,
    study: Study,
    actor: User | None,
    stopped_early: dict | None = None,
    confirm: bool = True,
) -> Study:
    """Open -> closed: no more ratings; the study lead may then unblind. ``stopped_early``:
    what the analysis plan's monitor stood at when collection stopped under the plan, kept
    with the event (the app that owns the monitor passes it). A caller that asks the person
    first (the Close page, the API) passes ``confirm`` as they answered: while ratings are
    left undone, closing unconfirmed is refused with what it would leave."""
    study = locked_study(study)
    _refuse_unless_allowed(study, "close")
    if not confirm:
        unfinished = unfinished_work(study=study)
        if unfinished.left:
            raise CloseNotConfirmedError(unfinished)
    study.status = Study.Status.CLOSED
    study.closed_at = timezone.now()
    study.save(update_fields=["status", "closed_at"])
    if stopped_early:
        study_event_record(
            study=study, actor=actor, kind=StudyEvent.Kind.CLOSED, stopped_early=stopped_early
        )
    else:
        study_event_record(study=study, actor=actor, kind=StudyEvent.Kind.CLOSED)
    analysis_inputs_announce(study_id=study.pk, reason="close")
    webhook_event_announce(study_id=study.pk, event="study.closed", closed_at=study.closed_at)
    return study


@transaction.atomic
def study_reopen(*, study: Study, actor: User | None) -> Study:
    """Closed (not yet unblinded) -> open, e.g. to let a late rater finish."""
    study = locked_study(study)
    _refuse_unless_allowed(study, "reopen")
    if selectors.study_protocol_fingerprint(study=study) != study.protocol_fingerprint:
        raise StudySetupError(
            "The protocol no longer matches the fingerprint stored when the study opened; "
            "it cannot be reopened. Ask an administrator to investigate."
        )
    study.status = Study.Status.OPEN
    study.closed_at = None
    study.save(update_fields=["status", "closed_at"])
    study_event_record(study=study, actor=actor, kind=StudyEvent.Kind.REOPENED)
    analysis_inputs_announce(study_id=study.pk, reason="reopen")
    raters_need_cases_announce(study_id=study.pk, reason="reopen")
    return study


# The status changes a coordinator can make, in the order they usually come.
TRANSITIONS: dict[str, Transition] = {
    "pilot": Transition(
        sources=(Study.Status.DRAFT,),
        target=Study.Status.PILOT,
        service=study_pilot_start,
        refusal="start a pilot",
        title="Start the pilot",
        done="The pilot has started: raters can rate.",
    ),
    "open": Transition(
        sources=(Study.Status.DRAFT, Study.Status.PILOT),
        target=Study.Status.OPEN,
        service=study_open,
        refusal="be opened",
        title="Open the study",
        done="The study is open. Its protocol is frozen under the fingerprint shown.",
    ),
    "close": Transition(
        sources=(Study.Status.OPEN,),
        target=Study.Status.CLOSED,
        service=study_close,
        refusal="be closed",
        title="Close the study",
        done="The study is closed: raters can no longer change their ratings.",
    ),
    "reopen": Transition(
        sources=(Study.Status.CLOSED,),
        target=Study.Status.OPEN,
        service=study_reopen,
        refusal="be reopened",
        title="Reopen the study",
        done="The study is open again.",
    ),
}


def transitions_available(*, study: Study) -> list[tuple[str, Transition]]:
    """The status changes the study can make from where it is, in the table's order."""
    return [(name, t) for name, t in TRANSITIONS.items() if t.allowed_from(study)]

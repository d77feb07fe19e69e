"""Writes of the adjudication screen: the autosaved draft, the decision, "cannot be resolved",
and making an adjudicated case a gold item (protocol 4.2, 11).

The resolved answers are cleaned and scored by the rubric's kinds exactly as a rater's are
(``studies.rubric.score_form``), for the dimensions the case was sent for (its
``triggers``), in key-label order: the adjudication screen shows the pair as the key orders
it, never flipped. The adjudicator who decided may revise the decision until the study is
unblinded; every decision and every revision is an audit event.
"""

import json

from django.db import transaction
from django.utils import timezone

from annotation.models import Adjudication
from annotation.selectors.adjudication import adjudication_holder, adjudicator_rated_case
from studies.errors import ApplicationError, StudySetupError
from studies.events import study_event_record
from studies.locks import membership_lock, study_lock
from studies.models import BlindedLabel, Membership, Study, StudyEvent, TestCase
from studies.rubric import RubricValueError, score_form
from studies.services.quality import expected_answers_store
from studies.signals import analysis_inputs_announce

from .drafts import DRAFT_TOO_LARGE, MAX_DRAFT_BYTES
from .rating_checks import StaleVersionError

MAX_REASON_LENGTH = 5000

STALE_MESSAGE = (
    "This case was saved from another tab or device after you opened it. "
    "Reload to see the newer version; your unsaved answers are kept in this tab."
)
REASON_MISSING = "Give the reason for your decision."


class AdjudicationRefusedError(ApplicationError):
    """The adjudication cannot be changed by this person or in this state of the study."""


class AdjudicationInvalidError(ApplicationError):
    """The decision does not fit the rubric; ``field`` names the part of the form."""

    def __init__(self, message: str = "", *, field: str = ""):
        super().__init__(message)
        self.field = field


def _locked(*, adjudication: Adjudication, adjudicator: Membership) -> Adjudication:
    """The adjudication locked for a write, once the study and the adjudicator allow it.

    The order of ``studies.locks``: the study and the membership shared, then the
    adjudication row exclusively; closing or unblinding the study waits for this write.
    """
    study = study_lock(adjudication.test_case.study_id)
    if study.is_unblinded:
        raise AdjudicationRefusedError(
            "The study is unblinded: its adjudications can no longer change."
        )
    if study.is_draft:
        raise AdjudicationRefusedError("The study has not started: nothing can be adjudicated.")
    member = membership_lock(adjudicator.pk)
    if (
        member.study_id != study.pk
        or member.role != Membership.Role.ADJUDICATOR
        or member.status != Membership.Status.ACTIVE
    ):
        raise AdjudicationRefusedError("You do not adjudicate in this study.")
    locked = (
        Adjudication.objects.select_for_update(of=("self",), no_key=True)
        .select_related("test_case", "adjudicator")
        .get(pk=adjudication.pk)
    )
    # An adjudicator never decides a case they rated (their role may have changed).
    if adjudicator_rated_case(adjudicator=member, test_case_id=locked.test_case_id):
        raise AdjudicationRefusedError("You rated this case, so you cannot adjudicate it.")
    if adjudication_holder(adjudication=locked, membership=member) is not None:
        raise AdjudicationRefusedError(
            "Another adjudicator is working on this case; it is read-only for you."
        )
    locked.test_case.study = study
    locked.adjudicator = member
    return locked


def _dimensions(adjudication: Adjudication) -> list:
    """The kinds of the dimensions the case was sent for, in the rubric's order."""
    wanted = set(adjudication.triggers or {})
    study = adjudication.test_case.study
    return [d for d in study.rubric.scoring_dimensions() if d.key in wanted]


def _labels(adjudication: Adjudication) -> list[str]:
    return list(
        BlindedLabel.objects.filter(test_case_id=adjudication.test_case_id)
        .order_by("label")
        .values_list("label", flat=True)
    )


def _reason(payload: dict) -> str:
    reason = str(payload.get("notes") or "").replace("\x00", "").strip()
    if len(reason) > MAX_REASON_LENGTH:
        raise AdjudicationInvalidError(
            f"The reason is limited to {MAX_REASON_LENGTH} characters.", field="notes"
        )
    return reason


def _answers_known(dimensions, raw) -> dict:
    """The answers of a draft to the given dimensions, each cleaned by its kind."""
    raw = raw if isinstance(raw, dict) else {}
    return {d.key: d.clean(raw[d.key]) for d in dimensions if isinstance(raw.get(d.key), dict)}


def _scored(*, adjudication: Adjudication, payload: dict, complete: bool) -> dict:
    """The resolved answers, cleaned and scored by their kinds; with ``complete``, every
    dimension sent for adjudication must be answered."""
    dimensions = _dimensions(adjudication)
    labels = _labels(adjudication)
    try:
        responses, case = score_form(dimensions, payload, labels=labels)
    except RubricValueError as error:
        raise AdjudicationInvalidError(str(error), field=error.field) from error
    if complete:
        raw_responses = payload.get("responses") if isinstance(payload, dict) else None
        raw_responses = raw_responses if isinstance(raw_responses, dict) else {}
        raw_case = payload.get("case") if isinstance(payload, dict) else None
        raw_case = raw_case if isinstance(raw_case, dict) else {}
        for dimension in dimensions:
            if dimension.scope == "case":
                given = isinstance(raw_case.get(dimension.key), dict)
                if not given or not dimension.settles(case.get(dimension.key)):
                    raise AdjudicationInvalidError(
                        f"{dimension.name}: give the resolved answer.",
                        field=f"case-{dimension.key}",
                    )
                continue
            for label in labels:
                raw = raw_responses.get(label)
                given = isinstance(raw, dict) and isinstance(raw.get(dimension.key), dict)
                if not given or not dimension.settles(responses[label].get(dimension.key)):
                    raise AdjudicationInvalidError(
                        f"Response {label}: {dimension.name}: give the resolved answer.",
                        field=f"{label}-{dimension.key}",
                    )
    return {
        "responses": {label: answers for label, answers in responses.items() if answers},
        "case": case,
    }


def _draft_clean(*, adjudication: Adjudication, payload: dict) -> dict:
    """The form as the adjudicator left it, keeping only what the triggered dimensions define."""
    _scored(adjudication=adjudication, payload=payload, complete=False)  # what could never be
    dimensions = _dimensions(adjudication)
    per_response = [d for d in dimensions if d.scope == "response"]
    per_case = [d for d in dimensions if d.scope == "case"]
    responses = payload.get("responses")
    responses = responses if isinstance(responses, dict) else {}
    draft = {
        "responses": {
            label: _answers_known(per_response, responses[label])
            for label in _labels(adjudication)
            if isinstance(responses.get(label), dict)
        },
        "case": _answers_known(per_case, payload.get("case")),
        "notes": _reason(payload),
        "unresolvable": bool(payload.get("unresolvable")),
    }
    if len(json.dumps(draft)) > MAX_DRAFT_BYTES:
        raise AdjudicationInvalidError(DRAFT_TOO_LARGE)
    return draft


def _version_check(locked: Adjudication, expected_version: int | None) -> None:
    if expected_version is None or expected_version != locked.version:
        raise StaleVersionError(STALE_MESSAGE)


@transaction.atomic
def adjudication_draft_save(
    *,
    adjudication: Adjudication,
    adjudicator: Membership,
    payload: dict,
    expected_version: int,
) -> Adjudication:
    """Store the adjudication form as left. Refuses a save based on an older version."""
    locked = _locked(adjudication=adjudication, adjudicator=adjudicator)
    _version_check(locked, expected_version)
    locked.draft = _draft_clean(adjudication=locked, payload=payload)
    locked.version += 1
    locked.save(update_fields=["draft", "adjudicator", "version", "updated_at"])
    return locked


def _decided(
    locked: Adjudication, *, status: str, answers: dict, reason: str, draft: dict, actor
) -> Adjudication:
    previous = {"status": locked.status, "answers": locked.answers, "reason": locked.reason}
    locked.status = status
    locked.answers = answers
    locked.reason = reason
    locked.draft = draft
    locked.resolved_at = timezone.now()
    locked.version += 1
    locked.save()
    kind = (
        StudyEvent.Kind.ADJUDICATION_RESOLVED
        if status == Adjudication.Status.DONE
        else StudyEvent.Kind.ADJUDICATION_UNRESOLVABLE
    )
    study_event_record(
        study=locked.test_case.study,
        actor=actor,
        kind=kind,
        membership=locked.adjudicator,
        reason=reason,
        case=locked.test_case.case_id,
        dimensions=sorted(locked.triggers or {}),
        answers=answers,
        revision=previous["status"] != Adjudication.Status.WAITING,
        previous=previous if previous["status"] != Adjudication.Status.WAITING else {},
    )
    analysis_inputs_announce(study_id=locked.test_case.study_id, reason="adjudication")
    return locked


@transaction.atomic
def adjudication_resolve(
    *,
    adjudication: Adjudication,
    adjudicator: Membership,
    payload: dict,
    expected_version: int | None,
    actor=None,
) -> Adjudication:
    """Record the resolved answers of the triggered dimensions and the reason (required).

    A repeat of the same decision (a double click) is the decision already recorded.
    """
    locked = _locked(adjudication=adjudication, adjudicator=adjudicator)
    answers = _scored(adjudication=locked, payload=payload, complete=True)
    reason = _reason(payload)
    if not reason:
        raise AdjudicationInvalidError(REASON_MISSING, field="notes")
    if expected_version != locked.version:
        same = (locked.status, locked.answers, locked.reason)
        if same == (Adjudication.Status.DONE, answers, reason):
            return locked
        raise StaleVersionError(STALE_MESSAGE)
    draft = {**answers, "notes": reason, "unresolvable": False}
    return _decided(
        locked,
        status=Adjudication.Status.DONE,
        answers=answers,
        reason=reason,
        draft=draft,
        actor=actor,
    )


@transaction.atomic
def adjudication_mark_unresolvable(
    *,
    adjudication: Adjudication,
    adjudicator: Membership,
    reason: str,
    expected_version: int | None,
    actor=None,
) -> Adjudication:
    """Record that the case cannot be resolved, and why (required); no answer is kept."""
    locked = _locked(adjudication=adjudication, adjudicator=adjudicator)
    reason = _reason({"notes": reason})
    if not reason:
        raise AdjudicationInvalidError("Say why the case cannot be resolved.", field="notes")
    if expected_version != locked.version:
        if (locked.status, locked.reason) == (Adjudication.Status.UNRESOLVABLE, reason):
            return locked
        raise StaleVersionError(STALE_MESSAGE)
    return _decided(
        locked,
        status=Adjudication.Status.UNRESOLVABLE,
        answers={},
        reason=reason,
        draft={**locked.draft, "notes": reason, "unresolvable": True},
        actor=actor,
    )


GOLD_FROZEN = (
    "The study is open: gold items are part of its frozen protocol, so an adjudicated case "
    "can become one only before the study opens (a pilot case, for the qualification test "
    "or the next study)."
)


def adjudication_gold_refusal(*, adjudication: Adjudication, study: Study) -> str:
    """Why this adjudication cannot be made a gold item now ("" when it can)."""
    if adjudication.status != Adjudication.Status.DONE:
        return "Only a resolved case can become a gold item."
    if study.is_frozen:
        return GOLD_FROZEN
    if adjudication.test_case.purpose != TestCase.Purpose.SAMPLE:
        return "This case is not a sample case: a gold item, an attention check, or left out."
    return ""


def _expected(adjudication: Adjudication) -> dict:
    """Expected answers from the adjudicated ones: each kind says what its answer expects."""
    dimensions = {d.key: d for d in _dimensions(adjudication)}
    expected: dict = {"responses": {}, "case": {}}
    for label, answers in (adjudication.answers.get("responses") or {}).items():
        for key, value in answers.items():
            wanted = dimensions[key].expected_from_key(value, tolerance=0)
            if wanted is not None:
                expected["responses"].setdefault(label, {})[key] = wanted
    for key, value in (adjudication.answers.get("case") or {}).items():
        wanted = dimensions[key].expected_from_key(value, tolerance=0)
        if wanted is not None:
            expected["case"][key] = wanted
    return expected


@transaction.atomic
def adjudication_make_gold(*, adjudication: Adjudication, actor) -> None:
    """Make a resolved case a gold item whose expected answers are the adjudicated ones
    (protocol 4.2), with the adjudicator's reason as its explanation.

    Gold items are part of the protocol: as every gold item, only before the study opens
    (``studies.services.quality``), which refuses it otherwise.
    """
    study = study_lock(adjudication.test_case.study_id, exclusive=True)
    locked = (
        Adjudication.objects.select_for_update(of=("self",), no_key=True)
        .select_related("test_case")
        .get(pk=adjudication.pk)
    )
    locked.test_case.study = study
    refusal = adjudication_gold_refusal(adjudication=locked, study=study)
    if refusal:
        raise StudySetupError(refusal)
    expected = _expected(locked)
    if not expected["responses"] and not expected["case"]:
        raise StudySetupError("The adjudicated answers give nothing a rater could be held to.")
    expected_answers_store(
        test_case=locked.test_case,
        answers=expected,
        explanation=locked.reason[:2000],
        actor=actor,
    )
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.ADJUDICATION_MADE_GOLD,
        case=locked.test_case.case_id,
    )

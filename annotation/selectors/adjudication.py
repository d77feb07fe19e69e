"""Reads for adjudicators: their queue and the adjudication screen.

The screen shows the pair in key-label order (Response A, B: never systems, never
flipped) and each rater's submitted answers under their pseudonym, every answer read back
by its kind (a preference turned to key order by ``key_ordered``). Nothing here joins the
system of a response.
"""

from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef

from annotation.models import Adjudication, Assignment
from studies.models import BlindedLabel, Membership, Study


@dataclass(frozen=True)
class QueueRow:
    adjudication: Adjudication
    case_id: str
    dimensions: list[str]  # the names of the dimensions to resolve
    triggers: list[str]  # why, in words
    mine: bool  # decided or being worked on by this adjudicator
    taken_by: str  # another adjudicator's pseudonym, when one is working on it


def adjudication_holder(*, adjudication: Adjudication, membership: Membership):
    """The other adjudicator a case is held by (the first to save a draft of it), or None
    when it is free for ``membership``: unheld, held by them, or a waiting case whose
    holder is no longer active (paused, withdrawn), which another adjudicator may take
    over, the draft kept."""
    holder = adjudication.adjudicator
    if holder is None or holder.pk == membership.pk:
        return None
    if (
        adjudication.status == Adjudication.Status.WAITING
        and holder.status != Membership.Status.ACTIVE
    ):
        return None
    return holder


def _rated_by(adjudicator: Membership, test_case_id):
    """The assignments of the case to the person behind the membership, under any role
    they had: an adjudicator never decides a case they rated."""
    return Assignment.objects.filter(test_case_id=test_case_id, rater__user_id=adjudicator.user_id)


def adjudicator_rated_case(*, adjudicator: Membership, test_case_id: int) -> bool:
    return _rated_by(adjudicator, test_case_id).exists()


def _not_rated_by(queryset, *, adjudicator: Membership):
    """Cases the person behind the membership did not rate (their role may have changed)."""
    return queryset.exclude(Exists(_rated_by(adjudicator, OuterRef("test_case_id"))))


def adjudications_for(*, adjudicator: Membership):
    """Every adjudication of the adjudicator's study they may open."""
    return _not_rated_by(
        Adjudication.objects.filter(test_case__study_id=adjudicator.study_id),
        adjudicator=adjudicator,
    )


def _trigger_words(triggers: dict) -> list[str]:
    names = dict(Adjudication.Trigger.choices)
    seen: list[str] = []
    for reasons in (triggers or {}).values():
        for reason in reasons or []:
            word = names.get(reason, str(reason))
            if word not in seen:
                seen.append(word)
    return seen


def adjudication_queue(*, adjudicator: Membership) -> dict[str, list[QueueRow]]:
    """The adjudicator's queue: {"waiting": [...], "decided": [...]}, oldest first.

    "decided" are the cases this adjudicator resolved or marked unresolvable (they may
    revise them until unblinding). Cases they rated are never listed.
    """
    study = adjudicator.study
    names = {d.key: d.name for d in study.rubric.dimensions.all()}
    rows: dict[str, list[QueueRow]] = {"waiting": [], "decided": []}
    found = (
        adjudications_for(adjudicator=adjudicator)
        .select_related("test_case", "adjudicator")
        .order_by("created_at", "pk")
    )
    for adjudication in found:
        mine = adjudication.adjudicator_id == adjudicator.pk
        waiting = adjudication.status == Adjudication.Status.WAITING
        if not waiting and not mine:
            continue
        row = QueueRow(
            adjudication=adjudication,
            case_id=adjudication.test_case.case_id,
            dimensions=[names.get(key, key) for key in adjudication.triggers or {}],
            triggers=_trigger_words(adjudication.triggers),
            mine=mine,
            taken_by=getattr(
                adjudication_holder(adjudication=adjudication, membership=adjudicator),
                "pseudonym",
                "",
            ),
        )
        rows["waiting" if waiting else "decided"].append(row)
    return rows


@dataclass(frozen=True)
class RaterAnswers:
    pseudonym: str
    confidence: str
    notes: str
    # The rater's screen showed the pair the other way round: their notes and flag notes
    # call this page's Response B "Response A" (their answers are shown in key order).
    flipped: bool = False


@dataclass
class ComparedDimension:
    key: str
    name: str
    where: str  # "A", "B", ... or "" for a per-case dimension
    triggered: bool
    triggers: list[str]
    differs: bool
    answers: list[dict]  # each rater's answer as its kind displays it, in rater order
    resolved: dict | None = None  # the adjudicated answer, displayed


@dataclass
class AdjudicationScreen:
    responses: list[tuple[str, str, str]]  # (shown label, key label, text), key order
    raters: list[RaterAnswers]
    compared: list[ComparedDimension] = field(default_factory=list)


def adjudication_screen(*, adjudication: Adjudication, study: Study) -> AdjudicationScreen:
    """The pair as the key orders it, and the raters' submitted answers side by side."""
    rows = list(
        BlindedLabel.objects.filter(test_case_id=adjudication.test_case_id)
        .select_related("response")
        .order_by("label")
    )
    labels = [row.label for row in rows]
    assignments = list(
        Assignment.objects.filter(
            test_case_id=adjudication.test_case_id, status=Assignment.Status.SUBMITTED
        )
        .select_related("rater")
        .prefetch_related("ratings")
        .order_by("rater__pseudonym")
    )
    raters = [
        RaterAnswers(
            pseudonym=a.rater.pseudonym,
            confidence=a.get_confidence_display() if a.confidence else "",
            notes=a.notes,
            flipped=a.flipped,
        )
        for a in assignments
    ]
    scores = {a.pk: {r.label: r.scores for r in a.ratings.all()} for a in assignments}
    triggers = adjudication.triggers or {}
    trigger_names = dict(Adjudication.Trigger.choices)
    resolved = adjudication.answers or {}
    compared = []
    for dimension in study.rubric.scoring_dimensions():
        per_case = dimension.scope == "case"
        for where in [""] if per_case else labels:
            values = [
                dimension.key_ordered(
                    (a.case_scores or {}).get(dimension.key)
                    if per_case
                    else scores[a.pk].get(where, {}).get(dimension.key),
                    flipped=a.flipped,
                )
                for a in assignments
            ]
            answered = [v for v in values if dimension.answered(v)]
            differs = any(not dimension.same_answer(answered[0], v) for v in answered[1:])
            mine = (
                (resolved.get("case") or {}).get(dimension.key)
                if per_case
                else ((resolved.get("responses") or {}).get(where) or {}).get(dimension.key)
            )
            compared.append(
                ComparedDimension(
                    key=dimension.key,
                    name=dimension.name,
                    where=where,
                    triggered=dimension.key in triggers,
                    triggers=[trigger_names.get(t, t) for t in triggers.get(dimension.key, [])],
                    differs=differs or len(answered) != len(values),
                    answers=[dimension.display(v) for v in values],
                    resolved=dimension.display(mine) if mine is not None else None,
                )
            )
    return AdjudicationScreen(
        responses=[(row.label, row.label, row.response.text) for row in rows],
        raters=raters,
        compared=compared,
    )


def adjudication_outcomes(*, study: Study):
    """A study's adjudications that are decided, for the coordinators' list."""
    return (
        Adjudication.objects.filter(test_case__study=study)
        .exclude(status=Adjudication.Status.WAITING)
        .select_related("test_case", "adjudicator")
        .order_by("test_case__position")
    )


def adjudicator_memberships(*, user) -> list[tuple[Membership, int]]:
    """The studies the person adjudicates in, each with the number of cases waiting."""
    memberships = Membership.objects.filter(
        user=user, role=Membership.Role.ADJUDICATOR
    ).select_related("study")
    return [
        (
            membership,
            adjudications_for(adjudicator=membership)
            .filter(status=Adjudication.Status.WAITING)
            .count(),
        )
        for membership in memberships.order_by("study__name")
    ]

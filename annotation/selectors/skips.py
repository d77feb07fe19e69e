"""Skips counted apart from ratings: per case, per rater and per stratum, the cases left
short of the design's k, and raters who skip much of one stratum (a note, never a pause).

Nothing here names a system or a response: a skip belongs to a case.
"""

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, Q

from annotation.models import Assignment
from studies.models import Membership, Study, TestCase
from studies.selectors import skips_handed_on

# Raters whose assignments count towards a case's k: active ones, and paused ones (who may
# be reinstated). Withdrawn and excluded raters' cases are given to others; so are skips.
KEEPS_CASES = (Membership.Status.ACTIVE, Membership.Status.PAUSED)
# A rater is pointed out who skipped at least this many cases of one stratum, and at least
# this share of the cases of it they were given.
HEAVY_SKIPS = 3
HEAVY_SHARE = 0.5


# An assignment that holds a place among a case's k raters.
HOLDS_A_PLACE = Q(rater__role=Membership.Role.RATER, rater__status__in=KEEPS_CASES) & ~Q(
    status=Assignment.Status.SKIPPED
)


def case_places_taken(*, test_case_id: int, besides: int | None = None) -> int:
    """How many of the case's k places are held (active or paused raters, not skipped),
    leaving out the rater ``besides``."""
    taken = Assignment.objects.filter(HOLDS_A_PLACE, test_case_id=test_case_id)
    if besides is not None:
        taken = taken.exclude(rater_id=besides)
    return taken.count()


def sample_places_held(*, study: Study) -> Counter[int]:
    """Per sample case (by test case id): how many of its places are held; cases with
    none are absent. One query whatever the study's size."""
    rows = (
        Assignment.objects.filter(
            HOLDS_A_PLACE, test_case__study=study, test_case__purpose=TestCase.Purpose.SAMPLE
        )
        .values("test_case_id")
        .annotate(held=Count("pk"))
        .order_by()
        .values_list("test_case_id", "held")
    )
    return Counter(dict(rows))


@dataclass(frozen=True)
class HeavySkipper:
    rater: str
    stratum: str
    skipped: int
    assigned: int


@dataclass(frozen=True)
class SkipSummary:
    total: int = 0
    # (case id, stratum, skips), most skipped first.
    per_case: list[tuple[str, str, int]] = field(default_factory=list)
    per_rater: list[tuple[str, int]] = field(default_factory=list)
    per_stratum: list[tuple[str, int]] = field(default_factory=list)
    # Sample cases with a skip that have fewer raters left than the design gives a case.
    k_unmet: int = 0
    k: int | None = None
    heavy: list[HeavySkipper] = field(default_factory=list)
    # Skips by reason (Assignment.SkipReason label, or "No reason given").
    reasons: list[tuple[str, int]] = field(default_factory=list)
    # Whether the design gives a skipped case to another rater (``skips_handed_on``).
    handed_on: bool = True


def study_skip_summary(*, study: Study) -> SkipSummary:
    """The study's skips, counted; five queries whatever its size."""
    skips = list(
        Assignment.objects.filter(
            test_case__study=study,
            status=Assignment.Status.SKIPPED,
            rater__role=Membership.Role.RATER,
        ).values_list(
            "test_case_id",
            "test_case__case_id",
            "test_case__stratum",
            "rater__pseudonym",
            "skip_reason",
        )
    )
    handed_on = skips_handed_on(study=study)
    if not skips:
        return SkipSummary(k=study.raters_per_item, handed_on=handed_on)
    per_case = Counter((case_id, stratum) for _, case_id, stratum, _, _ in skips)
    per_rater = Counter(rater for *_, rater, _ in skips)
    per_stratum = Counter(stratum for _, _, stratum, _, _ in skips)
    labels = dict(Assignment.SkipReason.choices)
    reasons = Counter(labels.get(reason, "No reason given") for *_, reason in skips)
    k = (
        study.raters_per_item
        or study.memberships.filter(role=Membership.Role.RATER, status__in=KEEPS_CASES).count()
    )
    skipped_sample = set(
        TestCase.objects.filter(
            pk__in={pk for pk, *_ in skips}, purpose=TestCase.Purpose.SAMPLE
        ).values_list("pk", flat=True)
    )
    kept = Counter(
        Assignment.objects.filter(HOLDS_A_PLACE, test_case_id__in=skipped_sample).values_list(
            "test_case_id", flat=True
        )
    )
    short = sum(1 for pk in skipped_sample if kept[pk] < k)
    given = Counter(
        Assignment.objects.filter(
            test_case__study=study, rater__pseudonym__in=list(per_rater)
        ).values_list("rater__pseudonym", "test_case__stratum")
    )
    by_rater_stratum = Counter((rater, stratum) for _, _, stratum, rater, _ in skips)
    heavy = [
        HeavySkipper(rater=rater, stratum=stratum, skipped=count, assigned=given[rater, stratum])
        for (rater, stratum), count in sorted(by_rater_stratum.items())
        if count >= HEAVY_SKIPS and count >= HEAVY_SHARE * given[rater, stratum]
    ]
    return SkipSummary(
        total=len(skips),
        per_case=sorted(
            ((c, s, n) for (c, s), n in per_case.items()), key=lambda row: (-row[2], row[0])
        ),
        per_rater=sorted(per_rater.items()),
        per_stratum=sorted(per_stratum.items()),
        k_unmet=short,
        k=study.raters_per_item,
        heavy=heavy,
        reasons=sorted(reasons.items(), key=lambda row: (-row[1], row[0])),
        handed_on=handed_on,
    )

"""The adaptive design's write: one more rater for a case whose ratings disagree.

In the adaptive design (``Study.adaptive_raters``: k_min to k_max raters per case) the
assignment design plans k_min raters per case (``assignment.plan_balanced``). After each
recompute the worker asks which of the cases whose raters have all submitted disagree, by
each dimension's aggregation rule or the adjudication trigger
(``agreement.services.adaptive``), and calls ``adaptive_rater_add`` for each: the case gets
one more rater, until it has k_max.

Which rater: among the active raters who never had the case (a skip is never given back),
the one with the fewest cases still to rate, then the fewest cases in all; a shuffle
seeded by the study seed, the case and its number of raters breaks ties, so the choice is
reproducible. The new case goes at the end of the rater's queue; in the balanced side
design it is flipped when the rater has seen fewer flipped screens than not (a seeded
coin when even), which keeps each rater's sides within one of half.

Race-safety: the call names the number of raters it saw the case with (``places``). Under
the lock of the case's row it counts them again and adds nobody unless they are still that
many and all submitted, so two runs that saw the same k-th rating add one rater, not two.
Locks, in the order of ``studies.locks``: the study shared, the chosen rater's membership
exclusively (their queue's next position is theirs to take: two cases cannot give the
same rater the same position), then the case's row exclusively.
"""

import random

from django.db import transaction
from django.db.models import Count, Max, Q

from annotation.models import Assignment
from annotation.selectors.skips import HOLDS_A_PLACE
from studies.locks import membership_lock, study_lock
from studies.models import TAKES_NEW_CASES, Membership, Study, TestCase

OPEN = Q(assignments__status__in=[Assignment.Status.TODO, Assignment.Status.DRAFT])


def _candidates(*, study: Study, test_case: TestCase) -> list[Membership]:
    """The active raters who never had the case, the one to ask first first."""
    had = Assignment.objects.filter(test_case=test_case).values("rater_id")
    rows = list(
        study.memberships.filter(role=Membership.Role.RATER, status=Membership.Status.ACTIVE)
        .filter(TAKES_NEW_CASES)
        .exclude(pk__in=had)
        .annotate(still_open=Count("assignments", filter=OPEN), load=Count("assignments"))
        .order_by("pseudonym")
    )
    rng = random.Random(f"{study.blinding_seed}:adaptive:{test_case.case_id}")
    rng.shuffle(rows)
    counts = {row.pk: (row.still_open, row.load) for row in rows}
    return sorted(rows, key=lambda row: counts[row.pk])  # stable: ties stay shuffled


def _flipped(*, study: Study, rater: Membership, test_case: TestCase) -> bool:
    """The side of the new screen: in the balanced design, the rater's rarer side so far."""
    if study.side_mode != "balanced":
        return False
    sides = rater.assignments.filter(test_case__purpose=TestCase.Purpose.SAMPLE).aggregate(
        n_flipped=Count("pk", filter=Q(flipped=True)),
        n_shown=Count("pk", filter=Q(flipped=False)),
    )
    if sides["n_flipped"] != sides["n_shown"]:
        return sides["n_flipped"] < sides["n_shown"]
    rng = random.Random(
        f"{study.blinding_seed}:adaptive-side:{rater.pseudonym}:{test_case.case_id}"
    )
    return rng.random() < 0.5


@transaction.atomic
def adaptive_rater_add(*, study: Study, test_case_id: int, places: int) -> Assignment | None:
    """Give the case one more rater, if it still has ``places`` raters, all submitted, fewer
    than k_max, and an active rater who never had it exists; the new assignment or None."""
    study = study_lock(study.pk)
    design = study.adaptive_raters
    if design is None or not study.is_open or not design[0] <= places < design[1]:
        return None
    test_case = TestCase.objects.filter(
        pk=test_case_id, study=study, purpose=TestCase.Purpose.SAMPLE
    ).first()
    if test_case is None:
        return None
    candidates = _candidates(study=study, test_case=test_case)
    if not candidates:
        return None  # nobody left to ask: the case keeps the raters it has
    rater = membership_lock(candidates[0].pk, exclusive=True)
    if rater.status != Membership.Status.ACTIVE:
        return None  # paused or gone meanwhile: the next run asks someone else
    TestCase.objects.select_for_update(of=("self",), no_key=True).get(pk=test_case.pk)
    holders = Assignment.objects.filter(HOLDS_A_PLACE, test_case=test_case)
    counted = holders.aggregate(
        places=Count("pk"), submitted=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED))
    )
    if counted["places"] != places or counted["submitted"] != places:
        return None  # another run added the rater already, or a rating is still to come
    if Assignment.objects.filter(test_case=test_case, rater=rater).exists():
        return None
    last = rater.assignments.aggregate(last=Max("position"))["last"]
    return Assignment.objects.create(
        rater=rater,
        test_case=test_case,
        position=0 if last is None else last + 1,
        flipped=_flipped(study=study, rater=rater, test_case=test_case),
    )

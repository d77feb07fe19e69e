"""The assignments a rater is given: one row per test case, in an order shuffled from the
study seed, gold items and attention checks mixed in, half the screens flipped in a
balanced side design."""

from django.db import transaction

from annotation.models import Assignment
from studies.blinding import seeded_permutation
from studies.bulk_rows import rows_insert
from studies.models import Membership, Study, TestCase


@transaction.atomic
def assignments_create_all(*, study: Study, rater: Membership) -> list[int]:
    """Give a rater every test case of the sample, in an order shuffled from the study seed,
    with gold items and attention checks mixed in at the study's rates.

    In a balanced side design, half of the rater's screens (chosen by the same seeded
    shuffle, keyed ``sides:{pseudonym}``) show the responses in reverse order.
    """
    from .assignment import quality_cases_pick  # the design module builds on this one

    cases = {case.case_id: case for case in study.test_cases.all()}
    sample = [c for c, case in cases.items() if case.purpose == TestCase.Purpose.SAMPLE]
    extra = quality_cases_pick(study=study, rater=rater, sample_count=len(sample))
    return assignments_create(study=study, rater=rater, case_ids=sample + extra, cases=cases)


def assignments_create(
    *,
    study: Study,
    rater: Membership,
    case_ids: list[str],
    cases: dict | None = None,
    assigned: set[str] | None = None,
) -> list[int]:
    """Give a rater the named test cases (those not yet assigned), in a seeded order; returns
    the new assignments' ids.

    Gold items and attention checks among them are mixed in at seeded positions among the
    sample cases (``assignment.quality_mixed_order``): never first, never two in a row.
    ``assigned``, the case ids the rater has already, when the caller read them.
    """
    from .assignment import quality_mixed_order

    cases = cases or {c.case_id: c for c in study.test_cases.filter(case_id__in=case_ids)}
    if assigned is None:
        assigned = set(rater.assignments.values_list("test_case__case_id", flat=True))
    existing = assigned
    new_ids = [case_id for case_id in case_ids if case_id not in existing]
    sample_ids = [c for c in new_ids if cases[c].purpose == TestCase.Purpose.SAMPLE]
    quality_ids = [c for c in new_ids if cases[c].purpose != TestCase.Purpose.SAMPLE]
    order = seeded_permutation(
        seed=study.blinding_seed, key=f"order:{rater.pseudonym}", items=sample_ids
    )
    start = len(existing)  # one assignment per case: the rater's count of assignments
    if quality_ids:
        order = quality_mixed_order(
            sample=order,
            quality=seeded_permutation(
                seed=study.blinding_seed, key=f"quality:{rater.pseudonym}", items=quality_ids
            ),
            seed=study.blinding_seed,
            key=f"{rater.pseudonym}:{start}",
        )
    flipped = set()
    if study.side_mode == "balanced":
        sides = seeded_permutation(
            seed=study.blinding_seed, key=f"sides:{rater.pseudonym}", items=order
        )
        flipped = set(sides[: len(sides) // 2])
    # COPY on PostgreSQL: a 10,000-case study's 30,000 assignments in one pass each rater.
    return rows_insert(
        Assignment,
        [
            {
                "rater_id": rater.pk,
                "test_case_id": cases[case_id].pk,
                "position": start + index,
                "flipped": case_id in flipped,
            }
            for index, case_id in enumerate(order)
        ],
    )

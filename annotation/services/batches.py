"""Batches for crowd participants: a link with a batch size B gives each new participant B
sample cases when they join, and nothing after (``studies.models.TAKES_NEW_CASES`` keeps
them out of the design's planner and the hand-on of skipped cases).

The cases are those whose places are held (``selectors.skips.HOLDS_A_PLACE``) by fewest
raters, below the design's k (any count when every rater rates every case), ties broken by
the study seed and the case id; cases released by a time-out or a skip hold no place, so
they go to the next arrivals first. Both steps run inside the join's transaction, under
the study lock it holds exclusively (``studies.services.participants._join_new``), so two
arrivals cannot both take a case's last place.
"""

from annotation.selectors.imported import imported_ratings_held
from annotation.selectors.skips import sample_places_held
from studies.blinding import seeded_permutation
from studies.models import Membership, Study, TestCase

from .assignment import quality_cases_pick
from .participants import participants_time_out
from .ratings import assignments_create


def batch_cases_open(*, study: Study, have: frozenset[str] = frozenset()) -> list[str]:
    """The sample case ids a newcomer may be given, the ones to give first first."""
    if imported_ratings_held(study_id=study.pk):
        return []  # nobody is assigned cases there (``study_assign`` says why)
    sample = dict(
        study.test_cases.filter(purpose=TestCase.Purpose.SAMPLE).values_list("case_id", "pk")
    )
    held = sample_places_held(study=study)
    k = study.raters_per_item
    rank = {
        case_id: index
        for index, case_id in enumerate(
            seeded_permutation(seed=study.blinding_seed, key="batch", items=list(sample))
        )
    }
    open_cases = [
        case_id for case_id, pk in sample.items() if case_id not in have and (not k or held[pk] < k)
    ]
    return sorted(open_cases, key=lambda case_id: (held[sample[case_id]], rank[case_id]))


def participant_batch_room(*, study: Study) -> bool:
    """Whether a sample case has a place for a newcomer. When none has, the cases of the
    study's participants idle past their time-out are released first (the join's study
    lock is held, so this waits for nobody), and the newcomer may have those."""
    if batch_cases_open(study=study):
        return True
    return bool(participants_time_out(study_id=study.pk)) and bool(batch_cases_open(study=study))


def participant_batch_give(*, study: Study, rater: Membership, size: int) -> int:
    """Give the newcomer ``size`` sample cases (fewer when fewer are open) and their share
    of gold items and attention checks; returns the sample cases given."""
    cases = {
        case.case_id: case for case in study.test_cases.only("pk", "study", "case_id", "purpose")
    }
    have = set(rater.assignments.values_list("test_case__case_id", flat=True))
    chosen = batch_cases_open(study=study, have=frozenset(have))[:size]
    pools: dict[str, list[str]] = {}
    for case_id, case in cases.items():
        pools.setdefault(case.purpose, []).append(case_id)
    extra = quality_cases_pick(
        study=study, rater=rater, sample_count=len(chosen), have=have, pools=pools
    )
    if chosen or extra:
        assignments_create(
            study=study, rater=rater, case_ids=chosen + extra, cases=cases, assigned=have
        )
    return len(chosen)

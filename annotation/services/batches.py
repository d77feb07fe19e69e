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

import hashlib
import heapq

from django.db.models import Q

from annotation.selectors.imported import imported_ratings_held
from annotation.selectors.skips import sample_places_held
from studies.models import Membership, Study, TestCase

from .assignment import quality_cases_pick
from .assignment_rows import assignments_create
from .participants import participants_time_out


def _tie_break(seed: int, case_id: str) -> bytes:
    """The case's place among cases held by as many raters: from the study seed and the
    case id alone, so a case keeps its place whatever else the study holds."""
    return hashlib.blake2b(f"{seed}:batch:{case_id}".encode(), digest_size=8).digest()


def _places(study: Study, have: frozenset[str]) -> list[tuple[int, str]]:
    """(places held, case id) of the sample cases a newcomer may be given."""
    if imported_ratings_held(study_id=study.pk):
        return []  # nobody is assigned cases there (``study_assign`` says why)
    sample = study.test_cases.filter(purpose=TestCase.Purpose.SAMPLE).values_list("case_id", "pk")
    held = sample_places_held(study=study)
    k = study.raters_per_item
    return [
        (held[pk], case_id)
        for case_id, pk in sample
        if case_id not in have and (not k or held[pk] < k)
    ]


def batch_cases_open(*, study: Study, size: int, have: frozenset[str] = frozenset()) -> list[str]:
    """Up to ``size`` sample case ids for a newcomer: fewest places held first."""
    seed = study.blinding_seed
    chosen = heapq.nsmallest(
        size, _places(study, have), key=lambda row: (row[0], _tie_break(seed, row[1]))
    )
    return [case_id for _, case_id in chosen]


def participant_batch_room(*, study: Study) -> bool:
    """Whether a sample case has a place for a newcomer. When none has, the cases of the
    study's participants idle past their time-out are released first (the join's study
    lock is held, so this waits for nobody), and the newcomer may have those."""
    if _places(study, frozenset()):
        return True
    return bool(participants_time_out(study_id=study.pk)) and bool(_places(study, frozenset()))


def participant_batch_give(*, study: Study, rater: Membership, size: int) -> int:
    """Give the newcomer ``size`` sample cases (fewer when fewer are open) and their share
    of gold items and attention checks; returns the sample cases given."""
    have = set(rater.assignments.values_list("test_case__case_id", flat=True))
    chosen = batch_cases_open(study=study, size=size, have=frozenset(have))
    # The chosen cases and the quality items, not the whole sample (10,000 rows a join).
    wanted = Q(case_id__in=chosen) | ~Q(purpose=TestCase.Purpose.SAMPLE)
    cases = {
        case.case_id: case
        for case in study.test_cases.filter(wanted).only("pk", "study", "case_id", "purpose")
    }
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

"""Assignment designs: the planner's guarantees, the "Assign" action and its page."""

import hashlib
import json
import random
from collections import Counter
from itertools import combinations

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.services import assignment
from studies.blinding import seeded_permutation
from studies.models import Membership, Study, StudyEvent
from studies.services import membership_add

from ..factories import UserFactory, make_study

RATERS = [f"R-{n:02d}" for n in range(1, 13)]
CASES = [f"TC-{n:03d}" for n in range(1, 31)]


def pair_overlaps(assigned) -> dict[tuple[str, str], int]:
    """Number of cases each pair of raters shares, keyed by the sorted pair."""
    sets = {rater: set(cases) for rater, cases in assigned.items()}
    return {(a, b): len(sets[a] & sets[b]) for a, b in combinations(sorted(sets), 2)}


def check_design(plan, *, cases, k):
    per_case = Counter(case for assigned in plan.values() for case in assigned)
    assert per_case == dict.fromkeys(cases, k), "every case gets exactly k raters"
    for assigned in plan.values():
        assert len(assigned) == len(set(assigned)), "no rater gets a case twice"
    loads = [len(assigned) for assigned in plan.values()]
    assert max(loads) - min(loads) <= 1, "loads differ by at most one"


@pytest.mark.parametrize(
    ("raters", "cases", "k"),
    [(3, 18, 2), (4, 18, 2), (6, 18, 2), (5, 18, 3), (6, 10, 3), (8, 30, 3), (10, 30, 4),
     (12, 30, 5), (4, 18, 4), (5, 10, 2)],
)  # fmt: skip
def test_balanced_plan_has_k_raters_per_case_even_loads_and_shared_items(raters, cases, k):
    names, ids = RATERS[:raters], CASES[:cases]
    plan = assignment.plan_balanced(raters=names, cases=ids, k=k, seed=42)
    check_design(plan, cases=ids, k=k)
    assert min(pair_overlaps(plan).values()) >= 1, "every pair shares a case"


@pytest.mark.parametrize(
    ("raters", "cases", "k"),
    [(4, 6, 2), (6, 15, 2), (7, 7, 3), (9, 12, 3)],  # the last two: Fano plane, affine plane
)
def test_overlap_is_spread_evenly_when_a_perfect_design_exists(raters, cases, k):
    """Just enough cases for every pair to meet once: every pair meets exactly once."""
    plan = assignment.plan_balanced(raters=RATERS[:raters], cases=CASES[:cases], k=k, seed=42)
    check_design(plan, cases=CASES[:cases], k=k)
    assert set(pair_overlaps(plan).values()) == {1}


def test_infeasible_overlap_still_keeps_k_and_loads():
    """Twelve raters, 18 cases of 3: too few cases for every pair to meet."""
    plan = assignment.plan_balanced(raters=RATERS, cases=CASES[:18], k=3, seed=42)
    check_design(plan, cases=CASES[:18], k=3)


def test_plan_is_reproducible_from_the_seed():
    first = assignment.plan_balanced(raters=RATERS[:6], cases=CASES[:18], k=2, seed=42)
    again = assignment.plan_balanced(raters=RATERS[:6], cases=CASES[:18], k=2, seed=42)
    other = assignment.plan_balanced(raters=RATERS[:6], cases=CASES[:18], k=2, seed=7)
    assert first == again and first != other


def test_existing_assignments_are_kept_and_topped_up():
    existing = {"R-01": {"TC-001", "TC-002"}, "R-02": {"TC-001"}, "R-09": {"TC-002"}}
    plan = assignment.plan_balanced(
        raters=RATERS[:4], cases=CASES[:4], k=2, seed=42, existing=existing
    )
    combined = {r: set(plan.get(r, [])) | existing.get(r, set()) for r in set(plan) | set(existing)}
    check_design({r: sorted(c) for r, c in combined.items() if r != "R-09"} | {"R-09": ["TC-002"]},
                 cases=CASES[:4], k=2)  # fmt: skip
    assert "TC-001" not in sum(plan.values(), [])  # already had two raters
    assert "R-09" not in plan  # a paused rater gets nothing new


def test_impossible_designs_are_refused():
    with pytest.raises(assignment.AssignmentDesignError, match="needs 3 raters"):
        assignment.plan_balanced(raters=RATERS[:2], cases=CASES[:4], k=3, seed=42)
    with pytest.raises(assignment.AssignmentDesignError):
        assignment.plan_balanced(raters=RATERS[:2], cases=CASES[:4], k=0, seed=42)


def plan_fingerprint(plan) -> str:
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    ("raters", "cases", "k", "seed", "existing", "fingerprint"),
    [
        (RATERS, CASES, 3, 42, None, "91166072c788c0bd"),
        (RATERS[:8], CASES, 3, 7,
         {"R-01": {"TC-001", "TC-002", "TC-010"}, "R-02": {"TC-001"}, "R-13": {"TC-002", "TC-003"}},
         "24d3a498c8adcb25"),
        ([f"R{i:03d}" for i in range(40)], [f"C{i:04d}" for i in range(3000)], 3, 2026, None,
         "db40349356a576f6"),
    ],
)  # fmt: skip
def test_plans_do_not_change_for_a_given_seed(raters, cases, k, seed, existing, fingerprint):
    """Fingerprints of plans made before the planner was made faster: a study's plan for its
    seed is part of its protocol, so a faster planner must give the same one."""
    plan = assignment.plan_balanced(raters=raters, cases=cases, k=k, seed=seed, existing=existing)
    assert plan_fingerprint(plan) == fingerprint


@pytest.mark.parametrize("length", [0, 1, 2, 3, 7, 64, 100, 257])
def test_the_planners_shuffle_is_randoms_own(length):
    """Same permutation and the same draws consumed as ``random.Random.shuffle``."""
    ours, theirs = random.Random(f"s:{length}"), random.Random(f"s:{length}")
    mine, reference = list(range(length)), list(range(length))
    assignment._shuffle(ours, mine)
    theirs.shuffle(reference)
    assert mine == reference and ours.random() == theirs.random()


def test_the_plan_reports_its_progress_without_changing():
    cases = [f"C{i:04d}" for i in range(1200)]
    seen = []
    plan = assignment.plan_balanced(raters=RATERS, cases=cases, k=3, seed=5, progress=seen.append)
    assert seen == [500, 1000]
    assert plan == assignment.plan_balanced(raters=RATERS, cases=cases, k=3, seed=5)


def test_full_plan_gives_every_missing_case():
    plan = assignment.plan_full(raters=["R-01", "R-02"], cases=CASES[:3],
                                existing={"R-01": {"TC-002"}})  # fmt: skip
    assert plan == {"R-01": ["TC-001", "TC-003"], "R-02": CASES[:3]}


# The service -----------------------------------------------------------------------------


def raters_only_study(raters=4, cases=6, **settings):
    study = make_study(cases=cases, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(**settings)
    study.refresh_from_db()
    for _ in range(raters):
        membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    return study


@pytest.mark.django_db
def test_assign_in_the_reference_design_gives_everyone_everything_once():
    study = raters_only_study(raters=3, cases=5)
    created = assignment.study_assign(study=study, actor=study.lead)
    assert created == {"R-01": 5, "R-02": 5, "R-03": 5}
    assert assignment.study_assign(study=study, actor=study.lead) == {}
    assert Assignment.objects.filter(test_case__study=study).count() == 15
    assert StudyEvent.objects.filter(study=study, kind="raters_assigned").count() == 1


@pytest.mark.django_db
def test_assign_in_the_balanced_design_with_seeded_order_and_flipped_sides():
    study = raters_only_study(raters=4, cases=6, raters_per_item=2, side_mode="balanced")
    created = assignment.study_assign(study=study, actor=study.lead)
    assert sum(created.values()) == 12 and set(created.values()) == {3}
    per_case = Counter(
        Assignment.objects.filter(test_case__study=study).values_list(
            "test_case__case_id", flat=True
        )
    )
    assert set(per_case.values()) == {2}
    for rater in study.memberships.filter(role="rater"):
        mine = list(rater.assignments.order_by("position").select_related("test_case"))
        ids = [a.test_case.case_id for a in mine]
        assert ids == seeded_permutation(seed=42, key=f"order:{rater.pseudonym}", items=ids)
        assert sum(a.flipped for a in mine) == len(mine) // 2
    assert assignment.study_assign(study=study, actor=study.lead) == {}


@pytest.mark.django_db
def test_assign_replaces_an_excluded_rater_and_skips_inactive_ones():
    study = raters_only_study(raters=3, cases=4, raters_per_item=2)
    assignment.study_assign(study=study, actor=None)
    leaving = study.memberships.get(pseudonym="R-01")
    their_cases = set(leaving.assignments.values_list("test_case__case_id", flat=True))
    Membership.objects.filter(pk=leaving.pk).update(status=Membership.Status.EXCLUDED)
    membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    created = assignment.study_assign(study=study, actor=None)
    assert "R-01" not in created
    active = Assignment.objects.filter(test_case__study=study, rater__status="active")
    per_case = Counter(active.values_list("test_case__case_id", flat=True))
    assert per_case == dict.fromkeys([f"TC-{n:03d}" for n in range(1, 5)], 2)
    assert sum(created.values()) == len(their_cases)


@pytest.mark.django_db
def test_assign_refuses_closed_studies_and_studies_without_raters():
    empty = raters_only_study(raters=0)
    with pytest.raises(assignment.AssignmentDesignError, match="no active raters"):
        assignment.study_assign(study=empty, actor=None)
    study = raters_only_study(raters=2)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    with pytest.raises(assignment.AssignmentDesignError, match="closed"):
        assignment.study_assign(study=study, actor=None)
    assert not Assignment.objects.filter(test_case__study=study).exists()


# The page --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_assign_button_assigns_and_reports(client):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    client.force_login(study.lead)
    page = client.get(reverse("annotation:raters", args=[study.slug]))
    assert "No cases yet for R-01, R-02, R-03, R-04." in page.text
    assert "2 raters per test case, balanced" in page.text
    response = client.post(reverse("annotation:assign", args=[study.slug]), follow=True)
    assert "12 cases assigned to 4 raters." in response.text
    assert "Every pair of active raters shares" in response.text
    assert "0 / 3" in response.text
    again = client.post(reverse("annotation:assign", args=[study.slug]), follow=True)
    assert "nothing changed" in again.text


@pytest.mark.django_db
def test_assign_button_explains_a_refusal(client):
    study = raters_only_study(raters=1, cases=3, raters_per_item=2)
    client.force_login(study.lead)
    response = client.post(reverse("annotation:assign", args=[study.slug]), follow=True)
    assert "needs 2 raters per test case but the study has 1 rater." in response.text
    assert not Assignment.objects.exists()


@pytest.mark.django_db
def test_assignments_written_in_bulk_are_rows_like_any_other():
    # On PostgreSQL assignments are written with COPY: the defaults a model fills in (a
    # fresh uuid each, empty answers, the time of writing) must be there all the same.
    users = [UserFactory() for _ in range(3)]
    study = make_study(cases=6, raters=users)
    rows = list(
        Assignment.objects.filter(test_case__study=study).values(
            "uuid", "status", "draft", "case_scores", "version", "notes", "updated_at", "source"
        )
    )
    assert len(rows) == 18
    assert len({row["uuid"] for row in rows}) == 18
    for row in rows:
        assert row["status"] == Assignment.Status.TODO
        assert row["draft"] == {} and row["case_scores"] == {}
        assert row["version"] == 0 and row["notes"] == ""
        assert row["source"] == Assignment.Source.SCREEN
        assert row["updated_at"] is not None
    assignment = Assignment.objects.filter(test_case__study=study).first()
    assignment.draft = {"notes": "kept"}
    assignment.save()
    assignment.refresh_from_db()
    assert assignment.draft == {"notes": "kept"}


@pytest.mark.django_db
@pytest.mark.parametrize(("raters", "cases", "k"), [(6, 12, 2), (5, 9, 3), (3, 4, None)])
def test_the_raters_pages_overlap_range_is_the_pairs_overlaps(raters, cases, k):
    """The page's count against every pair's shared cases counted from their sets."""
    from annotation.selectors import rater_pair_overlap_range

    study = raters_only_study(raters=raters, cases=cases, raters_per_item=k)
    assignment.study_assign(study=study, actor=study.lead)
    active = list(study.memberships.filter(role=Membership.Role.RATER))
    overlaps = pair_overlaps(assignment.assigned_case_sets(study=study)).values()
    assert rater_pair_overlap_range(raters=active) == (min(overlaps), max(overlaps))
    assert rater_pair_overlap_range(raters=active[:1]) is None


@pytest.mark.parametrize("seed", range(8))
def test_the_overlap_range_equals_set_intersections_by_every_count(seed):
    """Random designs (a few raters on many cases, many raters on few, some raters with no
    case, pairs sharing nothing): the dense product, the count of each case's pairs and the
    product in small blocks all give the fewest and the most cases two raters
    share, as every pair's intersection of case sets does."""
    import itertools
    import random

    from annotation.selectors.overlap import pair_overlap_range

    rng = random.Random(seed)
    n_raters, n_cases = rng.randint(2, 40), rng.randint(1, 300)
    share = rng.choice([0.1, 0.5, 1.0])
    sets = [
        set(rng.sample(range(10_000, 10_000 + n_cases), int(rng.randint(0, n_cases) * share)))
        if rng.random() > 0.1
        else set()
        for _ in range(n_raters)
    ]
    rows = [(rater, case) for rater, cases in enumerate(sets) for case in cases]
    raters, cases = [r for r, _ in rows], [c for _, c in rows]
    overlaps = [len(a & b) for a, b in itertools.combinations(sets, 2)]
    expected = (min(overlaps), max(overlaps))
    assert pair_overlap_range(raters, cases, n_raters) == expected
    by_pairs = pair_overlap_range(raters, cases, n_raters, dense_limit=0, dense_per_pair=0)
    assert by_pairs == expected
    # The product in blocks of a few raters and a few cases.
    assert pair_overlap_range(raters, cases, n_raters, dense_cells=n_raters * 3) == expected


def test_the_overlap_range_takes_the_product_when_every_rater_has_every_case(monkeypatch):
    """Many raters on every case, above the product's limit: counting each case's pairs
    would be more work than the product (as many pairs as the product has cells), so the
    product counts them. Seen by what counting the pairs needs (each case's pairs of raters)."""
    import numpy as np

    from annotation.selectors import overlap

    def pairs_refused(size, k):
        raise AssertionError(f"counted by pairs: {size} raters on a case")

    monkeypatch.setattr(np, "triu_indices", pairs_refused)
    n_raters, n_cases = 40, 30
    raters = np.tile(np.arange(n_raters), n_cases)
    cases = np.repeat(np.arange(n_cases) + 500, n_raters)
    found = overlap.pair_overlap_range(raters, cases, n_raters, dense_limit=n_raters * n_raters)
    assert found == (n_cases, n_cases)

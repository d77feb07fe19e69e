"""Assignment designs: which rater rates which test case.

Two designs, chosen by ``Study.raters_per_item`` (and a third built on the second, the
adaptive design of ``Study.raters_per_item_max``: k_min planned here, extra raters added by
``annotation.services.adaptive``):

- **Full** (empty): every rater rates every test case, the reference design.
- **Balanced, k raters per test case**: planned by ``plan_balanced`` below. Every test case
  gets exactly k different raters, every rater's load is within one case of every other's,
  and the pairs of raters that share test cases are spread as evenly as possible, so that
  every pair shares at least one case whenever the numbers allow it (agreement between two
  raters needs items both rated).

The balanced planner is a greedy pass followed by a local search, repeated from a few
seeded starting points:

1. Visit the test cases in an order shuffled from the study seed.
2. For each case, pick its raters one at a time, always among the raters with the lowest
   load so far (this alone keeps loads within one of each other: the k least-loaded raters
   get each case). Among those, take the rater who has so far shared the fewest cases with
   the raters already on this case; the seeded shuffle breaks remaining ties.
3. Improve the plan with moves that keep every case's k and every rater's load: swap two
   raters between two cases, or hand a case to a rater with one case fewer. A move is kept
   unless it raises the number of rater pairs that share no case, or keeps that number and
   raises the sum of squared pair overlaps (the same total overlap, spread more evenly).
4. Score each plan by the smallest number of cases any pair of raters shares (higher is
   better), then by the sum of squared overlaps (lower is better); keep the best. Stop early
   once a plan reaches the best conceivable score, where every pair shares floor(P / N) or
   ceil(P / N) cases (P = pairs of raters on the same case, summed over cases; N = pairs).

The search is a heuristic, deterministic for a given seed (``random.Random`` seeded with the
text ``"{seed}:design:{attempt}"``). Every pair of raters can share a case only if
P >= N (and each rater must be on enough cases to meet everyone); whenever P >= 2N the
planner gives every pair at least one shared case (checked for up to 10 raters and 30 cases).

Gold items and attention checks (test cases whose purpose is not the sample) are not
planned with the sample: each rater gets their own share of them at the study's rates
(``quality_cases_pick``), a gold item at most once, mixed into their queue at seeded
positions (``quality_mixed_order``): never the first item, never two in a row.

Planning is idempotent in use: existing assignments are kept and count towards each case's
k, so running "Assign" again only tops cases up (e.g. after a rater was excluded); loads are
exactly balanced for a plan made in one go. Each rater's order of items and, in the balanced
side design, which screens are flipped, come from ``annotation.services.assignments_create``.

The planning functions import nothing from Django; ``study_assign`` at the end is the
service that applies a plan to a study.
"""

import random
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import timedelta
from itertools import combinations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Assignment
from annotation.selectors.imported import imported_ratings_held
from annotation.selectors.skips import KEEPS_CASES
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import TAKES_NEW_CASES, Membership, Study, StudyEvent, TestCase
from studies.services.quality import quality_settings_for

from .assignment_rows import assignments_create

MAX_ATTEMPTS = 8
MAX_STEPS = 20_000
# Rough number of inner steps the planner may spend over all attempts.
WORK_BUDGET = 400_000
# How often (in cases planned) the greedy pass tells a caller how far it has come.
PROGRESS_EVERY = 500


class AssignmentDesignError(ApplicationError):
    """The design cannot be made; the message says why."""


def plan_full(
    *, raters: Sequence[str], cases: Sequence[str], existing: Mapping[str, Collection[str]]
) -> dict[str, list[str]]:
    """Every rater gets every case they do not have yet, in the given case order."""
    plan = {}
    for rater in raters:
        have = set(existing.get(rater, ()))
        plan[rater] = [c for c in cases if c not in have]
    return plan


def best_possible_overlap(*, raters: int, cases: int, k: int) -> tuple[int, int]:
    """(smallest pair overlap, sum of squared overlaps) of an ideal plan."""
    pairs = raters * (raters - 1) // 2
    if pairs == 0:
        return 0, 0
    slots = cases * k * (k - 1) // 2
    quotient, remainder = divmod(slots, pairs)
    return quotient, remainder * (quotient + 1) ** 2 + (pairs - remainder) * quotient**2


def plan_balanced(
    *,
    raters: Sequence[str],
    cases: Sequence[str],
    k: int,
    seed: int,
    existing: Mapping[str, Collection[str]] | None = None,
    progress: Callable[[int], None] | None = None,
    skipped: Mapping[str, Collection[str]] | None = None,
) -> dict[str, list[str]]:
    """New cases for each rater so that every case has k raters; see the module docstring.

    ``existing`` maps raters (including ones not in ``raters``, e.g. paused raters who get
    nothing new) to the cases they already have; those assignments are never moved.
    ``skipped`` maps raters to the cases they skipped: never given to them again, and not
    counted towards the case's k.
    ``progress`` is told the cases planned so far by the first greedy pass (a large study
    makes only that one).
    """
    raters = sorted(raters)
    existing = {r: set(c) for r, c in (existing or {}).items()}
    if k < 1:
        raise AssignmentDesignError("Raters per test case must be at least 1.")
    available = set(raters) | set(existing)
    if k > len(available):
        raise AssignmentDesignError(
            f"The design needs {k} raters per test case but the study has {len(available)} "
            f"rater{'s' if len(available) != 1 else ''}."
        )
    work = max(1, len(cases) * max(1, len(raters)) * k)
    attempts = max(1, min(MAX_ATTEMPTS, WORK_BUDGET // work))
    target = best_possible_overlap(raters=len(raters), cases=len(cases), k=k)
    best: _Plan | None = None
    for attempt in range(attempts):
        rng = random.Random(f"{seed}:design:{attempt}")
        plan = _Plan(raters=raters, cases=cases, existing=existing, skipped=skipped or {})
        plan.fill(k=k, rng=rng, progress=progress if attempt == 0 else None)
        plan.improve(rng=rng, steps=min(MAX_STEPS, WORK_BUDGET // attempts))
        if best is None or plan.quality() > best.quality():
            best = plan
        if not any(existing.values()) and best.quality() == (target[0], -target[1]):
            break
    assert best is not None
    return best.new_cases()


class _Plan:
    """Mutable planning state: who is on each case, loads, and pair overlaps."""

    def __init__(
        self,
        *,
        raters: list[str],
        cases: Sequence[str],
        existing: dict,
        skipped: Mapping[str, Collection[str]] | None = None,
    ):
        self.raters = raters
        self.cases = list(cases)
        self.index = {r: i for i, r in enumerate(raters)}
        self.load = [len(existing.get(r, ())) for r in raters]
        self.shared = [[0] * len(raters) for _ in raters]
        # Per case: the number of raters kept from before, and the planned (movable) ones.
        self.fixed = {c: 0 for c in self.cases}
        self.fixed_members: dict[str, list[int]] = {c: [] for c in self.cases}
        self.planned: dict[str, list[int]] = {c: [] for c in self.cases}
        self.taken: dict[str, set[str]] = {c: set() for c in self.cases}
        for rater, their_cases in existing.items():
            for case in their_cases:
                if case in self.fixed:
                    self.fixed[case] += 1
                    self.taken[case].add(rater)
                    if rater in self.index:
                        self.fixed_members[case].append(self.index[rater])
        for rater, their_cases in (skipped or {}).items():
            for case in their_cases:
                if case in self.taken:
                    self.taken[case].add(rater)
        for members in self.fixed_members.values():
            for a, b in combinations(members, 2):
                self._pair(a, b, 1)

    def _pair(self, a: int, b: int, step: int) -> None:
        self.shared[a][b] += step
        self.shared[b][a] += step

    def members(self, case: str) -> list[int]:
        return self.fixed_members[case] + self.planned[case]

    def fill(
        self, *, k: int, rng: random.Random, progress: Callable[[int], None] | None = None
    ) -> None:
        """Greedy: give each case its missing raters, least loaded first.

        ``progress`` is told the number of cases planned every ``PROGRESS_EVERY`` cases.
        """
        order = list(self.cases)
        rng.shuffle(order)
        everyone = list(range(len(self.raters)))
        for done, case in enumerate(order, 1):
            need = k - self.fixed[case]
            taken = self.taken[case]
            # The raters are sorted and indexed in that order: the same pool, built faster
            # when nobody has the case yet (a plan made in one go).
            pool = [i for i in everyone if self.raters[i] not in taken] if taken else everyone[:]
            if need > len(pool):
                raise AssignmentDesignError(
                    f"Not enough raters to give {case} {k} raters; add raters or lower k."
                )
            _shuffle(rng, pool)
            members = self.members(case)
            for _ in range(max(0, need)):
                pick = self._least_loaded(pool, members)
                self._join(case, pick)
                members.append(pick)
                pool.remove(pick)
            if progress is not None and done % PROGRESS_EVERY == 0:
                progress(done)

    def _least_loaded(self, pool: list[int], members: list[int]) -> int:
        """The first rater in ``pool`` with the lowest load and, among those, the fewest
        cases shared with ``members`` (a 10,000-case study asks 30,000 times)."""
        load = self.load
        low = min(map(load.__getitem__, pool))
        if not members:
            return next(i for i in pool if load[i] == low)
        candidates = [i for i in pool if load[i] == low]
        # ``shared`` is symmetric: a member's row holds every candidate's overlap with it.
        rows = [self.shared[m] for m in members]
        if len(rows) == 1:
            (row,) = rows
            overlaps = [row[i] for i in candidates]
        elif len(rows) == 2:
            first, second = rows
            overlaps = [first[i] + second[i] for i in candidates]
        else:
            overlaps = [sum(row[i] for row in rows) for i in candidates]
        return candidates[overlaps.index(min(overlaps))]

    def _join(self, case: str, rater: int) -> tuple[int, int]:
        """Put a rater on a case; returns the change in (pairs sharing nothing, sum of squares)."""
        zeros = squares = 0
        for m in self.members(case):
            x = self.shared[rater][m]
            zeros -= x == 0
            squares += 2 * x + 1
            self._pair(rater, m, 1)
        self.planned[case].append(rater)
        self.load[rater] += 1
        return zeros, squares

    def _leave(self, case: str, rater: int) -> tuple[int, int]:
        self.planned[case].remove(rater)
        self.load[rater] -= 1
        zeros = squares = 0
        for m in self.members(case):
            x = self.shared[rater][m]
            zeros += x == 1
            squares -= 2 * x - 1
            self._pair(rater, m, -1)
        return zeros, squares

    def improve(self, *, rng: random.Random, steps: int) -> None:
        """Hill-climb with moves that keep every case's k and every rater's load.

        A move swaps two raters between two cases (a leaves c1 for c2, b leaves c2 for c1),
        or hands a case from a rater to one with one case fewer. It is kept when it lowers
        the number of pairs sharing nothing, or keeps that and does not raise the sum of
        squared overlaps (equal moves let the search walk across plateaus).
        """
        movable = [c for c in self.cases if self.planned[c]]
        if not movable or len(self.raters) < 2:
            return
        for _ in range(steps):
            c1 = rng.choice(movable)
            a = rng.choice(self.planned[c1])
            on_c1 = set(self.members(c1))
            if rng.random() < 0.5:
                c2 = rng.choice(movable)
                if c2 == c1 or a in self.members(c2):
                    continue
                options = [b for b in self.planned[c2] if b not in on_c1]
                if not options:
                    continue
                b = rng.choice(options)
                moves: list[tuple[int, str | None, str | None]] = [(a, c1, c2), (b, c2, c1)]
            else:
                fewer = self.load[a] - 1
                options = [
                    b for b, load in enumerate(self.load) if load == fewer and b not in on_c1
                ]
                if not options:
                    continue
                b = rng.choice(options)
                moves = [(a, c1, None), (b, None, c1)]
            if _worse(self._apply(moves)):
                self._apply([(rater, to, came) for rater, came, to in moves])

    def _apply(self, moves: list[tuple[int, str | None, str | None]]) -> tuple[int, int]:
        """Move raters (rater, from case or None, to case or None): all leave, then all join."""
        change = (0, 0)
        for rater, source, _ in moves:
            if source is not None:
                change = _add(change, self._leave(source, rater))
        for rater, _, target in moves:
            if target is not None:
                change = _add(change, self._join(target, rater))
        return change

    def quality(self) -> tuple[int, int]:
        """(smallest pair overlap, minus the sum of squared overlaps): higher is better."""
        overlaps = [self.shared[a][b] for a, b in combinations(range(len(self.raters)), 2)]
        if not overlaps:
            return 0, 0
        return min(overlaps), -sum(v * v for v in overlaps)

    def new_cases(self) -> dict[str, list[str]]:
        plan: dict[str, list[str]] = {r: [] for r in self.raters}
        for case in self.cases:  # in the given order
            for i in self.planned[case]:
                plan[self.raters[i]].append(case)
        return plan


def _shuffle(rng: random.Random, items: list) -> None:
    """``rng.shuffle(items)``, the same permutation from the same draws, with the calls
    inlined: the planner shuffles its rater pool once per case."""
    getrandbits = rng.getrandbits
    for i in reversed(range(1, len(items))):
        n = i + 1
        bits = n.bit_length()
        j = getrandbits(bits)
        while j >= n:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] + b[0], a[1] + b[1]


def _worse(change: tuple[int, int]) -> bool:
    """More pairs sharing nothing, or as many and a larger sum of squared overlaps."""
    return change > (0, 0)


def quality_mixed_order(
    *, sample: Sequence[str], quality: Sequence[str], seed: int, key: str
) -> list[str]:
    """The sample cases in their order with the quality items placed among them.

    Each quality item goes right after a different sample case, chosen from the seeded
    stream: so none comes first and no two come in a row (the next batch of a top-up
    starts with a sample case again). Items beyond the number of sample cases are left out.
    """
    rng = random.Random(f"{seed}:quality-slots:{key}")
    count = min(len(quality), len(sample))
    slots = dict(zip(sorted(rng.sample(range(len(sample)), count)), quality, strict=False))
    order = []
    for index, case in enumerate(sample):
        order.append(case)
        if index in slots:
            order.append(slots[index])
    return order


def quality_counts(*, sample_count: int, gold_percent: int, attention_every: int) -> tuple:
    """(gold items, attention checks) for a rater with this many sample cases.

    Gold items make up ``gold_percent`` of all their screens (10% of 50 screens: 45 sample
    cases and 5 gold items); attention checks come once per ``attention_every`` items,
    rounded to the nearest whole check.
    """
    gold = 0
    if 0 < gold_percent < 100:
        gold = int(sample_count * gold_percent / (100 - gold_percent) + 0.5)
    attention = int(sample_count / attention_every + 0.5) if attention_every else 0
    return gold, attention


def quality_cases_pick(
    *,
    study: Study,
    rater: Membership,
    sample_count: int,
    have: set[str] | None = None,
    pools: dict | None = None,
    settings=None,
) -> list[str]:
    """The gold items and attention checks to add to a rater's queue, given their sample
    cases in total: seeded, never one they already have, topping up to the study's rates.

    ``have`` (the rater's case ids), ``pools`` (case ids by purpose) and ``settings`` may be
    read once by a caller that picks for many raters."""
    settings = settings or quality_settings_for(study=study)
    gold_wanted, attention_wanted = quality_counts(
        sample_count=sample_count,
        gold_percent=settings.gold_percent,
        attention_every=settings.attention_every,
    )
    if have is None:
        have = set(rater.assignments.values_list("test_case__case_id", flat=True))
    picked = []
    for purpose, wanted in (
        (TestCase.Purpose.GOLD, gold_wanted),
        (TestCase.Purpose.ATTENTION, attention_wanted),
    ):
        if pools is not None:
            pool = list(pools.get(purpose, ()))
        else:
            pool = list(study.test_cases.filter(purpose=purpose).values_list("case_id", flat=True))
        missing = wanted - len(have.intersection(pool))
        fresh = [case for case in pool if case not in have]
        order = random.Random(f"{study.blinding_seed}:{purpose}:{rater.pseudonym}")
        fresh.sort()
        order.shuffle(fresh)
        picked.extend(fresh[: max(0, missing)])
    return picked


def cases_beyond_design(*, study: Study, rater: Membership, test_case_ids) -> list[str]:
    """The case ids, of the test cases named, that already have their k raters besides ``rater``.

    Empty in the full design. Called under the study and rater locks; the test cases named
    are locked here (in id order, after the rater: ``studies.locks``), so two raters cannot
    both take a case's last place.
    """
    k = study.raters_per_item
    if not k:
        return []
    cases = list(
        study.test_cases.select_for_update(of=("self",), no_key=True)
        .filter(pk__in=test_case_ids)
        .order_by("pk")
    )
    taken = Counter(
        Assignment.objects.filter(
            test_case__in=cases,
            rater__role=Membership.Role.RATER,
            rater__status__in=KEEPS_CASES,
        )
        .exclude(rater=rater)
        .exclude(status=Assignment.Status.SKIPPED)  # a skip leaves its place free
        .values_list("test_case_id", flat=True)
    )
    return sorted(case.case_id for case in cases if taken[case.pk] >= k)


def design_summary(*, study: Study) -> str:
    adaptive = study.adaptive_raters
    if adaptive:
        return (
            f"{adaptive[0]} to {adaptive[1]} raters per test case, adaptive: {adaptive[0]} "
            "balanced, one more where the ratings disagree"
        )
    if study.raters_per_item:
        return f"{study.raters_per_item} raters per test case, balanced"
    return "Every rater rates every test case"


def assigned_case_sets(*, study: Study, skipped: bool | None = None) -> dict[str, set[str]]:
    """Each rater's assigned case ids, keyed by pseudonym; only the skipped ones
    (``skipped=True``) or only the others (``False``)."""
    sets: dict[str, set[str]] = {}
    rows = Assignment.objects.filter(test_case__study=study, rater__role=Membership.Role.RATER)
    if skipped is not None:
        is_skipped = Q(status=Assignment.Status.SKIPPED)
        rows = rows.filter(is_skipped if skipped else ~is_skipped)
    pairs = rows.values_list("rater__pseudonym", "test_case__case_id")
    for pseudonym, case_id in pairs.iterator():
        sets.setdefault(pseudonym, set()).add(case_id)
    return sets


@transaction.atomic
def study_assign(
    *, study: Study, actor=None, progress: Callable[[str, int, int], None] | None = None
) -> dict[str, int]:
    """Create the study's missing assignments under its design; returns new cases per rater.

    Idempotent: cases already assigned are kept, so a second run creates nothing.
    ``progress(stage, done, total)`` is told how far it has come: "planning" (test cases
    planned), then "writing" (raters whose assignments are written); a job reports it
    (``annotation.assignment_jobs``).
    """
    tell = progress or (lambda stage, done, total: None)
    # Lock the study so that two clicks on "Assign" cannot plan against the same state.
    study = study_lock(study.pk, exclusive=True)
    if study.is_closed:
        raise AssignmentDesignError("The study is closed; assignments can no longer change.")
    if imported_ratings_held(study_id=study.pk):
        raise AssignmentDesignError(
            "This study holds ratings imported from elsewhere by system name, so no cases "
            "are assigned to raters in Concord: their ratings would sit beside the imported "
            "ones, whose statistics by response label would show which system each label "
            "stands for."
        )
    memberships = list(
        study.memberships.filter(
            role=Membership.Role.RATER,
            status__in=KEEPS_CASES,
        ).order_by("pseudonym")
    )
    # A crowd participant who has finished (completed, screened out, timed out) gets
    # nothing new; their assignments still count where they hold a place.
    taking = set(study.memberships.filter(TAKES_NEW_CASES).values_list("pk", flat=True))
    active = [m for m in memberships if m.status == Membership.Status.ACTIVE and m.pk in taking]
    if not active:
        raise AssignmentDesignError("The study has no active raters yet.")
    # What the plan and the writes need of each case, not its texts.
    all_cases = {
        c.case_id: c
        for c in study.test_cases.order_by("position").only("pk", "study", "case_id", "purpose")
    }
    # The design covers the sample; gold items and attention checks come per rater below.
    cases = {k: c for k, c in all_cases.items() if c.purpose == TestCase.Purpose.SAMPLE}
    if not cases:
        raise AssignmentDesignError("The study has no test cases yet.")
    in_study = {m.pseudonym for m in memberships}
    assigned = assigned_case_sets(study=study)
    # A skipped case is not the rater's to rate: it does not count towards its k, and it
    # is never given back to them.
    skipped = assigned_case_sets(study=study, skipped=True)
    existing = {
        p: {c for c in have if c in cases and c not in skipped.get(p, ())}
        for p, have in assigned.items()
        if p in in_study
    }
    names = [m.pseudonym for m in active]
    tell("planning", 0, len(cases))
    if study.raters_per_item:
        plan = plan_balanced(
            raters=names,
            cases=list(cases),
            k=study.raters_per_item,
            seed=study.blinding_seed,
            existing=existing,
            skipped=skipped,
            progress=lambda done: tell("planning", done, len(cases)),
        )
    else:
        plan = plan_full(raters=names, cases=list(cases), existing=existing)
    created = {}
    # Read once for every rater: the quality rules and the gold and attention pools.
    settings = quality_settings_for(study=study)
    pools: dict[str, list[str]] = {}
    for case_id, case in all_cases.items():
        pools.setdefault(case.purpose, []).append(case_id)
    for written, membership in enumerate(active):
        tell("writing", written, len(active))
        new = plan.get(membership.pseudonym) or []
        load = len(existing.get(membership.pseudonym, ())) + len(new)
        have = assigned.get(membership.pseudonym, set())
        extra = quality_cases_pick(
            study=study,
            rater=membership,
            sample_count=load,
            have=have,
            pools=pools,
            settings=settings,
        )
        if new or extra:
            assignments_create(
                study=study,
                rater=membership,
                case_ids=new + extra,
                cases=all_cases,
                assigned=have,
            )
            created[membership.pseudonym] = len(new) + len(extra)
    tell("writing", len(active), len(active))
    if created:
        study_event_record(
            study=study,
            actor=actor,
            kind=StudyEvent.Kind.RATERS_ASSIGNED,
            design=design_summary(study=study),
            side_mode=study.side_mode,
            created=created,
        )
    return created


def assignment_last_saved_backdate(*, assignment: Assignment, by: timedelta) -> None:
    """Mark the case as last saved ``by`` ago: the demo's made-up raters worked on each case
    for a while, and the rating service credits active time only up to the time since the
    case was last saved."""
    assignment.last_saved_at = timezone.now() - by
    Assignment.objects.filter(pk=assignment.pk).update(last_saved_at=assignment.last_saved_at)

"""Random studies for the property test that the report equals its own export (issue 39):
a Hypothesis strategy of study plans (``StudyPlan``) and ``study_build``, which carries a
plan out through the services the app writes with, as people would: the lead sets up the
rubric, the cases and the analysis plan, raters rate on the screen (or offline, or the
ratings come in from elsewhere by system), skip cases, leave answers blank, the adaptive
design adds raters where ratings disagree, a rater is excluded, cases are adjudicated,
and the study is closed and unblinded.

What the plan leaves to chance within one study (each answer, which answers are left
blank, which cases are skipped) is drawn from the plan's own ``seed``, so one plan is one
study and Hypothesis shrinks the plan's structure.
"""

import random
from dataclasses import dataclass, field
from itertools import combinations

from hypothesis import strategies as st

from annotation.models import Assignment, Rating
from annotation.services import rating_submit
from annotation.services.adjudication import adjudication_mark_unresolvable, adjudication_resolve
from annotation.services.adjudication_queue import adjudication_send
from annotation.services.assignment import study_assign
from annotation.services.participation import consent_record
from annotation.services.ratings import RatingInvalidError, ratings_import, ratings_import_by_system
from annotation.services.skipping import case_skip
from studies.models import Membership, Study
from studies.rubric import pairwise_values
from studies.rubric.definition import DIMENSION_FIELDS
from studies.services import membership_add, study_create, test_cases_add
from studies.services.lifecycle import study_close, study_open
from studies.services.membership import rater_status_change
from studies.services.rubric import rubric_replace
from studies.services.unblinding import study_unblind

from ..factories import UserFactory

# System names that sort in a known order and appear in no text by accident.
SYSTEM_NAMES = ("Alder-Kestrel-1", "Birch-Plover-2", "Cedar-Ibis-3", "Dogwood-Rail-4")

# The kinds of dimension a plan draws, each one configuration: (kind, config, levels).
KIND_CONFIGS = {
    "scale5": ("scale", {"options": [{"value": v, "label": f"Level {v}"} for v in range(1, 6)]}),
    "scale3": ("scale", {"options": [{"value": v, "label": f"Grade {v}"} for v in range(3)]}),
    # Two values: scored and a yes/no outcome at once (paired tests and McNemar).
    "scale2": ("scale", {"options": [{"value": 0, "label": "Wrong"}, {"value": 1, "label": "Right"}]}),
    "counted": ("counted", {"unit": "points", "item": "point", "bands": [[0, 0], [1, 1], [3, 2], [4, 4]]}),
    "checklist": ("checklist", {"criteria": [{"label": "Cited?"}, {"label": "Checked?"}]}),
    "category2": ("categorical", {"categories": [{"value": "no", "label": "No"}, {"value": "yes", "label": "Yes"}]}),
    "category3": ("categorical", {"categories": [{"value": c, "label": c.title()} for c in ("red", "green", "blue")]}),
    "pairwise": ("pairwise", {"labels": ["A better", "Tie", "B better"]}),
    "pairwise5": ("pairwise", {"labels": ["A much", "A slightly", "Tie", "B slightly", "B much"]}),
}  # fmt: skip
LEVELS = {
    "scale": ("ordinal", "interval"),
    "counted": ("ordinal", "interval", "ratio"),
    "checklist": ("ordinal", "interval"),
    "categorical": ("nominal",),
    "pairwise": ("ordinal", "interval", "nominal"),
}
PER_RESPONSE = ("scale5", "scale3", "scale2", "counted", "checklist", "category2", "category3")
RULES = {
    "scored": ("mean", "majority", "adjudicated"),
    "label": ("adjudicated", "majority"),
    "preference": ("adjudicated", "majority", "mean"),
}


# Whether a rubric can mark a dimension optional (issue 39: its definition's ``required``).
# Until it can, every dimension is required, whatever the plan drew.
RUBRIC_MARKS_OPTIONAL = "required" in DIMENSION_FIELDS


@dataclass(frozen=True)
class DimensionPlan:
    key: str
    flavour: str  # a key of KIND_CONFIGS
    level: str
    wants_optional: bool
    rule: str  # "" for the default

    @property
    def optional(self) -> bool:
        return self.wants_optional and RUBRIC_MARKS_OPTIONAL

    @property
    def kind(self) -> str:
        return KIND_CONFIGS[self.flavour][0]

    @property
    def config(self) -> dict:
        return KIND_CONFIGS[self.flavour][1]


@dataclass(frozen=True)
class StudyPlan:
    seed: int
    n_systems: int
    dimensions: tuple[DimensionPlan, ...]
    n_cases: int
    n_raters: int
    design: tuple  # ("all",) | ("k", k) | ("adaptive", k_min, k_max)
    side_mode: str
    source: str  # "screen" (one rater may work offline) or "imported" (ratings by system)
    offline_rater: bool
    blank_rate: float  # share of answers left blank
    skip_rate: float
    exclude: bool
    adjudicate: int  # cases sent to adjudication
    min_ratings: int | None  # None: the default
    primary: str  # "", "total" or "dimension:<key>"
    legacy: bool = False  # a few ratings stored incomplete before answers were required

    @property
    def pairwise(self) -> bool:
        return any(d.kind == "pairwise" for d in self.dimensions)

    @property
    def systems(self) -> list[str]:
        return list(SYSTEM_NAMES[: self.n_systems])

    @property
    def raters_per_case(self) -> int:
        """The raters each case is planned to get (the design's k, k_min, or every rater)."""
        return self.n_raters if self.design[0] == "all" else self.design[1]


@st.composite
def dimension_plans(draw, *, pairwise: bool) -> tuple[DimensionPlan, ...]:
    flavours = draw(
        st.lists(st.sampled_from(PER_RESPONSE), min_size=0 if pairwise else 1, max_size=3)
    )
    if pairwise:
        flavours.append(draw(st.sampled_from(("pairwise", "pairwise5"))))
    plans = []
    for n, flavour in enumerate(flavours):
        kind = KIND_CONFIGS[flavour][0]
        role = (
            "preference" if kind == "pairwise" else "label" if kind == "categorical" else "scored"
        )
        # Three categories without any analysed apart: no label, so no rule to name.
        rules = ("",) if flavour == "category3" else ("",) + RULES[role]
        plans.append(
            DimensionPlan(
                key=f"d{n}-{flavour}",
                flavour=flavour,
                level=draw(st.sampled_from(LEVELS[kind])),
                wants_optional=draw(st.booleans()) if kind != "pairwise" else False,
                rule=draw(st.sampled_from(rules)),
            )
        )
    return tuple(plans)


@st.composite
def study_plans(draw) -> StudyPlan:
    """A study of 2-4 systems (two per case where the rubric compares two), 1-4 dimensions
    of several kinds, 3-7 cases and 2-5 raters, with one of the three designs."""
    pairwise = draw(st.booleans())
    dimensions = draw(dimension_plans(pairwise=pairwise))
    n_raters = draw(st.integers(2, 5))
    source = draw(st.sampled_from(("screen", "screen", "screen", "imported")))
    designs = [st.just(("all",))]
    if source == "screen" and n_raters >= 3:
        designs.append(st.integers(2, n_raters - 1).map(lambda k: ("k", k)))
        designs.append(
            st.integers(2, n_raters - 1).map(lambda k: ("adaptive", k, min(k + 1, n_raters)))
        )
    design = draw(st.one_of(designs))
    k = n_raters if design[0] == "all" else design[1]
    scores = [d for d in dimensions if d.kind not in ("pairwise", "categorical")]
    primaries = [
        "",
        *(["total"] if scores else []),
        *(
            f"dimension:{d.key}"
            for d in dimensions
            if d.kind != "categorical" or d.flavour == "category2"
        ),
    ]
    return StudyPlan(
        seed=draw(st.integers(0, 2**31 - 1)),
        n_systems=draw(st.integers(2, 4)),
        dimensions=dimensions,
        n_cases=draw(st.integers(3, 7)),
        n_raters=n_raters,
        design=design,
        side_mode=draw(st.sampled_from(("fixed", "balanced"))),
        source=source,
        offline_rater=source == "screen" and design[0] != "adaptive" and draw(st.booleans()),
        blank_rate=draw(st.sampled_from((0.0, 0.1, 0.3))),
        skip_rate=draw(st.sampled_from((0.0, 0.0, 0.15))) if source == "screen" else 0.0,
        exclude=n_raters >= 3 and draw(st.booleans()),
        adjudicate=draw(st.integers(0, 2)),
        min_ratings=draw(st.one_of(st.none(), st.integers(1, k))),
        primary=draw(st.sampled_from(primaries)),
        legacy=draw(st.booleans()),
    )  # fmt: skip


# --- carrying a plan out -------------------------------------------------------------------


def rubric_definition(plan: StudyPlan) -> dict:
    return {
        "name": "Random rubric",
        "dimensions": [
            {
                "key": d.key,
                "name": f"Dimension {d.key}",
                "kind": d.kind,
                "level": d.level,
                "config": d.config,
                **({"required": not d.optional} if RUBRIC_MARKS_OPTIONAL else {}),
            }
            for d in plan.dimensions
        ],
    }


def case_systems(plan: StudyPlan) -> list[list[str]]:
    """Each case's systems: every system, or a pair (the pairings in turn) when the rubric
    compares two responses."""
    if not plan.pairwise:
        return [plan.systems] * plan.n_cases
    pairings = list(combinations(plan.systems, 2))
    return [list(pairings[n % len(pairings)]) for n in range(plan.n_cases)]


def cases_of(plan: StudyPlan) -> list[dict]:
    return [
        {
            "id": f"TC-{n + 1:03d}",
            "prompt": f"Question number {n + 1}?",
            "context": "",
            "stratum": "north" if n % 2 else "south",
            "responses": {s: f"Answer {i} to question {n + 1}." for i, s in enumerate(systems)},
        }
        for n, systems in enumerate(case_systems(plan))
    ]


@dataclass
class Built:
    """A study carried out from its plan, and what happened on the way."""

    study: Study
    plan: StudyPlan
    refusals: list[str] = field(default_factory=list)  # submissions refused as incomplete


class Answers:
    """One study's answers, drawn from the plan's seed."""

    def __init__(self, plan: StudyPlan):
        self.plan = plan
        self.rng = random.Random(plan.seed)

    def value(self, dimension: DimensionPlan, *, points_only: bool = False) -> dict:
        """A raw answer as the rating form (or, ``points_only``, a worksheet) sends it."""
        rng, kind, config = self.rng, dimension.kind, dimension.config
        if kind == "scale":
            return {"choice": rng.choice([o["value"] for o in config["options"]])}
        if kind == "categorical":
            return {"choice": rng.choice([c["value"] for c in config["categories"]])}
        if kind == "pairwise":
            return {"choice": rng.choice(pairwise_values(len(config["labels"])))}
        if kind == "counted":
            if points_only:
                return {"points": rng.choice(sorted({p for _, p in config["bands"]}))}
            n = rng.randint(0, 5)
            return {"items": [{"text": f"item {i}", "half": rng.random() < 0.2} for i in range(n)]}
        checked = [rng.random() < 0.5 for _ in config["criteria"]]
        return {"points": sum(checked)} if points_only else {"checked": checked}

    def blank(self) -> bool:
        return self.rng.random() < self.plan.blank_rate

    def payload(self, labels: list[str], *, flipped: bool = False, points_only=False) -> dict:
        """A rating of a case's responses under ``labels``; a blank answer is left out, as
        an untouched control sends nothing. A preference in the screen's orientation."""
        responses = {label: {} for label in labels}
        case = {}
        for dimension in self.plan.dimensions:
            if dimension.kind == "pairwise":
                if not self.blank():
                    answer = self.value(dimension)
                    if flipped:
                        answer = {"choice": -answer["choice"]}
                    case[dimension.key] = answer
                continue
            for label in labels:
                if not self.blank():
                    responses[label][dimension.key] = self.value(dimension, points_only=points_only)
        confidence = self.rng.choice(["low", "medium", "high"])
        return {"responses": responses, "case": case, "confidence": confidence, "notes": ""}

    def completed(self, payload: dict, labels: list[str], *, points_only=False) -> dict:
        """The payload with every required answer given, as a rater does when the
        submission is refused for the answers it lacks."""
        filled = {**payload, "responses": {k: dict(v) for k, v in payload["responses"].items()}}
        filled["case"] = dict(payload["case"])
        for dimension in self.plan.dimensions:
            if dimension.optional:
                continue
            if dimension.kind == "pairwise":
                filled["case"].setdefault(dimension.key, self.value(dimension))
                continue
            for label in labels:
                if dimension.key not in filled["responses"][label]:
                    filled["responses"][label][dimension.key] = self.value(
                        dimension, points_only=points_only
                    )
        return filled


def _labels(assignment: Assignment) -> list[str]:
    return sorted(assignment.test_case.labels.values_list("label", flat=True))


def _submit(built: Built, answers: Answers, assignment: Assignment) -> None:
    """The rater submits on the screen; refused for a missing required answer, they give
    it and submit again."""
    labels = _labels(assignment)
    payload = answers.payload(labels, flipped=assignment.flipped)
    try:
        rating_submit(assignment=assignment, payload=payload, expected_version=assignment.version)
    except RatingInvalidError as error:
        built.refusals.append(str(error))
        assignment.refresh_from_db()
        rating_submit(
            assignment=assignment,
            payload=answers.completed(payload, labels),
            expected_version=assignment.version,
        )


def _rate_on_screen(built: Built, answers: Answers, *, offline: Membership | None) -> int:
    """Every open assignment rated (or skipped); returns how many were handled."""
    study, plan = built.study, built.plan
    handled = 0
    todo = Assignment.objects.filter(
        test_case__study=study, rater__role=Membership.Role.RATER,
        status__in=[Assignment.Status.TODO, Assignment.Status.DRAFT],
    ).select_related("test_case", "rater").order_by("rater__pseudonym", "position")  # fmt: skip
    offline_cases = {}
    for assignment in todo:
        if offline is not None and assignment.rater_id == offline.pk:
            labels = _labels(assignment)
            offline_cases[assignment.test_case_id] = answers.payload(labels, points_only=True)
            continue
        handled += 1
        if answers.rng.random() < plan.skip_rate:
            case_skip(assignment=assignment, reason="expertise")
            continue
        _submit(built, answers, assignment)
    if offline_cases:
        _import_worksheet(built, answers, offline, offline_cases)
        handled += len(offline_cases)
    return handled


def _import_worksheet(built: Built, answers: Answers, rater: Membership, cases: dict) -> None:
    """One rater's worksheet, filled in offline and imported (points only for counted
    dimensions and checklists)."""
    labels = {
        case_id: sorted(labels)
        for case_id, labels in _case_labels(built.study).items()
        if case_id in cases
    }
    try:
        ratings_import(
            rater=rater, answers=cases, actor=built.study.lead, source_name="offline.csv"
        )
    except RatingInvalidError as error:
        built.refusals.append(str(error))
        filled = {c: answers.completed(p, labels[c], points_only=True) for c, p in cases.items()}
        ratings_import(
            rater=rater, answers=filled, actor=built.study.lead, source_name="offline.csv"
        )


def _case_labels(study: Study) -> dict[int, list[str]]:
    labels: dict[int, list[str]] = {}
    for case_id, label in study.test_cases.values_list("pk", "labels__label"):
        labels.setdefault(case_id, []).append(label)
    return labels


def _import_by_system(built: Built, answers: Answers, raters: list[Membership]) -> None:
    """Ratings made elsewhere, read by system name and mapped to the key's labels: every
    rater on every case (a file's own design)."""
    study = built.study
    labels = _case_labels(study)
    files = {
        rater: {case_id: answers.payload(sorted(case_labels)) for case_id, case_labels in labels.items()}
        for rater in raters
    }  # fmt: skip
    detail = {"raters": len(raters)}
    try:
        ratings_import_by_system(
            study=study, answers=files, actor=study.lead, source_name="elsewhere.csv", detail=detail
        )
    except RatingInvalidError as error:
        built.refusals.append(str(error))
        filled = {
            rater: {c: answers.completed(p, sorted(labels[c])) for c, p in cases.items()}
            for rater, cases in files.items()
        }
        ratings_import_by_system(study=study, answers=filled, actor=study.lead, source_name="elsewhere.csv", detail=detail)  # fmt: skip


def _adjudicate(built: Built, answers: Answers) -> None:
    """Cases sent to adjudication by the lead: one resolved with every answer, one marked
    unresolvable, a third left waiting."""
    study, plan = built.study, built.plan
    rated = list(
        study.test_cases.filter(assignments__status=Assignment.Status.SUBMITTED)
        .distinct()
        .order_by("position")
    )
    answers.rng.shuffle(rated)
    if not rated or not plan.adjudicate:
        return
    adjudicator = membership_add(study=study, user=UserFactory(), role=Membership.Role.ADJUDICATOR)
    for case in rated[: plan.adjudicate]:
        row = adjudication_send(study=study, actor=study.lead, test_case=case, reason="Split.")
        outcome = answers.rng.choice(["resolve", "resolve", "unresolvable", "wait"])
        if outcome == "resolve":
            labels = sorted(case.labels.values_list("label", flat=True))
            payload = {
                "responses": {
                    label: {
                        d.key: answers.value(d) for d in plan.dimensions if d.kind != "pairwise"
                    }
                    for label in labels
                },
                "case": {d.key: answers.value(d) for d in plan.dimensions if d.kind == "pairwise"},
                "notes": "Decided on the rubric's words.",
            }
            adjudication_resolve(
                adjudication=row, adjudicator=adjudicator, payload=payload,
                expected_version=row.version, actor=study.lead,
            )  # fmt: skip
        elif outcome == "unresolvable":
            adjudication_mark_unresolvable(
                adjudication=row, adjudicator=adjudicator, reason="Both readings hold.",
                expected_version=row.version, actor=study.lead,
            )  # fmt: skip


def _legacy_incomplete(built: Built, answers: Answers) -> None:
    """A rating or two left incomplete as the app stored them before answers were required
    (issue 39): a required scale unanswered (its choice None, 0 points), the response's
    total the sum of the rest. No service writes this any more (a submission lacking a
    required answer is refused, and existing ones are never rewritten), so it is written
    as those versions did; the answers' numbers kept per process are dropped with it."""
    from agreement.selectors import ratings as kept_values

    plan = built.plan
    keys = [d.key for d in plan.dimensions if d.kind == "scale" and not d.optional]
    scored = {d.key for d in plan.dimensions if d.kind in ("scale", "counted", "checklist")}
    if not keys:
        return
    ratings = list(
        Rating.objects.filter(
            assignment__test_case__study=built.study, assignment__status=Assignment.Status.SUBMITTED
        ).order_by("pk")
    )
    for rating in answers.rng.sample(ratings, min(2, len(ratings))):
        scores = dict(rating.scores)
        scores[answers.rng.choice(keys)] = {
            "choice": None,
            "flagged": False,
            "flag_note": "",
            "points": 0,
        }
        total = sum(int(v.get("points") or 0) for k, v in scores.items() if k in scored)
        Rating.objects.filter(pk=rating.pk).update(scores=scores, total=total)
    kept_values._ANSWER_VALUES.clear()


def _set_up(plan: StudyPlan, slug: str) -> Study:
    from agreement.services.plan import aggregation_set, primary_measure_set

    lead = UserFactory()
    design = plan.design
    study = study_create(
        slug=slug, name=f"Random study {slug}", lead=lead, blinding_seed=plan.seed % 10_000,
        raters_per_item=None if design[0] == "all" else design[1],
        raters_per_item_max=design[2] if design[0] == "adaptive" else None,
        side_mode=plan.side_mode,
    )  # fmt: skip
    # The key from the plan alone, as the factories make it, so that a plan is one study.
    study.blinding_secret = f"random-study-{plan.seed}"
    study.save(update_fields=["blinding_secret"])
    study = rubric_replace(study=study, actor=lead, definition=rubric_definition(plan))
    test_cases_add(study=study, systems=plan.systems, cases=cases_of(plan))
    rules = {d.key: d.rule for d in plan.dimensions if d.rule}
    aggregation_set(study=study, actor=lead, rules=rules, min_ratings=plan.min_ratings)
    primary_measure_set(study=study, actor=lead, measure=plan.primary)
    return study


def study_build(plan: StudyPlan, *, slug: str) -> Built:
    """The study of ``plan``, through the services, closed and unblinded."""
    study = _set_up(plan, slug)
    built = Built(study=study, plan=plan)
    answers = Answers(plan)
    raters = []
    for _ in range(plan.n_raters):
        rater = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
        consent_record(rater=rater, agreed=True, prior_knowledge=False)
        raters.append(rater)
    study = study_open(study=study, actor=study.lead, acknowledge_warnings=True)
    built.study = study
    if plan.source == "imported":
        _import_by_system(built, answers, raters)
    else:
        study_assign(study=study)
        offline = raters[-1] if plan.offline_rater else None
        while _rate_on_screen(built, answers, offline=offline):
            offline = None  # a rater's later cases (skips handed on) are rated on screen
            if plan.design[0] == "adaptive":
                from agreement.services.adaptive import adaptive_raters_extend

                adaptive_raters_extend(study=study)
    if plan.legacy:
        _legacy_incomplete(built, answers)
    if plan.exclude:
        excluded = answers.rng.choice(raters)
        rater_status_change(
            membership=excluded, action="exclude", reason="Failed the checks.", actor=study.lead
        )
    _adjudicate(built, answers)
    study = study_close(study=Study.objects.get(pk=study.pk), actor=study.lead)
    built.study = study_unblind(study=study, actor=study.lead, reason="Analysis.")
    return built

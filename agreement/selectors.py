"""Reads for agreement: the study's ratings as matrices, and the stored result."""

import hashlib
import json
import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from django.core.cache import cache
from django.db.models import Count, F, Max, Q
from django.db.models.functions import Length

from annotation.models import Assignment, Rating
from annotation.selectors import expected_answer_details
from studies.models import BlindedLabel, Membership, Study, StudyEvent, TestCase
from studies.services.quality import quality_settings_for

from .analysis import DimensionData
from .models import AnalysisPlan, StudyAgreement
from .outcomes import ComparisonData, DimensionRole
from .qc import CaseRecord, QualityAnswer, Rules


@dataclass(frozen=True)
class StudyRatings:
    raters: list[str]
    dimensions: list[DimensionData]
    n_ratings: int
    left_out: dict
    # For the comparison of systems: the sample's cases (pks, in order) and the key labels
    # of the response units (cases x labels, case-major), each response's total
    # (raters x response units) and each case's confidence (raters x cases, 1-3).
    case_ids: list[int] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    totals: np.ndarray | None = None
    confidence: np.ndarray | None = None


def study_ratings(*, study: Study, pilot: bool) -> StudyRatings:
    """The submitted ratings that count: main-study (or pilot) data of raters not excluded.

    Pilot data are ratings last submitted before the study opened (a study never opened has
    only the phase it is in). Units are (test case, key label) for per-response dimensions
    and test cases for per-case dimensions.
    """
    ratings = Rating.objects.filter(
        assignment__test_case__study=study,
        assignment__test_case__purpose=TestCase.Purpose.SAMPLE,
        assignment__status=Assignment.Status.SUBMITTED,
    )
    excluded = ratings.filter(assignment__rater__status=Membership.Status.EXCLUDED)
    ratings = ratings.exclude(assignment__rater__status=Membership.Status.EXCLUDED)
    if study.opened_at is None:
        # Never formally opened: everything belongs to the phase the study is in.
        other = ratings.none()
    else:
        before = ratings.filter(submitted_at__lt=study.opened_at)
        after = ratings.filter(submitted_at__gte=study.opened_at)
        ratings, other = (before, after) if pilot else (after, before)

    rubric = [(dimension, dimension.scoring()) for dimension in study.rubric.dimensions.all()]
    # Plain tuples, no model instances and no answers: where each rating goes.
    rows = list(ratings.values_list(*ROW_COLUMNS))
    values = _answer_values(study=study, ratings=ratings, rows=rows, rubric=rubric)
    raters = sorted({row[1] for row in rows})
    rater_index = {name: i for i, name in enumerate(raters)}
    cases = list(study.test_cases.in_sample().order_by("position").values_list("id", "stratum"))
    labels = sorted({row[3] for row in rows}) or ["A", "B"]
    response_units = {(case_id, label): i for i, (case_id, label) in enumerate(
        (case_id, label) for case_id, _ in cases for label in labels
    )}  # fmt: skip
    response_strata = [stratum for _, stratum in cases for _ in labels]
    case_units = {case_id: i for i, (case_id, _) in enumerate(cases)}
    case_strata = [stratum for _, stratum in cases]
    row_raters = np.fromiter((rater_index[row[1]] for row in rows), np.intp, len(rows))
    row_units = np.fromiter((response_units[row[2], row[3]] for row in rows), np.intp, len(rows))
    # A per-case answer is stored once per assignment: take one row of each.
    first_rows = list({row[5]: i for i, row in reversed(list(enumerate(rows)))}.values())
    case_raters = row_raters[first_rows]
    case_columns = np.fromiter((case_units[rows[i][2]] for i in first_rows), np.intp)

    totals = np.full((len(raters), len(response_units)), np.nan)
    totals[row_raters, row_units] = [float(row[7]) for row in rows]
    confidence = np.full((len(raters), len(case_units)), np.nan)
    confidence[case_raters, case_columns] = [
        CONFIDENCE_LEVELS.get(rows[i][8], math.nan) for i in first_rows
    ]
    reversed_cases = _cases_in_reverse_system_order(study=study, case_ids=[c for c, _ in cases])
    dimensions = []
    for index, (dimension, scoring) in enumerate(rubric):
        if scoring.scope == "case":
            units, strata = case_units, case_strata
            where, column = (case_raters, case_columns), values[first_rows, index]
        else:
            units, strata = response_units, response_strata
            where, column = (row_raters, row_units), values[:, index]
        matrix = np.full((len(raters), len(units)), np.nan)
        matrix[where] = column
        orientation, key_order = "key", None
        if reversed_cases is not None and scoring.compares_two and scoring.scope == "case":
            # After unblinding a preference reads in the systems' order: chance agreement
            # depends on which side is called "first".
            orientation, key_order = "system", matrix
            matrix = matrix.copy()
            for column, (case_id, _) in enumerate(cases):
                if reversed_cases.get(case_id):
                    matrix[:, column] = [
                        v if math.isnan(v) else scoring.in_key_order(v, flipped=True)
                        for v in matrix[:, column]
                    ]
        dimensions.append(
            DimensionData(
                key=dimension.key,
                name=dimension.name,
                level=dimension.level,
                matrix=matrix,
                unit_strata=strata,
                categories=scoring.agreement_values,
                orientation=orientation,
                key_order_matrix=key_order,
            )
        )
    return StudyRatings(
        raters=raters,
        dimensions=dimensions,
        n_ratings=len(rows),
        left_out={"excluded_rater_ratings": excluded.count(), "other_phase_ratings": other.count()},
        case_ids=[case_id for case_id, _ in cases],
        labels=labels,
        totals=totals,
        confidence=confidence,
    )


def study_comparison_data(*, study: Study, data: StudyRatings) -> ComparisonData | None:
    """The ratings laid out for comparing systems; None while the study is blinded."""
    systems = study_system_order(study=study)
    if not systems or not data.case_ids:
        return None
    index = {name: i for i, name in enumerate(systems)}
    case_index = {case_id: i for i, case_id in enumerate(data.case_ids)}
    label_index = {label: i for i, label in enumerate(data.labels)}
    case_systems = np.full((len(data.case_ids), len(data.labels)), -1)
    lengths = np.full(case_systems.shape, np.nan)
    rows = (
        BlindedLabel.objects.filter(test_case_id__in=data.case_ids)
        .annotate(length=Length("response__text"))
        .values_list("test_case_id", "label", "response__system__name", "length")
    )
    for case_id, label, system, length in rows.iterator():
        if label in label_index:
            case_systems[case_index[case_id], label_index[label]] = index[system]
            lengths[case_index[case_id], label_index[label]] = length
    dimensions = {d.key: d for d in study.rubric.dimensions.all()}
    roles = []
    for dimension in data.dimensions:
        scoring = dimensions[dimension.key].scoring()
        response = scoring.scope == "response"
        roles.append(
            DimensionRole(
                key=dimension.key,
                name=dimension.name,
                scored=response and scoring.max_points > 0,
                binary=response and len(scoring.agreement_values) == 2,
                preference=scoring.scope == "case" and scoring.compares_two,
                max_points=scoring.max_points,
            )
        )
    strata = dict(study.test_cases.in_sample().values_list("id", "stratum"))
    return ComparisonData(
        systems=systems,
        labels=data.labels,
        strata=[strata.get(case_id, "") for case_id in data.case_ids],
        case_systems=case_systems,
        totals=data.totals,
        dimensions=data.dimensions,
        roles=roles,
        lengths=lengths,
        confidence=data.confidence,
        stratum_shares=_stratum_shares(study),
    )


def _stratum_shares(study: Study) -> dict[str, float]:
    plan = AnalysisPlan.objects.filter(study=study).first()
    return dict(plan.stratum_shares) if plan else {}


def study_system_order(*, study: Study) -> list[str]:
    """The systems in the order the analysis names them (by name); empty while blinded."""
    if study.status != Study.Status.UNBLINDED:
        return []
    return list(study.systems.order_by("name").values_list("name", flat=True))


def _cases_in_reverse_system_order(*, study: Study, case_ids: list[int]) -> dict | None:
    """Test case pk -> True where key label A holds the later system of the pair; None
    while the study is blinded (nothing here reads a system before unblinding)."""
    order = {name: i for i, name in enumerate(study_system_order(study=study))}
    if not order:
        return None
    rows = BlindedLabel.objects.filter(test_case_id__in=case_ids).values_list(
        "test_case_id", "label", "response__system__name"
    )
    labels: dict[int, dict[str, int]] = {}
    for case_id, label, system in rows.iterator():
        labels.setdefault(case_id, {})[label] = order[system]
    return {
        case_id: by_label.get("A", 0) > by_label.get("B", 0) for case_id, by_label in labels.items()
    }


ROW_COLUMNS = (
    "pk",
    "assignment__rater__pseudonym",
    "assignment__test_case_id",
    "label",
    "assignment__flipped",
    "assignment_id",
    "submitted_at",
    "total",
    "assignment__confidence",
)
CONFIDENCE_LEVELS = {
    Assignment.Confidence.LOW: 1.0,
    Assignment.Confidence.MEDIUM: 2.0,
    Assignment.Confidence.HIGH: 3.0,
}

# Each stored answer's numbers for agreement, kept per process (a worker's) for a few
# studies: a recompute reads and converts only the answers submitted or revised since the
# last run of the same rubric, so its cost hardly grows with the study.
_ANSWER_VALUES: OrderedDict[int, tuple[str, dict]] = OrderedDict()
_STUDIES_KEPT = 4


def _answer_values(*, study: Study, ratings, rows: list[tuple], rubric: list) -> np.ndarray:
    """Rows x dimensions: each rating's value for agreement (NaN when unanswered)."""
    # The rubric's uuid tells a study apart from an earlier one under the same id.
    dimensions = [(d.key, d.kind, d.config) for d, _ in rubric]
    signature = json.dumps([str(study.rubric.uuid), dimensions], default=str)
    study_id = study.pk
    kept_signature, kept = _ANSWER_VALUES.get(study_id, ("", {}))
    if kept_signature != signature:
        kept = {}
    # A rating's answers change only with its submitted_at (every write of the one service
    # sets it); the side it was shown on turns a pairwise preference.
    stamps = {row[0]: (row[6], row[4]) for row in rows}
    missing = [pk for pk, stamp in stamps.items() if kept.get(pk, (None,))[0] != stamp]
    if missing:
        source = ratings if 2 * len(missing) > len(rows) else Rating.objects.filter(pk__in=missing)
        columns = ["pk", "submitted_at", "assignment__flipped", "scores"]
        per_case = any(scoring.scope == "case" for _, scoring in rubric)
        for pk, submitted_at, flipped, scores, *case in source.values_list(
            *columns, *(["assignment__case_scores"] if per_case else [])
        ):
            answers = {"response": scores or {}, "case": (case[0] if case else None) or {}}
            # The kind turns the answer into a number in key order (a flip undone).
            values = [
                scoring.agreement_value(answers[scoring.scope].get(d.key), flipped=flipped)
                for d, scoring in rubric
            ]
            kept[pk] = ((submitted_at, flipped), [math.nan if v is None else v for v in values])
    kept = {pk: kept[pk] for pk in stamps if pk in kept}  # deleted meanwhile: NaN below
    _ANSWER_VALUES[study_id] = (signature, kept)
    _ANSWER_VALUES.move_to_end(study_id)
    while len(_ANSWER_VALUES) > _STUDIES_KEPT:
        _ANSWER_VALUES.popitem(last=False)
    blank = [math.nan] * len(rubric)
    values = [kept[row[0]][1] if row[0] in kept else blank for row in rows]
    return np.array(values, dtype=float).reshape(len(rows), len(rubric))


def study_agreement(*, study: Study) -> StudyAgreement:
    return StudyAgreement.objects.filter(study=study).first() or StudyAgreement(study=study)


def analysis_inputs(*, study: Study) -> dict:
    """A small summary of everything the study's analysis reads, to tell a stale result.

    Any change to a rating (submitted, revised, imported, withdrawn), to who is excluded,
    to the dimensions or their levels, to the success criterion, to the phase or to the test
    cases changes this summary.
    """
    ratings = Rating.objects.filter(
        assignment__test_case__study=study,
        assignment__test_case__purpose=TestCase.Purpose.SAMPLE,
        assignment__status=Assignment.Status.SUBMITTED,
    ).aggregate(count=Count("pk"), last=Max("submitted_at"), last_id=Max("pk"))
    cases = study.test_cases.in_sample().aggregate(count=Count("pk"), last_id=Max("pk"))
    excluded = study.memberships.filter(status=Membership.Status.EXCLUDED).order_by("pk")
    return {
        "phase": study.current_phase,
        "unblinded": study.status == Study.Status.UNBLINDED,
        "opened_at": study.opened_at.isoformat() if study.opened_at else None,
        "dimensions": [
            list(row)
            for row in study.rubric.dimensions.order_by("position").values_list(
                "key", "kind", "level"
            )
        ],
        "success": [str(study.success_alpha), study.success_min_dimensions],
        "cases": [cases["count"], cases["last_id"]],
        "excluded": list(excluded.values_list("pk", flat=True)),
        "stratum_shares": _stratum_shares(study),
        "ratings": [
            ratings["count"],
            ratings["last"].isoformat() if ratings["last"] else None,
            ratings["last_id"],
        ],
    }


# A page's statistics are kept this long (seconds) for the inputs they were computed from.
PAGE_RESULT_SECONDS = 24 * 3600


def computed_for_inputs(*, study: Study, name: str, compute, extra=None):
    """``compute()``, run once for the study's analysis inputs as they are now (ratings,
    exclusions, phase, cases, unblinding), its status and ``extra`` (what else the result
    reads), then kept in the cache: for pages whose statistics (a bootstrap) would
    otherwise run on every view."""
    inputs = [analysis_inputs(study=study), study.status, extra]
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()
    key = f"{name}:{study.pk}:{digest}"
    result = cache.get(key)
    if result is None:
        result = compute()
        cache.set(key, result, PAGE_RESULT_SECONDS)
    return result


def agreement_is_stale(*, study: Study, agreement: StudyAgreement) -> bool:
    """True while the stored result does not reflect the study as it is now."""
    if agreement.pk is None:
        return False  # nothing stored: the page says "not computed yet"
    return agreement.is_stale or agreement.inputs != analysis_inputs(study=study)


def awaiting_run() -> Q:
    """Results that no run covers yet: a request newer than the result, or a stored first
    stage whose intervals are still missing (its run may have died between the stages)."""
    return Q(requested__gt=F("computed")) | Q(result__intervals_pending=True)


def agreement_awaits_run(*, study_id: int) -> bool:
    """True while a request of the study's statistics has no run that covers it yet."""
    rows = StudyAgreement.objects.filter(study_id=study_id)
    return not rows.exists() or rows.filter(awaiting_run()).exists()


def qc_case_records(*, study: Study) -> list[CaseRecord]:
    """Every submitted case with its active time, totals by on-screen position and, where
    the rubric has a pairwise preference, whether it went to the response shown first."""
    rows = (
        Rating.objects.filter(
            assignment__test_case__study=study, assignment__status=Assignment.Status.SUBMITTED
        )
        .order_by("assignment_id", "shown_label")
        .values_list(
            "assignment_id",
            "assignment__rater__pseudonym",
            "assignment__active_seconds",
            "assignment__source",
            "shown_label",
            "total",
        )
    )
    cases: dict[int, dict] = {}
    for assignment_id, rater, seconds, source, shown_label, total in rows:
        case = cases.setdefault(
            assignment_id, {"rater": rater, "seconds": seconds, "source": source, "totals": {}}
        )
        case["totals"][shown_label] = float(total)
    firsts = _first_preferred(study=study)
    return [
        CaseRecord(
            rater=case["rater"],
            active_seconds=case["seconds"],
            totals_by_position=tuple(case["totals"][label] for label in sorted(case["totals"])),
            timed=case["source"] == Assignment.Source.SCREEN,
            first_preferred=firsts.get(assignment_id),
        )
        for assignment_id, case in cases.items()
    ]


def _first_preferred(*, study: Study) -> dict[int, bool | None]:
    """Per submitted assignment: True when the pairwise preference went to the response
    shown first, False to the second, None for a tie; empty without a preference."""
    preference = next((d for d in study.rubric.scoring_dimensions() if d.compares_two), None)
    if preference is None:
        return {}
    rows = Assignment.objects.filter(
        test_case__study=study, status=Assignment.Status.SUBMITTED
    ).values_list("pk", "case_scores")
    firsts = {}
    for pk, case_scores in rows.iterator(chunk_size=2000):
        # Unflipped: the value as the rater's screen showed it; negative prefers the first.
        value = preference.agreement_value((case_scores or {}).get(preference.key))
        firsts[pk] = None if not value else value < 0
    return firsts


def qc_quality_answers(*, study: Study) -> list[QualityAnswer]:
    """Every submitted gold item and attention check, checked against its expected answers
    by each dimension's kind; the evidence names responses by system, never by label."""
    rubric = {d.key: d for d in study.rubric.scoring_dimensions()}
    assignments = (
        Assignment.objects.filter(
            test_case__study=study,
            test_case__purpose__in=[TestCase.Purpose.GOLD, TestCase.Purpose.ATTENTION],
            test_case__expected__isnull=False,
            status=Assignment.Status.SUBMITTED,
        )
        .select_related("rater", "test_case__expected")
        .prefetch_related("ratings__response__system")
        .order_by("submitted_at", "pk")
    )
    answers = []
    for assignment in assignments:
        ratings = assignment.ratings.all()
        details = expected_answer_details(
            assignment=assignment,
            expected=assignment.test_case.expected.answers or {},
            dimensions=rubric,
            names={r.label: r.response.system.name for r in ratings},
        )
        answers.append(
            QualityAnswer(
                rater=assignment.rater.pseudonym,
                case=assignment.test_case.case_id,
                purpose=assignment.test_case.purpose,
                submitted_at=assignment.submitted_at.isoformat(),
                met=sum(1 for d in details if d["met"]),
                expected=len(details),
                confidence=assignment.confidence,
                details=tuple(details),
            )
        )
    return answers


def qc_rules(*, study: Study) -> Rules:
    """The study's quality-control thresholds (its settings, or the protocol's defaults)."""
    settings = quality_settings_for(study=study)
    return Rules(
        min_median_seconds=settings.min_median_seconds,
        position_share=settings.position_share_percent / 100,
        position_alpha=float(settings.position_alpha),
        straight_line_items=settings.straight_line_items,
        gold_pass_share=settings.gold_pass_percent / 100,
        gold_minimum=settings.gold_minimum,
        attention_misses=settings.attention_misses,
    )


def rater_reinstated_at(*, study: Study) -> dict[str, str]:
    """Each rater's last reinstatement (ISO time): the gold rule counts answers after it."""
    rows = study.events.filter(
        kind=StudyEvent.Kind.RATER_REINSTATED, membership__isnull=False
    ).values_list("membership__pseudonym", "created_at")
    latest: dict[str, str] = {}
    for pseudonym, at in rows:
        latest[pseudonym] = max(latest.get(pseudonym, ""), at.isoformat())
    return latest


def dismissed_flags(*, study: Study, membership: Membership) -> set[str]:
    """The flag texts an administrator dismissed for this rater (with a reason)."""
    rows = study.events.filter(
        kind=StudyEvent.Kind.RATER_FLAG_DISMISSED, membership=membership
    ).values_list("detail", flat=True)
    return {flag for detail in rows for flag in (detail or {}).get("flags", [])}


def rater_events(*, study: Study, kinds):
    """The administrators' decisions about raters, newest first."""
    return study.events.filter(membership__isnull=False, kind__in=kinds).select_related(
        "membership"
    )[:200]

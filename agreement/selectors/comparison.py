"""Reads for comparing systems: the study's ratings as the comparison takes them, each
dimension's role, the analysis plan's inputs."""

import numpy as np
from django.db.models.functions import Length

from agreement.analysis.outcomes import ComparisonData
from agreement.analysis.roles import DimensionRole, default_min_ratings
from agreement.models import AnalysisPlan
from annotation.selectors.adjudicated_labels import adjudication_inputs, study_adjudicated_labels
from studies.models import BlindedLabel, Study

from .ratings import StudyRatings, _cases_in_reverse_system_order, study_system_order


def study_comparison_data(
    *, study: Study, data: StudyRatings, keyed: bool = False
) -> ComparisonData | None:
    """The ratings laid out for comparing systems; None while the study is blinded, unless
    ``keyed`` (the monitor's read of ``data`` read keyed: see ``study_system_order``)."""
    data = data.labelled or data  # every rating, also where agreement reads the first k_min
    systems = study_system_order(study=study, keyed=keyed)
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
    roles = [dimension_role(dimensions[dimension.key]) for dimension in data.dimensions]
    strata = dict(study.test_cases.in_sample().values_list("id", "stratum"))
    plan = AnalysisPlan.objects.filter(study=study).first()
    # The resolved answers, laid out and oriented as the ratings' matrices are.
    adjudicated = study_adjudicated_labels(
        study=study,
        case_ids=data.case_ids,
        labels=data.labels,
        reversed_cases=_cases_in_reverse_system_order(
            study=study, case_ids=data.case_ids, keyed=keyed
        ),
    )
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
        stratum_shares=dict(plan.stratum_shares) if plan else {},
        primary_measure=plan.primary_measure if plan else "",
        rules=dict(plan.aggregation) if plan else {},
        min_ratings=study_min_ratings(study=study, plan=plan),
        adjudicated={key: adjudicated[key] for key in (d.key for d in data.dimensions)},
    )


def study_min_ratings(*, study: Study, plan: AnalysisPlan | None = None) -> int:
    """The analysis plan's minimum of valid ratings per item, or the default (2, or the
    design's raters per item when it plans fewer)."""
    if plan is None:
        plan = AnalysisPlan.objects.filter(study=study).first()
    if plan is not None and plan.min_ratings:
        return plan.min_ratings
    return default_min_ratings(study.raters_per_item)


def _analysis_plan_inputs(study: Study) -> dict:
    """The analysis plan's part of ``analysis_inputs``, with the resolved adjudications. The
    primary question's measure, the aggregation rules, the minimum of ratings and the
    adjudications are there only once set, so that results stored before they existed stay
    fresh."""
    plan = AnalysisPlan.objects.filter(study=study).values_list(
        "stratum_shares", "primary_measure", "aggregation", "min_ratings"
    )
    shares, measure, rules, minimum = plan.first() or ({}, "", {}, None)
    adjudicated = adjudication_inputs(study=study)
    return {
        "stratum_shares": shares,
        **({"primary_measure": measure} if measure else {}),
        **({"aggregation": rules} if rules else {}),
        **({"min_ratings": minimum} if minimum else {}),
        **({"adjudicated": adjudicated} if adjudicated else {}),
    }


def dimension_role(dimension) -> DimensionRole:
    """What a rubric dimension can be compared on, as its kind scores it: points (a
    per-response dimension with points), a yes/no outcome (a per-response dimension with
    two values) or a preference (a per-case dimension that compares two responses)."""
    scoring = dimension.scoring()
    response = scoring.scope == "response"
    return DimensionRole(
        key=dimension.key,
        name=dimension.name,
        scored=response and scoring.max_points > 0,
        binary=response and len(scoring.agreement_values) == 2,
        preference=scoring.scope == "case" and scoring.compares_two,
        max_points=scoring.max_points,
        apart=scoring.analysed_apart() if response else (),
    )

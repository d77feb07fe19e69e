"""Reads for comparing systems: the study's ratings as the comparison takes them (each
dimension's role and the plan's minimum of ratings: ``plan``)."""

import numpy as np
from django.db.models.functions import Length

from agreement.analysis.comparison_data import ComparisonData
from agreement.models import AnalysisPlan
from annotation.selectors.adjudicated_labels import study_adjudicated_labels
from studies.models import BlindedLabel, Study

from .plan import dimension_role, study_min_ratings
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

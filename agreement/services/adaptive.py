"""The adaptive design's decision: which cases get one more rater (the worker's, after each
recompute; ``annotation.services.adaptive`` writes it).

A case whose raters have all submitted, at least k_min and fewer than k_max of them, gets
one more rater where its ratings so far disagree by a dimension's aggregation rule (the
analysis plan's, ``aggregation.ratings_disagree``), or where its ratings trigger a
dimension's adjudication rule (``adjudication_queue.adjudication_triggered``). Both rules
are asked, never copied. Only while the study is open: the main phase's ratings decide.
"""

import numpy as np

from agreement.analysis.aggregation import ratings_disagree
from agreement.analysis.roles import rule_for
from agreement.models import AnalysisPlan
from agreement.selectors import dimension_role
from agreement.selectors.ratings import study_ratings, study_submitted_ratings
from annotation.selectors.adaptive import adaptive_cases_waiting
from annotation.services.adaptive import adaptive_rater_add
from annotation.services.adjudication_queue import adjudication_triggered
from studies.models import Study

# Cases decided at a time (their ratings are read together).
CHUNK = 500


def adaptive_cases_disagreeing(*, study: Study, case_ids: list[int]) -> set[int]:
    """The cases among ``case_ids`` whose counted main-phase ratings disagree by a
    dimension's aggregation rule."""
    submitted = study_submitted_ratings(study=study, case_ids=case_ids)
    data = study_ratings(study=study, pilot=False, submitted=submitted)
    plan = AnalysisPlan.objects.filter(study=study).first()
    rules = dict(plan.aggregation) if plan else {}
    dimensions = {d.key: d for d in study.rubric.dimensions.all()}
    n_cases, n_labels = len(data.case_ids), len(data.labels)
    disagree = np.zeros(n_cases, bool)
    for dimension in data.dimensions:
        role = dimension_role(dimensions[dimension.key])
        if not role.aggregated:
            continue  # no label to decide: nothing to disagree on
        units = ratings_disagree(
            dimension.key_matrix, rule=rule_for(rules, role), sides=role.preference
        )
        if dimension.scope != "case":
            units = units.reshape(n_cases, n_labels).any(axis=1)
        disagree |= units
    return {case for case, flag in zip(data.case_ids, disagree.tolist(), strict=True) if flag}


def adaptive_raters_extend(*, study: Study) -> int:
    """Give one more rater to each case the adaptive design extends now; returns how many
    cases got one. Idempotent: a second run adds nobody until the new raters submit."""
    if study.adaptive_raters is None or not study.is_open:
        return 0
    waiting = adaptive_cases_waiting(study=study)
    added = 0
    cases = sorted(waiting)
    for start in range(0, len(cases), CHUNK):
        chunk = cases[start : start + CHUNK]
        due = adaptive_cases_disagreeing(study=study, case_ids=chunk)
        due |= adjudication_triggered(study=study, case_ids=chunk)
        for case_id in sorted(due):
            if adaptive_rater_add(study=study, test_case_id=case_id, places=waiting[case_id]):
                added += 1
    return added

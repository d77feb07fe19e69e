"""Reads of the analysis plan: what each rubric dimension can be compared on (its role), and
the plan's minimum of valid ratings per item. No statistics: the plan's pages read these."""

from agreement.analysis.roles import DimensionRole, default_min_ratings
from agreement.models import AnalysisPlan
from studies.models import Study


def study_min_ratings(*, study: Study, plan: AnalysisPlan | None = None) -> int:
    """The analysis plan's minimum of valid ratings per item, or the default (2, or the
    design's raters per item when it plans fewer)."""
    if plan is None:
        plan = AnalysisPlan.objects.filter(study=study).first()
    if plan is not None and plan.min_ratings:
        return plan.min_ratings
    return default_min_ratings(study.raters_per_item)


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

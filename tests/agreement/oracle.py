"""The statistics a run should store, computed from scratch from the study's data as they
are now: what the stored result is compared with after bursts, races and redeliveries."""

from django.conf import settings

from agreement.analysis.agreement import with_intervals
from agreement.selectors.comparison import study_comparison_data
from agreement.services.recompute import _point_result, _with_comparison
from studies.models import Study


def result_from_scratch(*, study: Study) -> tuple[dict, int]:
    """The study's full result (point estimates, intervals, comparison) and its ratings."""
    point, data = _point_result(study=study)
    options = {"n_resamples": settings.AGREEMENT_BOOTSTRAP_RESAMPLES, "seed": study.blinding_seed}
    result = with_intervals(point, dimensions=data.dimensions, **options)
    comparison = study_comparison_data(study=study, data=data)
    return _with_comparison(result, comparison, **options), data.n_ratings

"""Writes for agreement, one concern per module.

``recompute`` (asking for a recompute, and the two stages of a run), ``qc`` (what the
QC rules' findings change: the automatic pause), ``judges`` (judge prompt templates and
imported outputs), ``plan`` (the analysis plan a coordinator sets). The names below are
the public ones of the first three: import them from here; the plan is used as a module.
"""

from .judges import JudgeTemplateError, judge_outputs_import, judge_template_save
from .qc import quality_enforce
from .recompute import (
    PointStage,
    agreement_enqueue,
    agreement_enqueue_if_stale,
    agreement_interval_stage,
    agreement_point_stage,
    agreement_recompute,
    agreement_request_recompute,
    agreement_sweep,
)

__all__ = [
    "JudgeTemplateError",
    "PointStage",
    "agreement_enqueue",
    "agreement_enqueue_if_stale",
    "agreement_interval_stage",
    "agreement_point_stage",
    "agreement_recompute",
    "agreement_request_recompute",
    "agreement_sweep",
    "judge_outputs_import",
    "judge_template_save",
    "quality_enforce",
]

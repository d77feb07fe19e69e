"""Writes for agreement, one concern per module.

``qc`` (what the QC rules' findings change: the automatic pause), ``judges`` (judge prompt
templates and imported outputs): the names below are their public ones, import them from
here. ``plan`` (the analysis plan a coordinator sets) and ``recompute`` (asking for a
recompute, and the two stages of a run) are used as modules: ``recompute`` loads the
statistics (numpy), which a web process does on its first need, not at start-up
(tests/config/test_lean_imports.py).
"""

from .judges import JudgeTemplateError, judge_outputs_import, judge_template_save
from .qc import quality_enforce

__all__ = [
    "JudgeTemplateError",
    "judge_outputs_import",
    "judge_template_save",
    "quality_enforce",
]

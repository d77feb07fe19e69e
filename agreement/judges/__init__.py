"""LLM judges: prompts, verdicts, calibration (see ``verdicts``)."""

from .verdicts import parse_verdict

__all__ = ["parse_verdict"]

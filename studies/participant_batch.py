"""Batches for crowd participants, as given by the app that owns assignments.

``studies`` sits below ``annotation`` and never writes its tables. A participant link with a
batch size gives each new participant that many sample cases inside the join's transaction,
under the study lock the join holds; so ``annotation`` registers here, when it loads, the
two steps the join asks for (see ``studies.services.participants._join_new``).
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class BatchSteps:
    # ``room(study=...)``: whether a sample case has a place free for a newcomer (it may
    # first release the cases of participants idle past their time-out).
    room: Callable[..., bool]
    # ``give(study=..., rater=..., size=...)``: the newcomer's batch; the sample cases given.
    give: Callable[..., int]


_steps: list[BatchSteps] = []


def batch_steps_register(steps: BatchSteps) -> None:
    """Register the steps; registering them again replaces them."""
    _steps[:] = [steps]


def batch_steps() -> BatchSteps:
    if not _steps:
        raise RuntimeError("No app gives participants their batch (annotation not loaded).")
    return _steps[0]

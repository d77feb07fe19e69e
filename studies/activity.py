"""What raters have done in a study, as told by the app that records ratings.

``studies`` sits below ``annotation`` and never reads its tables. The set-up rules still
need to know whether rating has begun (what raters saw can no longer change), so
``annotation`` registers a reader here when it loads, and the rules ask through it.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RatingActivity:
    # Whether, not how many: the pages ask on every view, and an answer by existence costs
    # the same at 30 assignments as at 30,000.
    assigned: bool  # a test case has been given to a rater
    started: bool  # one has been saved as a draft or submitted


_readers: list[Callable[..., RatingActivity]] = []


def activity_reader_register(reader: Callable[..., RatingActivity]) -> None:
    """Register ``reader(study=...)``; registering the same reader twice is harmless."""
    if reader not in _readers:
        _readers.append(reader)


def rating_activity(*, study) -> RatingActivity:
    assigned = started = False
    for reader in _readers:
        activity = reader(study=study)
        assigned = assigned or activity.assigned
        started = started or activity.started
    return RatingActivity(assigned=assigned, started=started)

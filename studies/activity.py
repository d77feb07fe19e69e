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


# --- What closing leaves undone ---------------------------------------------------------


@dataclass(frozen=True)
class UnfinishedWork:
    """What raters have not done yet, as closing would leave it: the Close page shows it
    and asks to confirm, and so does the API's close."""

    cases: int = 0  # sample test cases
    k: int = 0  # ratings each case is planned to get (the design's k, or every rater)
    under_k: int = 0  # sample cases with fewer submitted ratings than k
    unstarted: int = 0  # cases given to a rater and not started
    in_progress: int = 0  # cases a rater has started (a draft) and not submitted

    @property
    def left(self) -> bool:
        return bool(self.under_k or self.unstarted or self.in_progress)

    def sentences(self) -> list[str]:
        """Each thing left undone, in a sentence."""
        said = []
        if self.under_k:
            said.append(
                f"{self.under_k} of {self.cases} test case{'s' if self.cases != 1 else ''} "
                f"{'have' if self.under_k != 1 else 'has'} fewer than {self.k} submitted "
                f"rating{'s' if self.k != 1 else ''}."
            )
        if self.unstarted:
            said.append(
                f"{self.unstarted} case{'s' if self.unstarted != 1 else ''} given to raters "
                f"{'are' if self.unstarted != 1 else 'is'} not started."
            )
        if self.in_progress:
            said.append(
                f"{self.in_progress} case{'s' if self.in_progress != 1 else ''} "
                f"{'are' if self.in_progress != 1 else 'is'} in progress (a draft, not "
                "submitted): closing keeps the drafts out of every result."
            )
        return said

    def as_dict(self) -> dict:
        return {
            "cases": self.cases,
            "ratings_per_case": self.k,
            "cases_under_k": self.under_k,
            "unstarted": self.unstarted,
            "in_progress": self.in_progress,
            "sentences": self.sentences(),
        }


_unfinished_readers: list[Callable[..., UnfinishedWork]] = []


def unfinished_reader_register(reader: Callable[..., UnfinishedWork]) -> None:
    """Register ``reader(study=...)``; registering the same reader twice is harmless."""
    if reader not in _unfinished_readers:
        _unfinished_readers.append(reader)


def unfinished_work(*, study) -> UnfinishedWork:
    """What raters have left undone in the study (nothing, when no app records ratings)."""
    for reader in _unfinished_readers:
        return reader(study=study)
    return UnfinishedWork()

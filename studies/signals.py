"""Announcements from the lower apps to the ones above them.

``studies`` and ``annotation`` never import ``agreement``; when something the analysis reads
changes they announce it here, inside their transaction, and ``agreement`` decides what to
do (it requests a recompute once the transaction commits).
"""

from django.dispatch import Signal

# Sent with ``study_id`` and ``reason`` (a short word such as "rating" or "level") whenever
# an input of the study's analysis changes: a rating submitted, revised, imported or
# withdrawn; a rater excluded or reinstated; a level of measurement, the success criterion,
# the phase or the test cases changed.
analysis_inputs_changed = Signal()


def analysis_inputs_announce(
    *, study_id: int, reason: str, case_ids: list[int] | None = None, sender=None
) -> None:
    # ``case_ids``: the test cases whose ratings changed, when that is all that changed.
    analysis_inputs_changed.send(sender=sender, study_id=study_id, reason=reason, case_ids=case_ids)


# Sent with ``study_id`` and ``reason`` ("pilot", "open", "reopen", "rater_joined" or
# "rater_reinstated") when raters may be waiting for cases: the study began to accept
# ratings, or a rater joined it or was reinstated.
# ``annotation`` gives them their cases by the study's design once the change commits.
raters_need_cases = Signal()


def raters_need_cases_announce(*, study_id: int, reason: str, sender=None) -> None:
    raters_need_cases.send(sender=sender, study_id=study_id, reason=reason)

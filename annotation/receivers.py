"""What annotation does when ``studies`` announces that raters may be waiting for cases."""

from functools import partial

from django.db import transaction

from .assignment_jobs import assignment_auto_start


def raters_need_cases_received(sender, *, study_id: int, reason: str = "", **kwargs):
    # Only once the change is committed: the job must see the new rater or status, and a
    # rolled-back join must assign nothing. ``robust``: a failed assignment is logged and
    # recorded on its job; it must not turn the rater's join or the opening into an error.
    transaction.on_commit(partial(assignment_auto_start, study_id=study_id), robust=True)

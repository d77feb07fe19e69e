"""What annotation does when ``studies`` announces that raters may be waiting for cases."""

from functools import partial

from django.db import transaction

from .assignment_jobs import assignment_auto_start
from .services.participants import participants_time_out


def raters_need_cases_received(sender, *, study_id: int, reason: str = "", **kwargs):
    # Only once the change is committed: the job must see the new rater or status, and a
    # rolled-back join must assign nothing. ``robust``: a failed assignment is logged and
    # recorded on its job; it must not turn the rater's join or the opening into an error.
    if reason == "rater_joined":
        # A participant asking for work: first release the cases of the study's crowd
        # participants idle past their time-out, so the newcomer can be given them.
        transaction.on_commit(partial(participants_time_out, study_id=study_id), robust=True)
    transaction.on_commit(partial(assignment_auto_start, study_id=study_id), robust=True)

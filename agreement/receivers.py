"""What agreement does when a lower app announces that a study's analysis inputs changed."""

from functools import partial

from django.db import transaction

from .services.recompute import agreement_request_recompute
from .services.tallies import tallies_cases_touched, tallies_invalidate


def _already_requested(study_id: int) -> bool:
    """True when this transaction will already request the study's recompute on commit.

    An import of a thousand ratings announces a thousand changes; one request after commit
    covers them all. A callback registered inside a savepoint that is still open may yet be
    rolled back, so only one registered at this level or an outer one counts.
    """
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        return False
    open_savepoints = set(connection.savepoint_ids)
    for sids, callback, *_ in connection.run_on_commit:
        if getattr(callback, "agreement_study_id", None) == study_id and set(sids) <= (
            open_savepoints
        ):
            return True
    return False


def analysis_inputs_changed_received(
    sender, *, study_id: int, reason: str = "", case_ids: list[int] | None = None, **kwargs
):
    # In the change's own transaction: the cases whose ratings changed are the tallies'
    # next update; any other change (exclusion, rubric, cases, phase, unblinding) makes
    # the next run rebuild them from scratch.
    if case_ids is not None:
        tallies_cases_touched(study_id=study_id, case_ids=case_ids)
    else:
        tallies_invalidate(study_id=study_id)
    # Only enqueue, and only once the change is committed: a worker must read the new
    # data, and a rolled-back change must not cost a recompute.
    if _already_requested(study_id):
        return
    callback = partial(agreement_request_recompute, study_id=study_id)
    callback.agreement_study_id = study_id
    transaction.on_commit(callback)

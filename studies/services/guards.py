"""What every set-up write of one study does first: lock it, and refuse once it is frozen."""

from studies import selectors
from studies.errors import StudySetupError
from studies.models import Study


def locked_study(study: Study) -> Study:
    # Set-up writes and status changes of one study run one at a time: a status change
    # cannot slip between an edit's check and its write. The study row only, exclusively
    # (see ``studies.locks`` for the order and strengths); its rubric is read, not locked.
    return (
        Study.objects.select_for_update(of=("self",), no_key=True)
        .select_related("rubric")
        .get(pk=study.pk)
    )


def refuse_if_frozen(study: Study, what: str) -> None:
    reason = selectors.study_setup_locked_reason(study=study)
    if reason:
        raise StudySetupError(f"{reason} {what}")

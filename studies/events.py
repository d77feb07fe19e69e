"""The study's audit trail has one writer: every event goes through ``study_event_record``."""

from django.contrib.auth.models import AbstractBaseUser

from .models import Membership, Study, StudyEvent


def study_event_record(
    *,
    study: Study | None = None,
    study_id: int | None = None,
    actor: AbstractBaseUser | None,
    kind: StudyEvent.Kind,
    membership: Membership | None = None,
    reason: str = "",
    **detail,
) -> StudyEvent:
    """Record that ``actor`` did ``kind`` in a study; ``detail`` is kept as JSON.

    An anonymous or unsaved actor (the command line, a test) is recorded as no one.
    """
    if kind not in StudyEvent.Kind.values:
        raise ValueError(f"Not an audit event kind: {kind!r}.")
    if study is None and study_id is None:
        raise ValueError("Name the study, by instance or id.")
    return StudyEvent.objects.create(
        study_id=study.pk if study is not None else study_id,
        actor=actor if getattr(actor, "pk", None) else None,
        kind=kind,
        membership=membership,
        reason=reason,
        detail=detail,
    )

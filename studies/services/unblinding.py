"""Unblinding: the study lead reveals which system wrote which response, once, for good."""

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.models import Study, StudyEvent
from studies.signals import analysis_inputs_announce


class UnblindingError(ApplicationError):
    """The study cannot be unblinded now; the message says why."""


@transaction.atomic
def study_unblind(*, study: Study, actor: User, reason: str = "") -> Study:
    """Move a closed study to "unblinded" and record who did it and when."""
    study = Study.objects.select_for_update(of=("self",), no_key=True).get(pk=study.pk)
    if actor.pk != study.lead_id:
        raise UnblindingError("Only the study lead can unblind the study.")
    if study.is_unblinded:
        raise UnblindingError("The study is already unblinded.")
    if not study.awaits_unblinding:
        raise UnblindingError(
            f"The study is {study.get_status_display().lower()}; close it before unblinding."
        )
    study.status = Study.Status.UNBLINDED
    study.unblinded_at = timezone.now()
    study.save(update_fields=["status", "unblinded_at"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.UNBLINDED,
        reason=reason.strip(),
        protocol_fingerprint=study.protocol_fingerprint,
        unblinded_at=study.unblinded_at.isoformat(),
    )
    # The analysis now reads preferences in the systems' order and estimates per system.
    analysis_inputs_announce(study_id=study.pk, reason="unblinded")
    return study

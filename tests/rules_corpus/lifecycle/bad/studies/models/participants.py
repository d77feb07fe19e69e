"""A status compared in a models module other than the study's: the package is not the owner,
``studies/models/study.py`` is (its predicates)."""
from django.db import models


class ParticipantLink(models.Model):
    @property
    def accepts_participants(self) -> bool:
        return self.study.status == "open"  # flagged: lifecycle-status-compared

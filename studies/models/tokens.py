"""Personal keys to the HTTP API."""

import uuid

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A personal key to the HTTP API; it acts as its user, with that user's study roles.

    Only the SHA-256 of the secret is stored: the secret is shown once, when created.
    Written only by ``studies.services.tokens``.
    """

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    # The first characters of the secret, so a person can tell their tokens apart.
    prefix = models.CharField(max_length=12)
    secret_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

import importlib
import sys

import pytest

PROPER_KEY = "k3y-" + "a1b2c3d4e5f6g7h8i9j0" * 3


@pytest.fixture
def production_settings(settings, monkeypatch):
    """The production settings module, applied over the test settings, except what must stay
    the test's own: the test database, static files without a manifest, the cache, Celery."""
    monkeypatch.setenv("SECRET_KEY", PROPER_KEY)
    monkeypatch.setenv("ALLOWED_HOSTS", "testserver,concord.example.org")
    for name in ("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_PRELOAD"):
        monkeypatch.delenv(name, raising=False)
    sys.modules.pop("config.settings.production", None)
    try:
        production = importlib.import_module("config.settings.production")
    finally:
        sys.modules.pop("config.settings.production", None)
    kept = {"DATABASES", "STORAGES", "CACHES", "PASSWORD_HASHERS"}
    for name in dir(production):
        if name.isupper() and name not in kept and not name.startswith("CELERY_"):
            setattr(settings, name, getattr(production, name))
    return settings

"""Security headers on every page, as production sends them, and no inline script anywhere."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Assignment
from tests.annotation.support import consent_all

ROOT = Path(__file__).resolve().parents[2]
HTTPS = {"x-forwarded-proto": "https"}

pytestmark = [
    pytest.mark.django_db,
    # WhiteNoise warns that the tests have no collected static files.
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


def directives(header: str) -> dict[str, set[str]]:
    parsed = {}
    for part in header.split(";"):
        name, *sources = part.split()
        parsed[name] = set(sources)
    return parsed


def assert_security_headers(response):
    csp = directives(response.headers["Content-Security-Policy"])
    assert csp["default-src"] == {"'self'"}
    # No inline script, no eval, no inline event handler: scripts come from our files only.
    assert csp["script-src"] == {"'self'"}
    assert csp["style-src"] == {"'self'"}
    assert csp["object-src"] == {"'none'"}
    assert csp["base-uri"] == {"'none'"}
    assert csp["frame-ancestors"] == {"'none'"}
    assert csp["form-action"] == {"'self'"}
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
    permissions = response.headers["Permissions-Policy"]
    for feature in ("camera", "microphone", "geolocation", "payment"):
        assert f"{feature}=()" in permissions
    hsts = response.headers["Strict-Transport-Security"]
    assert re.fullmatch(r"max-age=\d+; includeSubDomains", hsts)
    assert int(hsts.split(";")[0].split("=")[1]) >= 60 * 60 * 24 * 30


def test_every_kind_of_page_carries_the_headers_in_production(
    production_settings, client, study, lead, rater
):
    consent_all(study)
    assignment = Assignment.objects.filter(rater__user=rater).first()
    anonymous = [reverse("login"), "/no-such-page/", reverse("healthz")]
    for path in anonymous:
        response = client.get(path, headers=HTTPS)
        assert response.status_code in (200, 404), path
        assert_security_headers(response)
    client.force_login(rater)
    response = client.get(reverse("annotation:rate", args=[assignment.uuid]), headers=HTTPS)
    assert response.status_code == 200
    assert_security_headers(response)
    client.force_login(lead)
    for name in ("agreement:study", "studies:rubric", "annotation:raters"):
        response = client.get(reverse(name, args=[study.slug]), headers=HTTPS)
        assert response.status_code == 200, name
        assert_security_headers(response)
    # A refused form (here a failed sign-in) carries them too.
    response = client.post(reverse("login"), {"username": "x", "password": "y"}, headers=HTTPS)
    assert response.status_code == 200
    assert_security_headers(response)


def test_production_sends_plain_http_to_https(production_settings, client):
    response = client.get(reverse("login"))
    assert response.status_code == 301
    assert response["Location"] == "https://testserver/accounts/login/"


def test_production_cookies_are_secure(production_settings):
    assert production_settings.SESSION_COOKIE_SECURE and production_settings.CSRF_COOKIE_SECURE


def test_the_policy_is_sent_outside_production_too(client):
    # So that the browser tests run under the policy production sends.
    response = client.get(reverse("login"))
    assert directives(response.headers["Content-Security-Policy"])["script-src"] == {"'self'"}


INLINE_HANDLER = re.compile(r"""<[^>]*\son[a-z]+\s*=""", re.IGNORECASE)
SCRIPT_TAG = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)


def test_no_template_has_inline_script_or_event_handlers():
    found = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        found += [f"{name}: inline handler" for _ in INLINE_HANDLER.finditer(text)]
        for match in SCRIPT_TAG.finditer(text):
            attributes = match.group(1)
            # json_script's <script type="application/json"> is data the browser never runs.
            if "src=" not in attributes and "application/json" not in attributes:
                found.append(f"{name}: inline <script>")
        if "javascript:" in text.lower():
            found.append(f"{name}: javascript: URL")
    assert found == []

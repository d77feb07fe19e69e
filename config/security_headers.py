"""The Content-Security-Policy and Permissions-Policy headers, which Django 5.2 does not send.

The policy is one fixed string for every page: no page has inline script or inline event
handlers (their JavaScript lives in ``static/js``), so no nonce or hash is needed. The other
security headers come from Django's own settings (``SECURE_*``, ``X_FRAME_OPTIONS``).
"""

from django.conf import settings


def content_security_policy(directives: dict[str, list[str]]) -> str:
    """The header value for ``directives`` ({"script-src": ["'self'"], ...})."""
    return "; ".join(" ".join([name, *sources]).strip() for name, sources in directives.items())


class SecurityHeadersMiddleware:
    """Adds the CSP and Permissions-Policy headers unless the view set its own."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.headers = {
            "Content-Security-Policy": content_security_policy(settings.CONTENT_SECURITY_POLICY),
            "Permissions-Policy": ", ".join(
                f"{feature}=()" for feature in settings.PERMISSIONS_POLICY_DENIED
            ),
        }

    def __call__(self, request):
        response = self.get_response(request)
        for name, value in self.headers.items():
            if value:
                response.headers.setdefault(name, value)
        return response

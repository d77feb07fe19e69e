"""The HTTP API's sign-in: a personal token (``studies.services.tokens``) in a header.

Named in settings (``DEFAULT_AUTHENTICATION_CLASSES``); the rest of the API's request
handling is shared plumbing in ``core/api_request.py``.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication

from .services import tokens


class TokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer concord_...``: the request acts as the token's user."""

    def authenticate(self, request):
        header = request.headers.get("Authorization", "")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise exceptions.AuthenticationFailed(
                "Send the token as 'Authorization: Bearer <token>'."
            )
        user = tokens.api_token_user(secret=secret.strip())
        if user is None:
            raise exceptions.AuthenticationFailed("The token is unknown or has been revoked.")
        return user, None

    def authenticate_header(self, request):
        # Its presence makes a missing token a 401 (not a 403).
        return 'Bearer realm="concord"'


class TokenAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = TokenAuthentication
    name = "token"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal token, created on the API tokens page (shown once).",
        }

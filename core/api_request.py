"""How the HTTP API reads a request: the JSON body, the pages, the throttles.

Kept apart from ``core/api.py`` because Django REST framework imports these classes
(named in settings) while it is itself loading; they import none of its views. The
token sign-in is the studies app's (``studies/api_auth.py``): tokens are its model.
"""

import logging

from django.conf import settings
from rest_framework import exceptions
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from core import throttle
from core.user_input import UserInputError, json_read

logger = logging.getLogger(__name__)

# A JSON body may carry a whole test-case file (at most 10 MB as a file; JSON escapes add a
# little), so the API's limit is larger than the pages' 2 MB for a rating's JSON. Django's
# own limit on what it reads into memory (DATA_UPLOAD_MAX_MEMORY_SIZE) is set to the same.
MAX_JSON_BODY_BYTES = 12 * 1024 * 1024


# Bodies -----------------------------------------------------------------------------------


class BodyTooLarge(exceptions.APIException):
    status_code = 413
    default_code = "too_large"
    default_detail = (
        f"The body is larger than {MAX_JSON_BODY_BYTES // 2**20} MB; send a file or split it."
    )


class BoundedJSONParser(JSONParser):
    """JSON read by the project's one reader of user JSON: size, nesting, NaN bounded, and
    NUL or lone surrogates (which PostgreSQL cannot store) refused with the field named."""

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        if length > MAX_JSON_BODY_BYTES:
            raise BodyTooLarge()
        data = stream.read(MAX_JSON_BODY_BYTES + 1) if stream is not None else b""
        if len(data) > MAX_JSON_BODY_BYTES:
            raise BodyTooLarge()
        try:
            return json_read(data.decode("utf-8"), max_chars=MAX_JSON_BODY_BYTES)
        except UnicodeDecodeError:
            raise exceptions.ParseError("The body is not UTF-8.") from None
        except UserInputError as error:
            raise exceptions.ParseError(f"The body cannot be read: {error.reason}.") from None


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class _CacheSafe(SimpleRateThrottle):
    """Counts per user or per address in the cache; if the cache is down, nothing is held up."""

    scope_key = ""

    def get_rate(self):
        return settings.API_THROTTLE_RATES[self.scope_key]

    def get_ident(self, request):
        return throttle.client_address(request)

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except throttle.cache_down_errors():
            logger.warning("API throttle skipped: the cache is unreachable.")
            return True


class UserThrottle(_CacheSafe, UserRateThrottle):
    scope_key = "user"


class AnonThrottle(_CacheSafe, AnonRateThrottle):
    scope_key = "anon"


class SchemaThrottle(_CacheSafe, AnonRateThrottle):
    """The OpenAPI schema, per address: about a second of a web worker's time each, anyone
    may ask, so far fewer than other anonymous requests (``API_THROTTLE_SCHEMA``)."""

    scope = scope_key = "schema"

    def get_cache_key(self, request, view):
        # Everyone, signed in or not, asks it anonymously (SERVE_AUTHENTICATION is empty).
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def anonymous_refusal_throttled(request, view) -> exceptions.Throttled | None:
    """An anonymous request refused for want of a valid token (401) counts against the
    address's anonymous rate, like any anonymous request: token guessing is throttled.
    DRF checks the permissions (and the token) before the throttles, so the refusal is
    counted here; the answer, once over the rate (``Throttled``, 429), or None."""
    throttle = AnonThrottle()
    if throttle.allow_request(request, view):
        return None
    return exceptions.Throttled(throttle.wait())

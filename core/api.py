"""What every endpoint of the HTTP API shares: one error shape, pages, reading bodies.

The endpoints themselves live beside the pages of their app (``studies/api.py``,
``annotation/api.py``, ``agreement/api.py``) and call the same access helpers, forms and
services; ``config/api_urls.py`` gathers them under ``/api/v1/``. See docs/api.md.
"""

import logging
from collections.abc import Iterable

from django.conf import settings
from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404, JsonResponse
from django.views import defaults
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.api_request import BodyTooLarge, Pagination, anonymous_refusal_throttled
from core.errors import ApplicationError
from core.user_input import quoted, unstorable

logger = logging.getLogger(__name__)


__all__ = [
    "Pagination",
    "body_object",
    "bad_request",
    "error_body",
    "exception_handler",
    "file_download",
    "form_errors",
    "page_not_found",
    "paginated",
    "server_error",
]


def paginated(name: str, serializer: type[serializers.Serializer]) -> serializers.Serializer:
    """The schema of one page of ``Pagination``'s answer: the count, the links to the pages
    before and after, and the page's items. The endpoints are functions, so the schema
    generator cannot see that they paginate: each list's response names it with this."""
    return inline_serializer(
        name,
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer(many=True),
        },
    )


def body_object(request, *, fields: Iterable[str], what: str = "a field of this request") -> dict:
    """The request's body as an object (a JSON array or a form's lists are refused) whose
    every field is one of ``fields``.

    Every endpoint that takes a body (or none: ``fields=()``) reads it here, before it looks
    at anything else the body says, so a misspelt field is refused by name with the names
    to use (``what`` says what it is not) and nothing is written; left out unseen, it would
    take its default. A body free-form by design (a rubric's definition) names its
    top-level fields; a multipart upload's file is one of them.
    """
    data = request.data
    if hasattr(data, "dict"):  # a form or multipart body
        data = data.dict()
        # A JSON body was checked as it was read (BoundedJSONParser); a form's fields are
        # checked here by the same rule. (Django decodes them with errors replaced, so only a
        # NUL can come this way, not a lone surrogate.)
        for name, value in data.items():
            what_unstorable = unstorable(value) if isinstance(value, str) else None
            if what_unstorable:
                raise exceptions.ParseError(
                    f'The body cannot be read: the field "{quoted(name)}" contains '
                    f"{what_unstorable}, which cannot be stored."
                )
    if not isinstance(data, dict):
        raise exceptions.ParseError("The body must be a JSON object.")
    unknown_fields_refuse(data, fields, what=what)
    return data


class _AnyAccept(DefaultContentNegotiation):
    """A file's negotiation: the file is the view's own response, whatever the client
    accepts (``Accept: application/zip`` from a client generated from the schema); a
    refusal is JSON, in the API's shape."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def file_download(view):
    """Mark a function view (under ``api_view``) that answers with a file: any ``Accept``
    is served (DRF would refuse one naming the file's type with 406)."""
    view.content_negotiation_class = _AnyAccept
    return view


def form_errors(form) -> exceptions.ValidationError:
    """A Django form's errors (the pages' own validation) as the API's validation error."""
    problems = []
    for field, errors in form.errors.items():
        for error in errors:
            problems.append(error if field == "__all__" else f"{field}: {error}")
    return exceptions.ValidationError(problems)


def unknown_fields_refuse(data: dict, fields: Iterable[str], *, what: str, use=None) -> None:
    """Refuse a body that sends a field not in ``fields``: a misspelt one would otherwise be
    left out unseen (its default taken, or the write made without it). ``what`` says what
    the name is not ("a field of an account"); ``use`` the names listed (``fields``).
    ``body_object`` asks it of every body; an endpoint whose fields depend on another field
    (the sample size's calculator) asks it again with the narrower list."""
    fields = list(fields)
    unknown = sorted(set(data) - set(fields))
    if unknown:
        listed = ", ".join(use if use is not None else fields)
        tail = f"use {listed}" if listed else "this request takes none"
        raise exceptions.ValidationError(
            [f"{quoted(name)}: not {what}; {tail}." for name in unknown]
        )


def row_fields_refuse(rows, fields: Iterable[str], *, where: str, what: str) -> None:
    """Refuse an object of ``rows`` (a list a body sends, e.g. a rubric's rules) that has a
    field not in ``fields``, as ``body_object`` refuses one of the body's own: before the
    rows are read, so a misspelt one is named even where the write is refused for another
    reason. Anything but a list of objects is left to the endpoint to refuse."""
    if not isinstance(rows, list):
        return
    fields = list(fields)
    problems = [
        f"{where}[{number}].{quoted(name)}: not {what}; use {', '.join(fields)}."
        for number, row in enumerate(rows)
        if isinstance(row, dict)
        for name in sorted(set(row) - set(fields))
    ]
    if problems:
        raise exceptions.ValidationError(problems[:50])


def scalar_fields(data: dict, fields) -> dict:
    """The named fields of a body, each a text, a number, true/false or null."""
    problems = [
        f"{name}: must be a text, a number or null."
        for name in fields
        if name in data and isinstance(data[name], dict | list)
    ]
    if problems:
        raise exceptions.ValidationError(problems)
    return {name: data[name] for name in fields if name in data}


# Errors -----------------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    status = serializers.IntegerField()
    code = serializers.CharField()
    message = serializers.CharField()
    problems = serializers.ListField(child=serializers.CharField())


class ErrorResponseSerializer(serializers.Serializer):
    error = ErrorSerializer()


def _problems(detail) -> list[str]:
    if isinstance(detail, dict):
        lines = []
        for field, value in detail.items():
            for line in _problems(value):
                lines.append(
                    line if field in ("non_field_errors", "__all__") else f"{field}: {line}"
                )
        return lines
    if isinstance(detail, list):
        return [line for item in detail for line in _problems(item)]
    return [str(detail)]


def error_body(*, status: int, code: str, message: str, problems=()) -> dict:
    return {
        "error": {"status": status, "code": code, "message": message, "problems": list(problems)}
    }


def exception_handler(exc, context):
    """Every refusal in one shape: {"error": {status, code, message, problems}}.

    Services' refusals (``ApplicationError``) are 400 with their message and problems;
    anything else that is not an API exception stays a logged 500, as on the pages.
    """
    if isinstance(exc, ApplicationError):
        # A problem may be an object that says itself (a table reader's TableProblem).
        problems = [str(problem) for problem in exc.problems]
        return Response(
            error_body(
                status=400, code="refused", message=exc.message or str(exc), problems=problems
            ),
            status=400,
        )
    if isinstance(exc, SuspiciousOperation):
        # Django's own refusals of a body (too large, too many fields), raised while the
        # body is read: DRF would let them through to Django's HTML 400.
        exc = _api_exception(exc)
    elif isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        exc = anonymous_refusal_throttled(context["request"], context["view"]) or exc
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound("Not found.")
    elif isinstance(exc, PermissionDenied):
        # A refusal that says why (the blinding, say) keeps its reason; a bare one is the
        # role's.
        exc = exceptions.PermissionDenied(
            str(exc) or "Your role in this study does not allow this."
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        problems = _problems(exc.detail)
        message = "The request has problems; nothing was changed."
    else:
        problems = []
        message = " ".join(_problems(exc.detail))
    response.data = error_body(
        status=response.status_code,
        code=getattr(exc, "default_code", "error"),
        message=message,
        problems=problems,
    )
    return response


def _api_exception(exc: SuspiciousOperation) -> exceptions.APIException:
    if isinstance(exc, RequestDataTooBig):
        # Django's own bound, equal to the JSON parser's unless a deployment changed it.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        size = f"{limit // 2**20} MB" if limit % 2**20 == 0 else f"{limit:,} bytes"
        return BodyTooLarge(f"The body is larger than {size}; send a file or split it.")
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return exceptions.ParseError("The body has too many fields or files.")
    logger.warning("API request refused as suspicious: %s", exc)
    return exceptions.ParseError("The request cannot be read.")


# Django's own error pages (config/urls.py's handler400, handler404, handler500): under
# /api/ the API's shape, everywhere else the pages' templates. They answer what happens
# outside DRF's views: a body Django refuses before a view runs, an /api/ address outside
# /api/v1/, an exception no view caught.


def _under_api(request) -> bool:
    return request.path.startswith("/api/")


def _json(exc: exceptions.APIException) -> JsonResponse:
    return JsonResponse(
        error_body(
            status=exc.status_code,
            code=exc.default_code,
            message=" ".join(_problems(exc.detail)),
        ),
        status=exc.status_code,
    )


# A request a page's script sent (the rating screen's autosave asks for JSON) that Django
# refused before any view ran: said in JSON, as ``{"error": ...}``, which the script shows.
BODY_TOO_LARGE = "This is too large to send to the server; nothing was saved."
REQUEST_UNREADABLE = "The server could not read this request; nothing was saved."


def bad_request(request, exception):
    if not _under_api(request):
        if "application/json" in request.headers.get("Accept", ""):
            too_large = isinstance(exception, RequestDataTooBig)
            return JsonResponse(
                {"error": BODY_TOO_LARGE if too_large else REQUEST_UNREADABLE},
                status=413 if too_large else 400,
            )
        return defaults.bad_request(request, exception)
    if isinstance(exception, SuspiciousOperation):
        return _json(_api_exception(exception))
    return _json(exceptions.ParseError("The request cannot be read."))


def page_not_found(request, exception):
    if not _under_api(request):
        return defaults.page_not_found(request, exception)
    return _json(exceptions.NotFound("There is no such API endpoint."))


def server_error(request):
    if not _under_api(request):
        return defaults.server_error(request)
    return JsonResponse(
        error_body(
            status=500,
            code="server_error",
            message="The server failed while answering; the error is logged. Try again "
            "later, and tell the administrator if it happens again.",
        ),
        status=500,
    )


@extend_schema(exclude=True)
@api_view(["GET", "POST", "PUT", "PATCH", "DELETE"])
@authentication_classes([])
@permission_classes([AllowAny])
def not_found(request, rest=""):
    """Any other address under /api/v1/: the API's 404, in its own shape."""
    return Response(
        error_body(status=404, code="not_found", message="There is no such API endpoint."),
        status=404,
    )

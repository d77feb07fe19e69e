"""The HTTP API's protocol document: the file behind the study's fingerprint, released
once the study is unblinded, as the study's Protocol link serves it."""

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view

from core.api import ErrorResponseSerializer, file_download

from . import access
from .protocol_download import protocol_response

ERRORS = {code: ErrorResponseSerializer for code in (401, 403, 404, 429)}


@extend_schema(
    summary="The protocol document (protocol.json), once the study is unblinded",
    description=(
        "The page's own file, streamed: its SHA-256 is the study's `protocol_fingerprint`. "
        "It holds the blinding secret, so before unblinding it is refused (403, the reason "
        "given) to everyone, the lead included."
    ),
    responses={(200, "application/json"): OpenApiTypes.OBJECT, **ERRORS},
)
@api_view(["GET"])
@file_download
def study_protocol(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return protocol_response(study=study)


urlpatterns = [
    path("studies/<slug:slug>/protocol/", study_protocol, name="protocol"),
]

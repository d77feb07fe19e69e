"""The HTTP API's removal of every test case of a draft study (to import a corrected
file), as the test cases page's Remove button: the same service and its frozen rule."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object

from . import access, services

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


@extend_schema(
    summary="Remove every test case, response and system of a study (until it opens)",
    description=(
        "As the test cases page's Remove button: recorded in the study's history; refused "
        "(400) once the study has opened. Sent again, it removes nothing more."
    ),
    request=None,
    responses={
        200: inline_serializer("CasesRemoved", {"removed": serializers.IntegerField()}),
        **ERRORS,
    },
)
@api_view(["POST"])
def study_cases_remove(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    body_object(request, fields=())
    return Response({"removed": services.test_cases_remove_all(study=study, actor=request.user)})


urlpatterns = [
    path("studies/<slug:slug>/cases/remove/", study_cases_remove, name="cases_remove"),
]

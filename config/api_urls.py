"""The HTTP API, version 1: each app's endpoints, the OpenAPI schema and its browsable page."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerSplitView

import agreement.api
import annotation.api
import annotation.api_adjudication
import annotation.api_ratings_import
import studies.api
from core import api

app_name = "api"

urlpatterns = [
    *studies.api.urlpatterns,
    *annotation.api.urlpatterns,
    *annotation.api_adjudication.urlpatterns,
    *annotation.api_ratings_import.urlpatterns,
    *agreement.api.urlpatterns,
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:openapi"), name="docs"),
    re_path(r"^(?P<rest>.*)$", api.not_found, name="not_found"),
]

"""The HTTP API, version 1: each app's endpoints, the OpenAPI schema and its browsable page."""

from django.urls import path, re_path

import agreement.api
import agreement.api_adjudication_admin
import agreement.api_judges
import agreement.api_monitor
import agreement.api_qc
import agreement.api_results
import agreement.api_robustness
import agreement.api_sample_size
import annotation.api
import annotation.api_adjudication
import annotation.api_adjudication_outcomes
import annotation.api_assignment
import annotation.api_calibration
import annotation.api_comments
import annotation.api_exports
import annotation.api_onboarding
import annotation.api_participants
import annotation.api_ratings_import
import annotation.api_training
import annotation.api_welfare
import annotation.api_worksheet
import studies.api
import studies.api_accounts
import studies.api_cases_remove
import studies.api_participants
import studies.api_protocol
import studies.api_quality
import studies.api_webhooks
from config import api_schema
from core import api

app_name = "api"

urlpatterns = [
    *studies.api.urlpatterns,
    *studies.api_webhooks.urlpatterns,
    *annotation.api.urlpatterns,
    *annotation.api_assignment.urlpatterns,
    *annotation.api_welfare.urlpatterns,
    *annotation.api_comments.urlpatterns,
    *annotation.api_exports.urlpatterns,
    *annotation.api_adjudication.urlpatterns,
    *annotation.api_ratings_import.urlpatterns,
    *agreement.api.urlpatterns,
    *studies.api_accounts.urlpatterns,
    *annotation.api_onboarding.urlpatterns,
    *agreement.api_qc.urlpatterns,
    *agreement.api_sample_size.urlpatterns,
    *agreement.api_results.urlpatterns,
    *agreement.api_judges.urlpatterns,
    # Set-up actions the pages had alone: the protocol, removing cases, quality, training.
    *studies.api_protocol.urlpatterns,
    *studies.api_cases_remove.urlpatterns,
    *studies.api_quality.urlpatterns,
    *annotation.api_training.urlpatterns,
    # The calibration call, the worksheet import, decided adjudications and the lead's
    # adjudication actions, the robustness check: pages' actions, as endpoints.
    *annotation.api_calibration.urlpatterns,
    *annotation.api_worksheet.urlpatterns,
    *annotation.api_adjudication_outcomes.urlpatterns,
    *agreement.api_adjudication_admin.urlpatterns,
    *agreement.api_robustness.urlpatterns,
    # Participant links (issue 29) and their payments file.
    *studies.api_participants.urlpatterns,
    *annotation.api_participants.urlpatterns,
    # Monitored collection of the primary question: its state, the lead's choice and stop.
    *agreement.api_monitor.urlpatterns,
    path("openapi.json", api_schema.openapi, name="openapi"),
    path("docs/", api_schema.docs, name="docs"),
    re_path(r"^(?P<rest>.*)$", api.not_found, name="not_found"),
]

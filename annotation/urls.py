from django.urls import path

from . import views
from .views import (
    adjudication,
    calibration,
    comments,
    overview,
    participants,
    people,
    preview,
    profile,
    ratings_import,
    results,
    welfare,
)

app_name = "annotation"

urlpatterns = [
    # Rating.
    path("s/<slug:slug>/cases/", views.study_assignments, name="assignments"),
    path("s/<slug:slug>/next/", views.study_next, name="next"),
    path("rate/<uuid:assignment_uuid>/", views.assignment_rate, name="rate"),
    path("rate/<uuid:assignment_uuid>/draft/", views.assignment_draft, name="draft"),
    path("rate/<uuid:assignment_uuid>/skip/", views.assignment_skip, name="skip"),
    path("rate/<uuid:assignment_uuid>/unskip/", views.assignment_unskip, name="unskip"),
    path("signed-in/", views.session_restored, name="session_restored"),
    # Adjudicators: the queue and the adjudication screen.
    path(
        "s/<slug:slug>/adjudication/",
        adjudication.adjudication_queue,
        name="adjudication_queue",
    ),
    path(
        "s/<slug:slug>/adjudication/<uuid:adjudication_uuid>/",
        adjudication.adjudication_screen,
        name="adjudicate",
    ),
    path(
        "s/<slug:slug>/adjudication/<uuid:adjudication_uuid>/draft/",
        adjudication.adjudication_draft,
        name="adjudication_draft",
    ),
    # Coordinators: decided cases; the lead makes one a gold item.
    path(
        "s/<slug:slug>/adjudications/",
        adjudication.adjudication_outcomes,
        name="adjudication_outcomes",
    ),
    path(
        "s/<slug:slug>/adjudications/<uuid:adjudication_uuid>/gold/",
        adjudication.adjudication_make_gold,
        name="adjudication_make_gold",
    ),
    # Crowd participants: where they stand, declining consent, finishing; the payments file.
    path("s/<slug:slug>/participant/", participants.participant_status, name="participant"),
    path(
        "s/<slug:slug>/participant/decline/",
        participants.participant_decline,
        name="participant_decline",
    ),
    path(
        "s/<slug:slug>/participant/finish/",
        participants.participant_finish,
        name="participant_finish",
    ),
    path(
        "s/<slug:slug>/participant-links/<uuid:link_uuid>/payments.csv",
        participants.participant_payments,
        name="participant_payments",
    ),
    # Before the first item.
    path("s/<slug:slug>/start/", views.study_consent, name="consent"),
    path("s/<slug:slug>/practice/", views.study_practice, name="practice"),
    path("s/<slug:slug>/training/", views.study_training, name="training"),
    path(
        "s/<slug:slug>/training/<uuid:item_uuid>/",
        views.training_item_answer,
        name="training_item",
    ),
    path("s/<slug:slug>/qualification/", views.study_qualification, name="qualification"),
    # The rater's own profile (optional, under its own consent); only the rater sees it.
    path("s/<slug:slug>/profile/", profile.rater_profile, name="profile"),
    # After the last item, and at any time.
    path("s/<slug:slug>/self-check/", views.study_self_check, name="self_check"),
    path("s/<slug:slug>/feedback/", views.study_feedback, name="feedback"),
    path("s/<slug:slug>/withdraw/", views.study_withdraw, name="withdraw"),
    # Coordinators: preparing the raters.
    path("s/<slug:slug>/onboarding/", views.onboarding_setup, name="onboarding"),
    path("s/<slug:slug>/onboarding/new/", views.training_item_edit, name="training_item_new"),
    path(
        "s/<slug:slug>/onboarding/<uuid:item_uuid>/",
        views.training_item_edit,
        name="training_item_edit",
    ),
    path(
        "s/<slug:slug>/onboarding/<uuid:item_uuid>/key/",
        views.training_item_key,
        name="training_item_key",
    ),
    path(
        "s/<slug:slug>/onboarding/<uuid:item_uuid>/delete/",
        views.training_item_delete,
        name="training_item_delete",
    ),
    # Coordinators: the comments digest (QC-006); each marks comments read for themselves.
    path("s/<slug:slug>/comments/", comments.comments_digest_page, name="comments"),
    path("s/<slug:slug>/comments/read/", comments.comments_mark_read_view, name="comments_read"),
    # Coordinators: the calibration call (protocol 4.2); only the lead records one.
    path("s/<slug:slug>/calibration-call/", calibration.calibration_call, name="calibration_call"),
    path(
        "s/<slug:slug>/calibration-call/record/",
        calibration.calibration_call_record,
        name="calibration_call_record",
    ),
    # Coordinators: the study at a glance, people, the rubric preview, results.
    # (Invitations and unblinding are the studies app's pages.)
    path("s/<slug:slug>/", overview.study_overview, name="overview"),
    path("s/<slug:slug>/rubric/preview/", preview.rubric_preview, name="rubric_preview"),
    path("s/<slug:slug>/raters/", people.raters, name="raters"),
    path("s/<slug:slug>/raters/add/", people.rater_add, name="rater_add"),
    path("s/<slug:slug>/raters/assign/", people.assign, name="assign"),
    path("s/<slug:slug>/raters/assign/<uuid:job_uuid>/", people.assign_job, name="assign_job"),
    path(
        "s/<slug:slug>/raters/assign/<uuid:job_uuid>/status/",
        people.assign_job_status,
        name="assign_job_status",
    ),
    path("s/<slug:slug>/invitations/", people.invitation_create, name="invitation_create"),
    path("s/<slug:slug>/welfare/", welfare.welfare_settings, name="welfare"),
    path("s/<slug:slug>/results/", results.results, name="results"),
    path("s/<slug:slug>/results/export/<str:fmt>/", results.export, name="export"),
    path(
        "s/<slug:slug>/results/export/<str:fmt>/prepare/",
        results.export_prepare,
        name="export_prepare",
    ),
    path(
        "s/<slug:slug>/results/exports/<uuid:job_uuid>/",
        results.export_job,
        name="export_job",
    ),
    path(
        "s/<slug:slug>/results/exports/<uuid:job_uuid>/status/",
        results.export_job_status,
        name="export_job_status",
    ),
    path(
        "s/<slug:slug>/results/exports/<uuid:job_uuid>/download/",
        results.export_job_download,
        name="export_job_download",
    ),
    path("s/<slug:slug>/results/import/", results.worksheet_import, name="worksheet_import"),
    path(
        "s/<slug:slug>/results/import/<uuid:job_uuid>/",
        results.worksheet_job,
        name="worksheet_job",
    ),
    path(
        "s/<slug:slug>/results/import/<uuid:job_uuid>/status/",
        results.worksheet_job_status,
        name="worksheet_job_status",
    ),
    path(
        "s/<slug:slug>/results/ratings-import/",
        ratings_import.ratings_import,
        name="ratings_import",
    ),
    path(
        "s/<slug:slug>/results/ratings-import/<uuid:job_uuid>/",
        ratings_import.ratings_import_job,
        name="ratings_import_job",
    ),
    path(
        "s/<slug:slug>/results/ratings-import/<uuid:job_uuid>/status/",
        ratings_import.ratings_import_status,
        name="ratings_import_status",
    ),
]

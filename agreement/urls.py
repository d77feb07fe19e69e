from django.urls import path

from .views import adjudication_actions
from .views import report as report_views
from .views import sample_size as sample_size_views
from .views import statistics as views

app_name = "agreement"

urlpatterns = [
    path("s/<slug:slug>/agreement/", views.study_agreement_page, name="study"),
    path("s/<slug:slug>/agreement/status/", views.study_agreement_status, name="status"),
    path("s/<slug:slug>/quality/", views.study_quality, name="qc"),
    path(
        "s/<slug:slug>/adjudication/send/",
        adjudication_actions.adjudication_send_view,
        name="adjudication_send",
    ),
    path(
        "s/<slug:slug>/adjudication/switch/",
        adjudication_actions.adjudication_switch_view,
        name="adjudication_switch",
    ),
    path("s/<slug:slug>/ranking/", views.study_ranking_page, name="ranking"),
    path("s/<slug:slug>/ranking/compute/", views.study_ranking_compute, name="ranking_compute"),
    path(
        "s/<slug:slug>/analysis/<uuid:job_uuid>/status/",
        views.analysis_job_status,
        name="analysis_status",
    ),
    path("s/<slug:slug>/judges/", views.study_judges, name="judges"),
    path("s/<slug:slug>/judges/prompts.jsonl", views.judge_prompts, name="judge_prompts"),
    path("s/<slug:slug>/judges/outputs.csv", views.judge_outputs_export, name="judge_export"),
    path(
        "s/<slug:slug>/judges/<uuid:judge_uuid>/",
        views.judge_calibration_page,
        name="judge_calibration",
    ),
    path(
        "s/<slug:slug>/judges/<uuid:judge_uuid>/compute/",
        views.judge_calibration_compute,
        name="judge_calibration_compute",
    ),
    path("s/<slug:slug>/report/", report_views.study_report_page, name="report"),
    path("s/<slug:slug>/sample-size/", sample_size_views.study_sample_size, name="sample_size"),
    path(
        "s/<slug:slug>/report/stratum-shares/",
        report_views.study_stratum_shares,
        name="stratum_shares",
    ),
    path(
        "s/<slug:slug>/report/primary-question/",
        report_views.study_primary_measure,
        name="primary_measure",
    ),
    path(
        "s/<slug:slug>/report/monitoring/",
        report_views.study_monitoring,
        name="monitoring",
    ),
    path(
        "s/<slug:slug>/report/monitoring/stop/",
        report_views.study_monitor_stop,
        name="monitor_stop",
    ),
    path(
        "s/<slug:slug>/report/aggregation/",
        report_views.study_aggregation,
        name="aggregation",
    ),
    path(
        "s/<slug:slug>/report/robustness/compute/",
        report_views.study_robustness_compute,
        name="robustness_compute",
    ),
    path("s/<slug:slug>/report/bundle.zip", report_views.study_report_bundle, name="report_bundle"),
]

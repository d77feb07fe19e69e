from django.urls import path

from . import views

app_name = "agreement"

urlpatterns = [
    path("s/<slug:slug>/agreement/", views.study_agreement_page, name="study"),
    path("s/<slug:slug>/agreement/status/", views.study_agreement_status, name="status"),
    path("s/<slug:slug>/quality/", views.study_quality, name="qc"),
]

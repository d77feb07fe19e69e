from django.urls import path

from . import views

app_name = "studies"

urlpatterns = [
    path("s/<slug:slug>/", views.study_overview, name="overview"),
]

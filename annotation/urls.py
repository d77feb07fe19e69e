from django.urls import path

from . import views

app_name = "annotation"

urlpatterns = [
    path("s/<slug:slug>/cases/", views.study_assignments, name="assignments"),
    path("s/<slug:slug>/next/", views.study_next, name="next"),
    path("rate/<uuid:assignment_uuid>/", views.assignment_rate, name="rate"),
    path("rate/<uuid:assignment_uuid>/draft/", views.assignment_draft, name="draft"),
]

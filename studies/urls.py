from django.urls import path

from .views import overview

app_name = "studies"

urlpatterns = [
    path("s/<slug:slug>/", overview.study_overview, name="overview"),
]

# Study set-up: create and edit, lifecycle, import of test cases, rubric builder.
urlpatterns += []

# People and results: invitations, assignment, exports, worksheet import, unblinding.
urlpatterns += []

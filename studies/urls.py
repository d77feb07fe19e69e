from django.urls import path

app_name = "studies"

urlpatterns = []

# Study set-up: create and edit, lifecycle, import of test cases, rubric builder.
from .views import (  # noqa: E402
    adjudication_rules,
    cases,
    profile_questions,
    quality,
    rubric_builder,
    setup,
)

urlpatterns += [
    path("studies/", setup.study_list, name="list"),
    path("studies/new/", setup.study_create, name="create"),
    path("studies/samples/<str:name>", setup.case_sample, name="case_sample"),
    path("s/<slug:slug>/settings/", setup.study_edit, name="edit"),
    path("s/<slug:slug>/status/<str:action>/", setup.study_status, name="status"),
    path("s/<slug:slug>/protocol.json", setup.study_protocol, name="protocol"),
    path("s/<slug:slug>/test-cases/", cases.case_list, name="cases"),
    path(
        "s/<slug:slug>/test-cases/import/<uuid:upload_uuid>/",
        cases.case_import,
        name="case_import",
    ),
    path(
        "s/<slug:slug>/test-cases/import/<uuid:upload_uuid>/status.json",
        cases.case_import_status,
        name="case_import_status",
    ),
    path("s/<slug:slug>/test-cases/remove/", cases.cases_remove, name="cases_remove"),
    path("s/<slug:slug>/quality-items/", quality.quality_items, name="quality"),
    path(
        "s/<slug:slug>/quality-items/<uuid:case_uuid>/",
        quality.quality_item,
        name="quality_item",
    ),
    path(
        "s/<slug:slug>/adjudication-rules/",
        adjudication_rules.adjudication_rules,
        name="adjudication_rules",
    ),
    path(
        "s/<slug:slug>/profile-questions/",
        profile_questions.profile_questions,
        name="profile_questions",
    ),
    path("s/<slug:slug>/rubric/", rubric_builder.rubric_detail, name="rubric"),
    path("s/<slug:slug>/rubric/preset/", rubric_builder.rubric_preset, name="rubric_preset"),
    path(
        "s/<slug:slug>/rubric/add/<str:kind>/", rubric_builder.dimension_add, name="dimension_add"
    ),
    path(
        "s/<slug:slug>/rubric/d/<slug:key>/", rubric_builder.dimension_edit, name="dimension_edit"
    ),
    path(
        "s/<slug:slug>/rubric/d/<slug:key>/delete/",
        rubric_builder.dimension_delete,
        name="dimension_delete",
    ),
    path(
        "s/<slug:slug>/rubric/d/<slug:key>/move/",
        rubric_builder.dimension_move,
        name="dimension_move",
    ),
    path(
        "s/<slug:slug>/rubric/d/<slug:key>/level/",
        rubric_builder.dimension_level,
        name="dimension_level",
    ),
]

# The signed-in person's own API tokens.
from .views import tokens  # noqa: E402

urlpatterns += [
    path("account/tokens/", tokens.token_list, name="tokens"),
    path("account/tokens/<uuid:token_uuid>/revoke/", tokens.token_revoke, name="token_revoke"),
]

# Invitations (the link's page, a personal invitation's answer, revoking) and unblinding.
from .views import invitations, unblinding  # noqa: E402

urlpatterns += [
    path("invite/<str:token>/", invitations.invitation_open, name="invitation"),
    path(
        "invitations/<str:token_hash>/respond/",
        invitations.invitation_respond,
        name="invitation_respond",
    ),
    path(
        "s/<slug:slug>/invitations/<str:token_hash>/revoke/",
        invitations.invitation_revoke,
        name="invitation_revoke",
    ),
    path("s/<slug:slug>/unblind/", unblinding.unblind, name="unblind"),
]

# Administrators: the right to erasure.
from .views import erasure  # noqa: E402

urlpatterns += [
    path("admin-tools/erasure/", erasure.erasure, name="erasure"),
]

# The study lead's webhooks for study events.
from .views import webhooks  # noqa: E402

urlpatterns += [
    path("s/<slug:slug>/webhooks/", webhooks.webhook_list, name="webhooks"),
    path("s/<slug:slug>/webhooks/<uuid:webhook_uuid>/", webhooks.webhook_detail, name="webhook"),
    path(
        "s/<slug:slug>/webhooks/<uuid:webhook_uuid>/remove/",
        webhooks.webhook_remove_view,
        name="webhook_remove",
    ),
    path(
        "s/<slug:slug>/webhooks/<uuid:webhook_uuid>/deliveries/<uuid:delivery_uuid>/replay/",
        webhooks.webhook_replay,
        name="webhook_replay",
    ),
]

# Participant links: raters from a crowd platform (the lead's pages, and the link itself).
from .views import participant_links  # noqa: E402

urlpatterns += [
    path("p/<str:link_token>/", participant_links.participant_join_view, name="participant_join"),
    path(
        "s/<slug:slug>/participant-links/",
        participant_links.participant_links,
        name="participant_links",
    ),
    path(
        "s/<slug:slug>/participant-links/<uuid:link_uuid>/",
        participant_links.participant_link_edit,
        name="participant_link",
    ),
    path(
        "s/<slug:slug>/participant-links/<uuid:link_uuid>/close/",
        participant_links.participant_link_close_view,
        name="participant_link_close",
    ),
]

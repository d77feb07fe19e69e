from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotation import views as annotation_views
from config import health
from core import throttle

sign_in_throttled = throttle.sign_in_throttled(username_fields=["username"])

urlpatterns = [
    path("", annotation_views.home, name="home"),
    path("accounts/login/", sign_in_throttled(auth_views.LoginView.as_view()), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Django's own password views, with the templates under templates/registration/.
    path(
        "accounts/password/change/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/password/reset/", auth_views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("", include("annotation.urls")),
    path("", include("studies.urls")),
    path("", include("agreement.urls")),
    path("healthz/live", health.healthz_live, name="healthz_live"),
    path("healthz/ready", health.healthz_ready, name="healthz_ready"),
    # The address monitoring knew before the split: readiness.
    path("healthz", health.healthz_ready, name="healthz"),
    path("api/v1/", include("config.api_urls")),
    # The admin's own sign-in page, throttled like the others.
    path("admin/login/", sign_in_throttled(admin.site.login), name="admin_login"),
    path("admin/", admin.site.urls),
]

# Django's own error answers: the pages' templates, or the API's JSON shape under /api/.
handler400 = "core.api.bad_request"
handler404 = "core.api.page_not_found"
handler500 = "core.api.server_error"

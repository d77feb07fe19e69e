from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotation import views as annotation_views

urlpatterns = [
    path("", annotation_views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("annotation.urls")),
    path("", include("studies.urls")),
    path("", include("agreement.urls")),
    path("admin/", admin.site.urls),
]

"""The refusal page for a failed security-token (CSRF) check.

It usually means the session or the cookies were lost (expired, cleared, signed out in
another tab). The page says so and leads back to where the person was; the rating
screen's autosave gets the same in JSON, so it keeps the answers and offers to sign in.
"""

from urllib.parse import urlencode, urlsplit

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

CSRF_MESSAGE_SIGNED_OUT = (
    "You are signed out (the session or the browser's cookies were lost), so this was not "
    "saved. Sign in again: your answers are kept in this browser."
)
CSRF_MESSAGE_COOKIES = (
    "The page's security token was lost (the browser's cookies were cleared), so this was "
    "not saved. Reload the page: your answers are kept in this browser."
)


def _way_back(request) -> str | None:
    """The path of the page the refused form was on, when it is one of ours."""
    referer = request.headers.get("Referer", "")
    if not referer or not url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return None
    parts = urlsplit(referer)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def csrf_failure(request, reason=""):
    signed_out = not request.user.is_authenticated
    back = _way_back(request)
    login = reverse("login")
    # From the sign-in page itself (a page left open too long): back to it, fresh.
    if back and back.startswith(login):
        login_link = back
    else:
        login_link = f"{login}?{urlencode({'next': back or reverse('home')})}"
    if "application/json" in request.headers.get("Accept", ""):
        body = {
            "error": CSRF_MESSAGE_SIGNED_OUT if signed_out else CSRF_MESSAGE_COOKIES,
            "csrf": True,
            "signed_out": signed_out,
        }
        if signed_out:
            body["login_url"] = f"{reverse('login')}?next={reverse('annotation:session_restored')}"
        return JsonResponse(body, status=403)
    return render(
        request,
        "403_csrf.html",
        {"signed_out": signed_out, "back": back, "login_link": login_link},
        status=403,
    )

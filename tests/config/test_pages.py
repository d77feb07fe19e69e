"""What every page shares: the navigation per role, password change and reset, and the pages
for refusals (a lost security token, not found)."""

import json

import pytest
from django.contrib.auth.models import Group
from django.core import mail
from django.test import Client
from django.urls import reverse

from studies.access import COORDINATORS_GROUP

from ..factories import PASSWORD, UserFactory, make_study

pytestmark = pytest.mark.django_db


def nav_labels(client) -> list[str]:
    response = client.get(reverse("home"))
    return [link["label"] for link in response.context["nav_links"]]


def test_each_role_gets_its_navigation(client):
    rater, coordinator, admin = UserFactory(), UserFactory(), UserFactory(is_staff=True)
    coordinator.groups.add(Group.objects.get_or_create(name=COORDINATORS_GROUP)[0])
    make_study(slug="nav-study", lead=coordinator, raters=[rater])
    client.force_login(rater)
    assert nav_labels(client) == ["My studies"]
    client.force_login(coordinator)
    assert nav_labels(client) == ["My studies", "Studies", "New study"]
    client.force_login(admin)
    assert nav_labels(client) == [
        "My studies",
        "Studies",
        "New study",
        "Quality control",
        "Identity erasure",
        "Django admin",
    ]
    page = client.get(reverse("home")).text
    # The administrators' quality-control menu lists studies under way.
    assert reverse("agreement:qc", args=["nav-study"]) in page
    assert reverse("admin:index") in page
    assert reverse("password_change") in page and "Sign out" in page


def test_a_coordinator_member_without_the_group_sees_studies_but_not_new_study(client):
    member = UserFactory()
    make_study(slug="member-study", lead=member)
    member.groups.clear()
    client.force_login(member)
    assert nav_labels(client) == ["My studies", "Studies"]


def test_password_reset_sends_a_link_that_sets_a_new_password(client):
    user = UserFactory(email="rater@example.org")
    page = client.get(reverse("login")).text
    assert reverse("password_reset") in page
    response = client.post(reverse("password_reset"), {"email": "rater@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    link = next(line for line in mail.outbox[0].body.splitlines() if "/reset/" in line)
    path = link.split("testserver", 1)[1]
    response = client.get(path, follow=True)
    assert response.context["validlink"]
    response = client.post(
        response.redirect_chain[-1][0],
        {"new_password1": "a-new-long-passphrase", "new_password2": "a-new-long-passphrase"},
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a-new-long-passphrase")


def test_password_change_needs_the_old_password(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "x9-new-passphrase",
            "new_password2": "x9-new-passphrase",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("x9-new-passphrase")


def test_lost_security_token_page_leads_back(db):
    user = UserFactory()
    study = make_study(slug="csrf-study", raters=[user])
    assignment = study.memberships.get(user=user).assignments.first()
    case_path = reverse("annotation:rate", args=[assignment.uuid])
    browser = Client(enforce_csrf_checks=True)
    # Every cookie gone: the form post is refused, and the page offers to sign in and go back.
    response = browser.post(
        case_path, {"payload": "{}"}, HTTP_REFERER=f"http://testserver{case_path}"
    )
    assert response.status_code == 403
    assert "you are signed out" in response.text
    assert f"{reverse('login')}?next=%2Frate%2F{assignment.uuid}%2F" in response.text
    # The autosave gets the same in JSON, with where to sign in.
    response = browser.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        json.dumps({"payload": {}, "version": 0}),
        content_type="application/json",
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 403
    body = response.json()
    assert body["csrf"] and body["signed_out"] and body["login_url"].startswith(reverse("login"))
    # Signed in, only the token lost: reload, answers kept.
    browser.force_login(user)
    body = browser.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        json.dumps({"payload": {}, "version": 0}),
        content_type="application/json",
        HTTP_ACCEPT="application/json",
    ).json()
    assert body["csrf"] and not body["signed_out"] and "Reload the page" in body["error"]


def test_not_found_page_is_ours(client, settings):
    settings.DEBUG = False
    client.force_login(UserFactory())
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert "Page not found" in response.text and reverse("home") in response.text


def test_wrong_role_gets_our_403_page(client, settings):
    settings.DEBUG = False
    rater = UserFactory()
    make_study(slug="role-study", raters=[rater])
    client.force_login(rater)
    response = client.get(reverse("studies:edit", args=["role-study"]))
    assert response.status_code == 403
    assert "This page is not open to you" in response.text


def test_the_500_page_renders_without_a_request():
    # Django renders it with no context at all: nothing in it may need the request.
    from django.template.loader import render_to_string

    page = render_to_string("500.html")
    assert "Something went wrong on our side" in page and 'rel="icon"' in page

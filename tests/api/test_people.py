"""Raters and invitations over the API: the pages' rules, and what a rater may read."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies import selectors
from studies.models import Membership
from tests.factories import UserFactory, make_study
from tests.payloads import SYSTEMS, coordinator_of


@pytest.fixture
def study(lead_user):
    return make_study(lead=lead_user, slug="people", cases=2, status="draft", systems=SYSTEMS)


def test_only_the_lead_invites_coordinators(study, lead_user, api_as):
    member = api_as(coordinator_of(study, "api-member"))
    refused = member("POST", "studies/people/invitations/", {"role": "coordinator"})
    assert refused.status_code == 403
    as_rater = member("POST", "studies/people/invitations/", {"role": "rater", "days": 3})
    assert as_rater.status_code == 201 and as_rater.json()["role"] == "rater"
    lead = api_as(lead_user)
    created = lead("POST", "studies/people/invitations/", {"role": "coordinator", "note": "Ana"})
    assert created.status_code == 201 and "no-store" in created["Cache-Control"]
    link = created.json()["link"]
    token = link.rstrip("/").rsplit("/", 1)[1]
    # The link works, once, and the list never shows it again.
    assert selectors.invitation_find(token=token).role == Membership.Role.COORDINATOR
    listed = lead("GET", "studies/people/invitations/").json()["results"]
    assert len(listed) == 2 and all("link" not in row for row in listed)
    assert token not in str(listed)


def test_invitations_are_bounded_like_the_form(study, lead_user, api_as):
    lead = api_as(lead_user)
    response = lead("POST", "studies/people/invitations/", {"days": 400})
    assert response.status_code == 400
    assert response.json()["error"]["problems"] == [
        "days: Ensure this value is less than or equal to 90."
    ]


def test_a_revoked_invitation_link_stops_working(study, lead_user, api_as):
    lead = api_as(lead_user)
    link = lead("POST", "studies/people/invitations/").json()
    token = link["link"].rstrip("/").rsplit("/", 1)[1]
    url = f"studies/people/invitations/{link['token_hash']}/revoke/"
    assert lead("POST", url).status_code == 204
    assert selectors.invitation_find(token=token) is None
    assert lead("POST", url).json()["error"]["status"] == 404


def test_inviting_an_account_says_the_same_whether_or_not_it_exists(study, lead_user, api_as):
    lead = api_as(lead_user)
    UserFactory(username="real-person")
    real = lead("POST", "studies/people/raters/", {"username": "real-person"})
    ghost = lead("POST", "studies/people/raters/", {"username": "no-such-person"})
    assert real.status_code == ghost.status_code == 202
    assert real.json() == ghost.json()


def test_a_rater_reads_their_own_assignments_and_nothing_of_the_systems(lead_user, api_as):
    rater = UserFactory(username="api-own-rater")
    make_study(lead=lead_user, slug="own", cases=3, raters=[rater], systems=SYSTEMS)
    mine = api_as(rater)("GET", "me/assignments/")
    assert mine.status_code == 200
    (study,) = mine.json()["studies"]
    assert (study["study"], study["done"], study["total"]) == ("own", 0, 3)
    assert [a["status"] for a in study["assignments"]] == ["todo"] * 3
    assert not any(system in mine.content.decode() for system in SYSTEMS)
    assert api_as(rater)("GET", "studies/own/progress/").status_code == 403


def test_a_rater_reads_when_a_daily_limit_lifts_in_their_own_time_zone(lead_user, api_as):
    from annotation.models import ExposureDay
    from studies.exposure import local_day, zone_of
    from studies.models import WelfareSettings

    rater = UserFactory(username="api-limited-rater")
    study = make_study(lead=lead_user, slug="limited", cases=3, raters=[rater], systems=SYSTEMS)
    me = api_as(rater)
    assert me("GET", "me/assignments/").json()["studies"][0]["limit_until"] is None
    membership = study.memberships.get(user=rater)
    Membership.objects.filter(pk=membership.pk).update(time_zone="Asia/Tokyo")
    WelfareSettings.objects.create(study=study, daily_minutes=30)
    today = local_day(moment=timezone.now(), zone=zone_of("Asia/Tokyo"))
    ExposureDay.objects.create(rater=membership, day=today, stratum="policy", seconds=1800)
    until = me("GET", "me/assignments/").json()["studies"][0]["limit_until"]
    assert until == f"{today + timedelta(days=1)}T00:00:00+09:00"

"""What a pipeline sees of refusals and long lists, against the live server: each refusal
as an exception carrying the API's error (code, message, the field named), every page."""

import pytest
from concord_client import (
    AuthenticationFailed,
    BadRequest,
    Concord,
    NotFound,
    PermissionDenied,
    Throttled,
)

from studies.models import Membership, Study
from studies.services import membership_add
from tests.factories import UserFactory, make_cases


@pytest.fixture
def concord(concord_as, lead_user):
    client = concord_as(lead_user)
    client.study_create("errors", "Errors")
    return client


def test_a_wrong_field_names_the_field_and_writes_nothing(concord):
    with pytest.raises(BadRequest) as refused:
        concord.study_update("errors", raters_per_item=1, name="Renamed")
    error = refused.value
    assert error.status == 400 and error.code == "invalid"
    assert error.field == "raters_per_item"
    assert error.fields == {"raters_per_item": ["Ensure this value is greater than or equal to 2."]}
    assert "raters_per_item" in str(error)  # the message a log or a notebook shows
    assert concord.study_get("errors")["name"] == "Errors"


def test_a_refused_import_lists_each_rows_problem(concord):
    cases = make_cases(3)
    cases[1]["prompt"] = ""
    with pytest.raises(BadRequest) as refused:
        concord.cases_import("errors", cases)
    assert refused.value.code == "refused" and "nothing was imported" in refused.value.message
    assert any(p.startswith("Line 2") for p in refused.value.problems)
    assert concord.cases_list("errors") == []


def test_outsider_wrong_role_and_bad_token_each_have_their_exception(
    concord, concord_as, live_server
):
    with pytest.raises(NotFound) as missing:
        concord.study_get("no-such-study")
    assert missing.value.code == "not_found"
    rater = UserFactory(username="client-rater")
    membership_add(study=Study.objects.get(slug="errors"), user=rater, role=Membership.Role.RATER)
    with pytest.raises(PermissionDenied) as denied:
        concord_as(rater).progress("errors")
    assert denied.value.status == 403 and denied.value.code == "permission_denied"
    with pytest.raises(AuthenticationFailed):
        Concord(live_server.url, "concord_not-a-token").study_list()


def test_every_page_of_a_list_is_followed(concord):
    concord.cases_import("errors", make_cases(7))
    pages = list(concord.http.pages("studies/errors/cases/", {"page_size": 3}))
    assert [len(page["results"]) for page in pages] == [3, 3, 1]
    assert len(concord.cases_list("errors")) == 7
    assert [
        c["position"] for c in concord.http.items("studies/errors/cases/", {"page_size": 2})
    ] == list(range(7))


def test_a_token_over_its_rate_is_told_so_after_the_retries(concord, settings):
    settings.API_THROTTLE_RATES = {"user": "2/min", "anon": "100/min", "schema": "100/min"}
    concord.study_get("errors")  # the second request of the minute: the fixture made one
    with pytest.raises(Throttled) as throttled:
        concord.study_get("errors")
    assert throttled.value.code == "throttled"


def test_an_invitation_link_is_made_listed_and_revoked(concord):
    made = concord.invitation_create("errors", note="for a colleague", days=3)
    assert made["link"].startswith("http") and made["state"] == "pending"
    (listed,) = concord.invitations_list("errors")
    assert listed["token_hash"] == made["token_hash"] and "link" not in listed
    concord.invitation_revoke("errors", made["token_hash"])
    assert concord.invitations_list("errors") == []  # a revoked link is gone
    with pytest.raises(NotFound):
        concord.invitation_revoke("errors", made["token_hash"])

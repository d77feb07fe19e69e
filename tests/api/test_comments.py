"""The comments digest over the API: the page's filters, keyset pages and read marks, by
coordinator token only, with no system named."""

from annotation.models import CommentRead
from studies.models import Membership
from tests.factories import UserFactory
from tests.payloads import SYSTEMS, coordinator_of, payload_for, study_with_systems, submit


def _study(lead):
    study = study_with_systems(lead=lead, slug="api-digest", cases=4)
    for rater in study.memberships.filter(role=Membership.Role.RATER):
        for n, assignment in enumerate(rater.assignments.order_by("position")):
            submit(assignment, payload_for(n, notes=f"{rater.pseudonym} note {n}"))
    return study


def test_the_digest_pages_filters_and_marks_per_coordinator(lead_user, api_as):
    study = _study(lead_user)
    lead = api_as(lead_user)
    coordinator = api_as(coordinator_of(study, "api-digest-coordinator"))
    first = lead("GET", "studies/api-digest/comments/?source=note&page_size=5")
    assert first.status_code == 200
    body = first.json()
    assert len(body["results"]) == 5 and body["next"]
    assert body["unread"] >= 8
    note = body["results"][0]
    assert note["source"] == "note" and note["read"] is False and note["case"].startswith("TC-")
    rest = lead("GET", body["next"].removeprefix("http://testserver")).json()
    assert rest["next"] is None
    keys = [r["key"] for r in body["results"] + rest["results"]]
    assert len(keys) == len(set(keys)) == 8
    for name in SYSTEMS:
        assert name not in first.content.decode()

    marked = lead("POST", "studies/api-digest/comments/read/", {"keys": keys[:3]})
    assert marked.status_code == 200 and marked.json() == {"marked": 3}
    again = lead("POST", "studies/api-digest/comments/read/", {"keys": keys[:3]})
    assert again.json() == {"marked": 3}
    assert CommentRead.objects.count() == 3
    unread = lead("GET", "studies/api-digest/comments/?source=note&unread=true").json()
    assert {r["key"] for r in unread["results"]} == set(keys[3:])
    assert lead("GET", "studies/api-digest/comments/").json()["unread"] == body["unread"] - 3
    theirs = coordinator("GET", "studies/api-digest/comments/").json()
    assert theirs["unread"] == body["unread"]


def test_bad_filters_and_keys_are_400_and_write_nothing(lead_user, api_as):
    _study(lead_user)
    lead = api_as(lead_user)
    for query in ("source=system", "since=soon", "after=x", "page_size=0", "page_size=201",
                  "page_size=many", "dimension=none"):  # fmt: skip
        response = lead("GET", f"studies/api-digest/comments/?{query}")
        assert response.status_code == 400, query
        assert set(response.json()) == {"error"}
    for body in ({}, {"keys": "note:1"}, {"keys": [1]}, {"keys": ["note:" + "0" * 32]},
                 {"keys": ["x"] * 201}):  # fmt: skip
        assert lead("POST", "studies/api-digest/comments/read/", body).status_code == 400
    assert not CommentRead.objects.exists()
    # A page position past any row is a page with nothing after it, never an error.
    for after in ("1.2.ffffffffffffffffffffffffffffffff.0", "999999999999999999.5.0.0"):
        response = lead("GET", f"studies/api-digest/comments/?after={after}")
        assert response.status_code in (200, 400), after


def test_a_rater_of_the_study_is_refused(lead_user, api_as):
    study = _study(lead_user)
    rater = study.memberships.filter(role=Membership.Role.RATER).first().user
    assert api_as(rater)("GET", "studies/api-digest/comments/").status_code == 403
    assert api_as(UserFactory())("GET", "studies/api-digest/comments/").status_code == 404

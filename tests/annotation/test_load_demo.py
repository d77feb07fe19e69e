"""The demo study shows a decided adjudication, and loading it twice changes nothing."""

import io
import re

import pytest
from django.core.management import call_command

from annotation.models import Adjudication
from studies.models import Membership


@pytest.mark.django_db
def test_the_demo_has_one_adjudicated_case_and_an_adjudicator_to_sign_in(client):
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "adjudicator (adjudicator" in out.getvalue()
    done = Adjudication.objects.get(test_case__study__slug="reference-demo")
    assert done.status == Adjudication.Status.DONE and done.reason
    assert done.adjudicator.user.username == "adjudicator"
    assert done.adjudicator.role == Membership.Role.ADJUDICATOR
    # Sent by hand, with the lead's reason: every dimension of the case was decided.
    assert done.sent_reason and set(done.triggers) == set(
        done.test_case.study.rubric.dimensions.values_list("key", flat=True)
    )
    call_command("load_demo", stdout=io.StringIO())
    assert Adjudication.objects.count() == 1
    # The adjudicator signs in with the demo password and finds the decision.
    assert client.login(username="adjudicator", password="concord-demo")
    page = client.get("/s/reference-demo/adjudication/")
    assert page.status_code == 200 and done.test_case.case_id in page.content.decode()
    # The reason holds: the two demo raters' Depth answers differ on the case.
    screen = client.get(f"/s/reference-demo/adjudication/{done.uuid}/").content.decode()
    assert re.search(r'data-dim-row="[AB]-depth" data-differs', screen)


@pytest.mark.django_db
def test_the_demo_counts_its_test_cases_apart_from_the_quality_items(client):
    # The figures the README gives: 8 test cases, 5 quality items, rater1 at 0 of 13.
    call_command("load_demo", stdout=io.StringIO())
    assert client.login(username="coordinator", password="concord-demo")
    overview = client.get("/s/reference-demo/").content.decode()
    assert (
        "8 test cases, and 5 quality items listed with them (3 gold items, 2 attention checks)"
        in overview
    )
    rows = re.findall(r"<tr><td>(TC-\d+)( <span[^>]*data-quality-item>([^<]*)</span>)?", overview)
    kinds = {case: kind for case, _, kind in rows}
    assert len(kinds) == 13
    assert {case for case, kind in kinds.items() if not kind} == {f"TC-00{n}" for n in range(1, 9)}
    assert {kinds[f"TC-10{n}"] for n in (1, 2, 3)} == {"gold item"}
    assert {kinds["TC-201"], kinds["TC-202"]} == {"attention check"}
    client.logout()
    assert client.login(username="rater1", password="concord-demo")
    assert "0 of 13 done" in client.get("/s/reference-demo/cases/").content.decode()
    # The information sheet counts the cases as the rater's list does: it neither gives a
    # different number nor tells the quality items apart.
    sheet = client.get("/s/reference-demo/start/").content.decode()
    assert "This demo has 13 cases to score" in sheet and "quality item" not in sheet

"""The protocol document and removing every test case over the API, each under its page's
rule: the document only once the study is unblinded, the removal only until it opens."""

import hashlib

from django.urls import reverse

from studies import services
from studies.models import Study, StudyEvent
from tests.factories import make_study


def test_the_protocol_document_is_the_page_s_once_unblinded(client, lead_user, api_as):
    study = make_study(lead=lead_user, slug="proof", cases=3, status=Study.Status.DRAFT)
    opened = services.study_open(study=study, actor=lead_user)
    api = api_as(lead_user)
    response = api("GET", "studies/proof/protocol/")
    # Before unblinding it would give the key away: refused, the lead included, with why.
    assert response.status_code == 403
    assert "blinding secret" in response.json()["error"]["message"]
    Study.objects.filter(pk=study.pk).update(status=Study.Status.UNBLINDED)
    response = api("GET", "studies/proof/protocol/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert hashlib.sha256(body).hexdigest() == opened.protocol_fingerprint
    client.force_login(lead_user)
    page = client.get(reverse("studies:protocol", args=["proof"]))
    assert b"".join(page.streaming_content) == body
    assert response["Content-Disposition"] == page["Content-Disposition"]


def test_every_case_is_removed_from_a_draft_only(lead_user, api_as):
    study = make_study(lead=lead_user, slug="redo", cases=4, status=Study.Status.DRAFT)
    api = api_as(lead_user)
    response = api("POST", "studies/redo/cases/remove/")
    assert response.status_code == 200 and response.json() == {"removed": 4}
    assert not study.test_cases.exists() and not study.systems.exists()
    assert StudyEvent.objects.filter(study=study, kind=StudyEvent.Kind.CASES_REMOVED).exists()
    assert api("POST", "studies/redo/cases/remove/").json() == {"removed": 0}
    opened = make_study(lead=lead_user, slug="opened", cases=2)
    response = api("POST", "studies/opened/cases/remove/")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "refused"
    assert opened.test_cases.count() == 2

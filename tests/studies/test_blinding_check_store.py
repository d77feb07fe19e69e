"""The blinding check runs once, when the texts are written, and its findings are stored.

Every reader (the case list, the open confirmation, ``study_open``) reads the stored
findings; they equal a scan of every text from scratch, in the order by case then system.
"""

import importlib
import json

import pytest
from django.apps import apps
from django.urls import reverse

from studies import selectors, services
from studies.importing.identity_check import find_identity_mentions
from studies.models import IdentityMention, Response, Study
from studies.services import cases as case_services

from ..factories import UserFactory

SELF = "As an AI developed by OpenAI, I would stage it."


def jsonl(first: int, count: int) -> bytes:
    lines = []
    for number in range(first, first + count):
        responses = {"baseline": f"Plan {number}.", "improved": f"Better plan {number}."}
        if number % 3 == 0:
            responses["improved"] = f"{SELF} I'm Claude. The baseline is slow."
        if number % 4 == 0:
            responses["baseline"] = "My name is Gemini."
        lines.append(json.dumps({"id": f"TC-{number:03d}", "prompt": "Q?", "responses": responses}))
    return ("\n".join(lines) + "\n").encode()


def from_scratch(study: Study) -> list[str]:
    rows = Response.objects.filter(test_case__study=study).order_by(
        "test_case__position", "system__name"
    )
    found = find_identity_mentions(
        responses=((r.test_case.case_id, r.system.name, r.text) for r in rows),
        systems=list(study.systems.values_list("name", flat=True)),
    )
    return [f"{m} {m.snippet}" for m in found]


def stored(study: Study) -> list[str]:
    return [f"{m} {m.snippet}" for m in selectors.study_identity_mentions(study=study)]


@pytest.fixture
def imported(db):
    lead = UserFactory()
    study = services.study_create(slug="stored", name="Stored", lead=lead)
    services.test_cases_import(study=study, actor=lead, filename="a.jsonl", data=jsonl(1, 12))
    return study, lead


def test_the_import_stores_what_a_scan_from_scratch_finds(imported):
    study, lead = imported
    # Four phrases in each of four self-describing responses, a model's name in three more.
    assert len(stored(study)) == 4 * 4 + 3 > 0
    assert stored(study) == from_scratch(study)
    # A second file adds its own findings after the first's.
    services.test_cases_import(study=study, actor=lead, filename="b.jsonl", data=jsonl(13, 6))
    assert stored(study) == from_scratch(study)
    assert selectors.study_identity_mention_counts(study=study) == (len(stored(study)), 6 + 4)


def test_removing_the_cases_removes_their_findings(imported):
    study, lead = imported
    services.test_cases_remove_all(study=study, actor=lead)
    assert not IdentityMention.objects.exists()
    assert selectors.study_identity_mention_counts(study=study) == (0, 0)


def test_a_rescan_follows_changed_texts(imported):
    study, _ = imported
    Response.objects.filter(test_case__study=study).update(text="Nothing to see.")
    assert stored(study) != from_scratch(study) == []
    assert services.identity_mentions_rescan(study=study) == 0
    assert stored(study) == []


def test_the_migration_scans_the_responses_already_imported(imported):
    study, _ = imported
    before = stored(study)
    IdentityMention.objects.all().delete()
    migration = importlib.import_module("studies.migrations.0007_identity_mentions_scan")
    migration.scan(apps, None)
    assert stored(study) == before == from_scratch(study)


def test_the_pages_and_opening_read_the_stored_findings(imported, client, monkeypatch):
    study, lead = imported
    expected = stored(study)

    def no_scan(**kwargs):
        raise AssertionError("the texts were scanned again")

    monkeypatch.setattr(case_services, "find_identity_mentions", no_scan)
    client.force_login(lead)
    page = client.get(reverse("studies:cases", args=[study.slug])).text
    assert f"{len(expected)} passages may say which system or model wrote a response" in page
    page = client.get(reverse("studies:status", args=[study.slug, "open"])).text
    assert f"{len(expected)} passages may say" in page and 'name="acknowledge"' in page
    with pytest.raises(services.StudySetupError, match="found 7 responses"):
        services.study_open(study=study, actor=lead)
    services.study_open(study=study, actor=lead, acknowledge_warnings=True)


def test_a_page_lists_the_first_ones_and_counts_the_rest(db, client):
    lead = UserFactory()
    study = services.study_create(slug="many", name="Many", lead=lead)
    services.test_cases_import(study=study, actor=lead, filename="m.jsonl", data=jsonl(1, 400))
    total = len(stored(study))
    assert total > selectors.MENTIONS_SHOWN
    client.force_login(lead)
    page = client.get(reverse("studies:cases", args=[study.slug])).text
    assert page.count('class="text-break blinding-warning"') == selectors.MENTIONS_SHOWN
    assert f"… and {total - selectors.MENTIONS_SHOWN} more." in page

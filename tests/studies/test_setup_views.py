"""Set-up pages: who may open each one, and the create → import → rubric → open flow."""

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from studies import services
from studies.access import COORDINATORS_GROUP
from studies.importing import cases as importing
from studies.models import CaseUpload, Membership, Response, Study, StudyEvent
from studies.models import TestCase as Case
from studies.presets import PRESETS
from studies.selectors import study_protocol_fingerprint

from ..factories import UserFactory, make_study

SAMPLES = Path(__file__).resolve().parents[2] / "studies" / "samples"
HEADER = "id,prompt,context,stratum,response:baseline,response:improved"


def upload(name, data):
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


@pytest.fixture
def draft(lead, rater):
    """A draft with two test cases and a rater who has their cases but has not started."""
    return make_study(lead=lead, slug="setup", cases=2, raters=[rater], status=Study.Status.DRAFT)


@pytest.fixture
def pending(draft, lead):
    return services.case_upload_create(
        study=draft, actor=lead, filename="more.csv", data=f"{HEADER}\nTC-9,P,,,a,b\n".encode()
    )


def study_pages(study, upload_uuid):
    """(method, url) of every set-up page of a study."""
    slug = study.slug
    return [
        ("get", reverse("studies:edit", args=[slug])),
        ("post", reverse("studies:edit", args=[slug])),
        ("get", reverse("studies:status", args=[slug, "open"])),
        ("post", reverse("studies:status", args=[slug, "pilot"])),
        ("get", reverse("studies:protocol", args=[slug])),
        ("get", reverse("studies:cases", args=[slug])),
        ("post", reverse("studies:cases", args=[slug])),
        ("get", reverse("studies:case_import", args=[slug, upload_uuid])),
        ("post", reverse("studies:cases_remove", args=[slug])),
        ("get", reverse("studies:rubric", args=[slug])),
        ("get", reverse("annotation:rubric_preview", args=[slug])),
        ("post", reverse("annotation:rubric_preview", args=[slug])),
        ("post", reverse("studies:rubric_preset", args=[slug])),
        ("get", reverse("studies:dimension_add", args=[slug, "scale"])),
        ("get", reverse("studies:dimension_edit", args=[slug, "depth"])),
        ("post", reverse("studies:dimension_delete", args=[slug, "depth"])),
        ("post", reverse("studies:dimension_move", args=[slug, "depth"])),
        ("post", reverse("studies:dimension_level", args=[slug, "depth"])),
    ]


def assert_unchanged(study):
    """The POSTs above change nothing for someone without access."""
    assert study.rubric.dimensions.count() == 5
    assert study.test_cases.count() == 2
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT
    assert not StudyEvent.objects.filter(study=study).exclude(kind="created").exists()


def test_anonymous_visitors_are_sent_to_sign_in(client, draft, pending):
    for method, url in study_pages(draft, pending.uuid):
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url
    assert_unchanged(draft)


def test_a_stranger_gets_404(client, draft, pending, stranger):
    client.force_login(stranger)
    for method, url in study_pages(draft, pending.uuid):
        assert getattr(client, method)(url).status_code == 404, url
    assert_unchanged(draft)


def test_a_coordinator_of_another_study_gets_404(client, draft, pending):
    other_lead = UserFactory()
    make_study(lead=other_lead, slug="theirs", cases=1, status=Study.Status.DRAFT)
    coordinator = UserFactory()
    other = make_study(lead=UserFactory(), slug="coordinated", cases=1)
    Membership.objects.create(study=other, user=coordinator, role=Membership.Role.COORDINATOR)
    for user in (other_lead, coordinator):
        client.force_login(user)
        for method, url in study_pages(draft, pending.uuid):
            assert getattr(client, method)(url).status_code == 404, url
    assert_unchanged(draft)


def test_a_rater_of_the_study_gets_403(client, draft, pending, rater):
    client.force_login(rater)
    for method, url in study_pages(draft, pending.uuid):
        assert getattr(client, method)(url).status_code == 403, url
    assert_unchanged(draft)


@pytest.mark.parametrize("who", ["lead", "coordinator", "staff"])
def test_the_lead_a_coordinator_and_staff_can_open_every_page(client, draft, pending, lead, who):
    user = {"lead": lead, "coordinator": UserFactory(), "staff": UserFactory(is_staff=True)}[who]
    if who == "coordinator":
        Membership.objects.create(study=draft, user=user, role=Membership.Role.COORDINATOR)
    client.force_login(user)
    for method, url in study_pages(draft, pending.uuid):
        if method == "get" and "protocol" not in url:
            assert client.get(url).status_code == 200, url
    # The protocol document holds the blinding key: nobody gets it before unblinding.
    assert client.get(reverse("studies:protocol", args=[draft.slug])).status_code == 403


def test_unknown_actions_kinds_dimensions_and_uploads_are_404(client, draft, lead):
    client.force_login(lead)
    slug = draft.slug
    for url in (
        reverse("studies:status", args=[slug, "unblind"]),
        reverse("studies:dimension_add", args=[slug, "vibes"]),
        reverse("studies:dimension_edit", args=[slug, "nope"]),
        reverse("studies:case_import", args=[slug, "00000000-0000-0000-0000-000000000000"]),
    ):
        assert client.get(url).status_code == 404, url


def test_an_upload_of_another_study_is_404(client, draft, lead):
    theirs = make_study(lead=UserFactory(), slug="theirs", cases=1, status=Study.Status.DRAFT)
    foreign = services.case_upload_create(study=theirs, actor=None, filename="x.csv", data=b"x")
    client.force_login(lead)
    url = reverse("studies:case_import", args=[draft.slug, foreign.uuid])
    assert client.get(url).status_code == 404
    assert client.post(url).status_code == 404


# --- Creating a study -----------------------------------------------------------------------


def test_only_coordinators_and_staff_may_create_studies(client, stranger):
    url = reverse("studies:create")
    assert client.get(url).status_code == 302
    client.force_login(stranger)
    assert client.get(url).status_code == 403
    assert client.post(url, {"name": "X", "slug": "x", "rubric_preset": "reference",
                             "blinding_seed": 42}).status_code == 403  # fmt: skip
    assert not Study.objects.filter(slug="x").exists()
    response = client.get(reverse("studies:list"))
    assert response.status_code == 200 and "New study" not in response.text
    stranger.groups.add(Group.objects.create(name=COORDINATORS_GROUP))
    assert client.get(url).status_code == 200
    assert "New study" in client.get(reverse("studies:list")).text


def test_a_coordinator_creates_a_study_and_leads_it(client, db):
    coordinator = UserFactory()
    coordinator.groups.add(Group.objects.create(name=COORDINATORS_GROUP))
    client.force_login(coordinator)
    response = client.post(
        reverse("studies:create"),
        {"name": "External validation", "slug": "ext-val", "description": "",
         "rubric_preset": "likert", "blinding_seed": 7},
    )  # fmt: skip
    assert response.status_code == 302
    assert response["Location"] == reverse("studies:cases", args=["ext-val"])
    study = Study.objects.get(slug="ext-val")
    assert (study.lead, study.blinding_seed, study.rubric.preset) == (coordinator, 7, "likert")
    assert StudyEvent.objects.get(study=study, kind="created").actor == coordinator
    again = client.post(reverse("studies:create"), {"name": "Again", "slug": "ext-val",
                        "rubric_preset": "reference", "blinding_seed": 42})  # fmt: skip
    assert "already exists" in again.text


def _coordinator():
    user = UserFactory()
    user.groups.add(Group.objects.get_or_create(name=COORDINATORS_GROUP)[0])
    return user


def test_the_reference_protocol_brings_the_whole_set_up(client, db):
    client.force_login(_coordinator())
    response = client.post(
        reverse("studies:create"),
        {"name": "Like the reference", "slug": "like-ref", "rubric_preset": "reference"},
    )
    assert response.status_code == 302
    study = Study.objects.get(slug="like-ref")
    assert study.rubric.preset == "reference" and study.rubric.dimensions.count() == 5
    assert (
        "evaluate **pairs**" in study.instructions
        and "Do not attempt to infer" in study.instructions
    )
    assert "pseudonymised" in study.consent_text and "withdraw" in study.consent_text
    assert "iteration-1" in study.disclosure_question
    assert (study.blinding_seed, study.raters_per_item, study.side_mode) == (42, None, "fixed")
    assert (str(study.success_alpha), study.success_min_dimensions) == ("0.700", 3)
    assert "18 test cases" in study.description


def test_a_rubric_only_preset_leaves_instructions_and_consent_empty(client, db):
    client.force_login(_coordinator())
    client.post(
        reverse("studies:create"),
        {"name": "Pairs", "slug": "pairs", "rubric_preset": "pairwise", "blinding_seed": 9},
    )
    study = Study.objects.get(slug="pairs")
    assert (study.rubric.preset, study.instructions, study.consent_text) == ("pairwise", "", "")
    assert study.blinding_seed == 9


def test_settings_are_copied_only_from_a_study_the_coordinator_can_see(client, lead, draft):
    Study.objects.filter(pk=draft.pk).update(
        instructions="Read twice.", consent_text="I agree.", blinding_seed=7, side_mode="balanced"
    )
    services.dimension_delete(study=draft, actor=None, key="actionability")
    hidden = make_study(lead=UserFactory(), slug="hidden", cases=1)
    lead.groups.add(Group.objects.get_or_create(name=COORDINATORS_GROUP)[0])
    client.force_login(lead)
    page = client.get(reverse("studies:create"))
    assert "copy:setup" in page.text and "copy:hidden" not in page.text
    refused = client.post(
        reverse("studies:create"),
        {"name": "Sneaky", "slug": "sneaky", "rubric_preset": "copy:hidden"},
    )
    assert refused.status_code == 200 and not Study.objects.filter(slug="sneaky").exists()
    response = client.post(
        reverse("studies:create"), {"name": "Again", "slug": "again", "rubric_preset": "copy:setup"}
    )
    assert response.status_code == 302
    copy = Study.objects.get(slug="again")
    assert (copy.instructions, copy.consent_text, copy.blinding_seed, copy.side_mode) == (
        "Read twice.", "I agree.", 7, "balanced"
    )  # fmt: skip
    assert copy.rubric_id != draft.rubric_id
    assert list(copy.rubric.dimensions.values_list("key", "config")) == list(
        draft.rubric.dimensions.values_list("key", "config")
    )
    assert not copy.test_cases.exists() and not copy.memberships.filter(role="rater").exists()
    assert StudyEvent.objects.get(study=copy, kind="created").detail["copied_from"] == "setup"
    assert hidden.rubric.dimensions.count() == 5


def test_the_list_shows_only_the_users_own_studies(client, lead, draft):
    make_study(lead=UserFactory(), slug="not-mine", cases=1)
    client.force_login(lead)
    response = client.get(reverse("studies:list"))
    assert draft.name in response.text and "not-mine" not in response.text


# --- Settings and status ------------------------------------------------------------------


def settings_post(study, **changes):
    data = {
        "name": study.name, "description": study.description,
        "instructions": study.instructions, "consent_text": study.consent_text,
        "disclosure_question": study.disclosure_question,
        "blinding_seed": study.blinding_seed, "raters_per_item": study.raters_per_item or "",
        "side_mode": study.side_mode, "success_alpha": study.success_alpha,
        "case_layout": study.case_layout,
        "success_min_dimensions": study.success_min_dimensions,
    }  # fmt: skip
    data.update(changes)
    return data


def test_settings_are_saved_and_recorded(client, lead):
    study = make_study(lead=lead, slug="settings", cases=1, status=Study.Status.DRAFT)
    client.force_login(lead)
    url = reverse("studies:edit", args=[study.slug])
    response = client.post(url, settings_post(study, instructions="Be careful.", blinding_seed=9,
                                              consent_text="I agree."))  # fmt: skip
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.instructions, study.blinding_seed, study.consent_version) == ("Be careful.", 9, 2)
    page = client.get(url).text
    assert "Settings changed: blinding seed, consent text, instructions" in page


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("raters_per_item", 1, "greater than or equal to 2"),
        ("success_alpha", "1.5", "less than or equal to 1"),
        ("success_min_dimensions", 0, "greater than or equal to 1"),
    ],
)
def test_settings_are_checked(client, lead, field, value, message):
    study = make_study(lead=lead, slug="settings", cases=1, status=Study.Status.DRAFT)
    client.force_login(lead)
    response = client.post(reverse("studies:edit", args=[study.slug]),
                           settings_post(study, **{field: value}))  # fmt: skip
    assert response.status_code == 400
    assert message in response.text


def test_frozen_settings_are_disabled_and_ignored(client, lead):
    study = make_study(lead=lead, slug="open", cases=1, status=Study.Status.OPEN)
    client.force_login(lead)
    url = reverse("studies:edit", args=[study.slug])
    page = client.get(url).text
    assert (
        'name="instructions"' in page and "disabled" in page.split('name="instructions"')[1][:200]
    )
    response = client.post(url, settings_post(study, name="Renamed", instructions="Sneaky"))
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.name, study.instructions) == ("Renamed", "")


def test_the_open_page_shows_warnings_and_the_fingerprint_and_needs_confirmation(client, lead):
    study = make_study(lead=lead, slug="to-open", cases=2, status=Study.Status.DRAFT)
    Response.objects.filter(test_case__case_id="TC-001", test_case__study=study).update(
        text="As an AI developed by OpenAI, I think the improved plan works."
    )
    services.identity_mentions_rescan(study=study)
    client.force_login(lead)
    url = reverse("studies:status", args=[study.slug, "open"])
    page = client.get(url).text
    # "As an AI", "OpenAI" and "improved" in each of the two responses.
    assert "6 passages may say which system or model wrote a response" in page
    assert "describes itself as an AI" in page and "names a model or its maker" in page
    assert "mentions the name of a system in this study" in page
    fingerprint = study_protocol_fingerprint(study=study)
    assert fingerprint in page
    refused = client.post(url)
    assert refused.status_code == 400 and "Review them and confirm" in refused.text
    assert client.post(url, {"acknowledge": "yes"}).status_code == 302
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and study.protocol_fingerprint == fingerprint
    assert fingerprint in client.get(reverse("studies:edit", args=[study.slug])).text
    assert fingerprint in client.get(reverse("annotation:overview", args=[study.slug])).text


def test_the_status_page_lists_what_stops_opening(client, lead):
    study = services.study_create(slug="bare", name="Bare", lead=lead)
    client.force_login(lead)
    page = client.get(reverse("studies:status", args=[study.slug, "open"])).text
    assert "Import the test cases first." in page
    assert '<button type="submit"' not in page


def test_a_status_change_that_does_not_apply_is_explained(client, lead, draft):
    client.force_login(lead)
    page = client.get(reverse("studies:status", args=[draft.slug, "close"])).text
    assert "The study is draft; this is not possible now." in page
    assert client.post(reverse("studies:status", args=[draft.slug, "close"])).status_code == 400


# --- Importing from the browser ----------------------------------------------------------


def test_upload_preview_then_import(client, lead):
    study = services.study_create(slug="imp", name="Imp", lead=lead)
    client.force_login(lead)
    url = reverse("studies:cases", args=[study.slug])
    assert "File formats and sample files" in client.get(url).text
    response = client.post(
        url, {"file": upload("cases.xlsx", (SAMPLES / "cases.xlsx").read_bytes())}
    )
    assert response.status_code == 302
    pending = CaseUpload.objects.get(study=study)
    assert response["Location"] == reverse("studies:case_import", args=[study.slug, pending.uuid])
    assert not Case.objects.filter(study=study).exists()  # nothing until confirmed
    preview = client.get(response["Location"]).text
    assert 'id="count-cases">3<' in preview
    assert "2: baseline, improved" in preview
    assert "3: allocation (1), operations (1), release (1)" in preview
    assert "Import 3 test cases" in preview
    done = client.post(response["Location"])
    assert done.status_code == 302
    assert study.test_cases.count() == 3
    pending.refresh_from_db()
    assert pending.imported_at is not None
    # An imported upload cannot be imported twice.
    assert client.post(response["Location"]).status_code == 404
    page = client.get(url).text
    assert "3 test cases · systems: baseline, improved" in page and "Blinding check" in page


def test_the_preview_warns_of_self_identification_and_renders_markdown(client, lead):
    study = services.study_create(slug="warn", name="Warn", lead=lead)
    client.force_login(lead)
    data = (
        f"{HEADER}\n"
        'TC-001,**Release** the weights?,,,"**Staged release.** Start small.",Wait.\n'
        'TC-002,Budget?,,,"As ChatGPT, developed by OpenAI, I suggest 40/35/25.",Split it.\n'
        'TC-003,Office?,,,Not yet.,"I\'m Claude, and I would hire remotely."\n'
    ).encode()
    response = client.post(
        reverse("studies:cases", args=[study.slug]), {"file": upload("c.csv", data)}
    )
    preview = client.get(response["Location"]).text
    # Before anything is written: warnings with the case and the system's column.
    assert not study.test_cases.exists()
    assert 'id="blinding-warnings"' in preview and "nothing has been imported yet" in preview
    warnings = re.findall(r'<li class="text-break blinding-warning">(.*?)</li>', preview, re.S)
    # Every hit, each with its case, system and phrase.
    hits = [
        (w.split("</strong>")[0].removeprefix("<strong>"), re.search(r"<q[^>]*>(.*?)</q>", w)[1])
        for w in warnings
    ]
    assert hits == [("TC-002", "ChatGPT"), ("TC-002", "OpenAI"), ("TC-003", "Claude")]
    assert all("baseline:" in w for w in warnings[:2]) and "improved:" in warnings[2]
    # Markdown is rendered as on the rating screen, never shown raw.
    assert "<strong>Staged release.</strong>" in preview and "**Staged" not in preview
    assert "<strong>Release</strong> the weights?" in preview and "**Release" not in preview


def test_a_bad_upload_lists_every_problem_and_stores_nothing(client, lead):
    study = make_study(lead=lead, slug="bad", cases=2, status=Study.Status.DRAFT)
    client.force_login(lead)
    data = f"{HEADER},score\nTC-001,P,,,a,b,1\nTC-7,,,,a,\n".encode()
    response = client.post(
        reverse("studies:cases", args=[study.slug]), {"file": upload("c.csv", data)}
    )
    assert response.status_code == 400
    for expected in (
        "Row 1, column G &#x27;score&#x27;: unknown column.",
        "Row 2, column A &#x27;id&#x27;: the study already has a test case with the id",
        "Row 3, column B &#x27;prompt&#x27;: the prompt is empty.",
    ):
        assert expected in response.text
    assert "Nothing was imported" in response.text
    assert study.test_cases.count() == 2 and not CaseUpload.objects.exists()


def test_a_file_too_large_is_refused_unread(client, lead, monkeypatch):
    study = services.study_create(slug="big", name="Big", lead=lead)
    monkeypatch.setattr(importing, "MAX_FILE_BYTES", 10)
    client.force_login(lead)
    response = client.post(
        reverse("studies:cases", args=[study.slug]),
        {"file": upload("c.csv", (SAMPLES / "cases.csv").read_bytes())},
    )
    assert response.status_code == 400 and "the limit is" in response.text
    assert not CaseUpload.objects.exists()


def test_a_preview_overtaken_by_another_import_imports_nothing(client, lead):
    study = services.study_create(slug="race", name="Race", lead=lead)
    data = (SAMPLES / "cases.csv").read_bytes()
    pending = services.case_upload_create(study=study, actor=lead, filename="a.csv", data=data)
    services.test_cases_import(study=study, actor=lead, filename="b.csv", data=data)
    client.force_login(lead)
    response = client.post(reverse("studies:case_import", args=[study.slug, pending.uuid]))
    assert response.status_code == 400
    assert "already has a test case with the id" in response.text
    assert study.test_cases.count() == 3


def test_the_upload_form_is_gone_once_frozen(client, lead):
    study = make_study(lead=lead, slug="frozen", cases=1, status=Study.Status.OPEN)
    client.force_login(lead)
    url = reverse("studies:cases", args=[study.slug])
    page = client.get(url).text
    assert "frozen" in page and 'type="file"' not in page and "Remove all" not in page
    client.post(url, {"file": upload("c.csv", f"{HEADER}\nTC-9,P,,,a,b\n".encode())})
    client.post(reverse("studies:cases_remove", args=[study.slug]))
    assert study.test_cases.count() == 1


def test_removing_all_cases_from_the_page(client, lead):
    study = make_study(lead=lead, slug="rm", cases=2, status=Study.Status.DRAFT)
    client.force_login(lead)
    response = client.post(reverse("studies:cases_remove", args=[study.slug]), follow=True)
    assert "Removed 2 test cases." in response.text
    assert not study.test_cases.exists()


def test_sample_files_download(client, stranger):
    url = reverse("studies:case_sample", args=["cases.csv"])
    assert client.get(url).status_code == 302
    client.force_login(stranger)
    response = client.get(url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == (SAMPLES / "cases.csv").read_bytes()
    assert client.get(reverse("studies:case_sample", args=["secrets.py"])).status_code == 404


# --- Rubric builder pages -------------------------------------------------------------------


def test_adding_editing_and_leveling_dimensions_from_the_pages(client, lead, draft):
    client.force_login(lead)
    page = client.get(reverse("studies:rubric", args=[draft.slug])).text
    for label in ("Ordinal scale with anchors", "Nominal categories", "Pairwise preference"):
        assert label in page
    response = client.post(
        reverse("studies:dimension_add", args=[draft.slug, "scale"]),
        {"name": "Clarity", "key": "", "measure": "Is it clear?", "level": "ordinal",
         "options": "1 | Unclear\n2 | Clear | Easy on a first reading"},
    )  # fmt: skip
    assert response.status_code == 302
    clarity = draft.rubric.dimensions.get(key="clarity")
    assert clarity.config["options"][1]["anchor"] == "Easy on a first reading"
    edit_url = reverse("studies:dimension_edit", args=[draft.slug, "clarity"])
    assert "2 | Clear | Easy on a first reading" in client.get(edit_url).text
    bad = client.post(edit_url, {"name": "Clarity", "level": "ordinal", "options": "x | y"})
    assert bad.status_code == 400 and "Options, line 1" in bad.text
    client.post(reverse("studies:dimension_level", args=[draft.slug, "clarity"]),
                {"level": "interval"})  # fmt: skip
    clarity.refresh_from_db()
    assert clarity.level == "interval"
    response = client.post(reverse("studies:dimension_level", args=[draft.slug, "clarity"]),
                           {"level": "bogus"}, follow=True)  # fmt: skip
    assert "cannot be bogus" in response.text


def test_replacing_the_rubric_with_a_preset_from_the_page(client, lead, draft):
    client.force_login(lead)
    client.post(reverse("studies:rubric_preset", args=[draft.slug]), {"preset": "pairwise"})
    draft.refresh_from_db()
    assert [d.kind for d in draft.rubric.dimensions.all()] == ["pairwise"]


def test_the_rubric_page_hides_the_controls_once_frozen(client, lead):
    study = make_study(lead=lead, slug="frozen", cases=1, status=Study.Status.OPEN)
    client.force_login(lead)
    page = client.get(reverse("studies:rubric", args=[study.slug])).text
    assert "Add a dimension" not in page and "Replace the rubric" not in page
    assert ">Edit<" not in page and 'name="level"' not in page
    response = client.get(reverse("studies:dimension_edit", args=[study.slug, "depth"]))
    assert response.status_code == 302


def test_the_preview_is_the_rating_page_with_every_kind(client, lead, draft):
    services.rubric_replace_with_preset(study=draft, actor=lead, preset="likert")
    for preset in ("harm", "pairwise"):
        for spec in PRESETS[preset]["dimensions"]:
            services.dimension_save(
                study=draft, actor=lead, key=None, new_key=spec["key"], name=spec["name"],
                kind=spec["kind"], config=spec["config"],
                level="nominal" if spec["kind"] == "categorical" else "ordinal",
                required=spec.get("required", True),
            )  # fmt: skip
    client.force_login(lead)
    url = reverse("annotation:rubric_preview", args=[draft.slug])
    page = client.get(url)
    assert page.status_code == 200
    assert [t.name for t in page.templates][:2] == ["studies/rubric_preview.html",
                                                     "annotation/rate.html"]  # fmt: skip
    text = page.text
    assert "Nothing is saved" in text and "TC-001" in text
    for kind in ("scale", "categorical", "pairwise"):
        assert f'data-kind="{kind}"' in text
    assert 'id="case-preference"' in text and "A slightly better" in text
    assert "baseline" not in text and "improved" not in text  # blinded, as for raters
    # The raters' "All cases" and "Next unrated" would be 403 pages for a coordinator.
    assert reverse("annotation:assignments", args=[draft.slug]) not in text
    assert reverse("annotation:next", args=[draft.slug]) not in text
    assert "Back to the rubric" in text
    payload = {"responses": {"A": {"helpfulness": {"choice": 4}}}, "case": {}}
    # Without a confidence the rating screen refuses it; so does the preview.
    no_confidence = client.post(url, {"payload": json.dumps(payload)}).text
    assert "this would be refused: Choose your confidence" in no_confidence
    payload["confidence"] = "medium"
    # Every dimension is required but the harm category (issue 39): the preview says so.
    refused = client.post(url, {"payload": json.dumps(payload)}).text
    assert "this would be refused: Answer every required question" in refused
    assert "Response A: Clarity, Accuracy, Harmful; Response B: Helpfulness" in refused
    one = {"helpfulness": {"choice": 4}, "clarity": {"choice": 3}, "accuracy": {"choice": 5},
           "harmful": {"choice": "no"}}  # fmt: skip
    payload = {"responses": {"A": one, "B": {**one, "accuracy": {"choice": 1}}},
               "case": {"preference": {"choice": 0}}, "confidence": "medium"}  # fmt: skip
    accepted = client.post(url, {"payload": json.dumps(payload)}).text
    assert "this would be accepted (Response A: 12; Response B: 8)" in accepted
    bad = {"responses": {"A": {"helpfulness": {"choice": 9}}}, "confidence": "high"}
    refused = client.post(url, {"payload": json.dumps(bad)})
    # The same message the rating service gives, naming the response.
    assert "this would be refused: Response A: Helpfulness: choose one of the options." in (
        refused.text
    )
    assert draft.memberships.get().assignments.filter(status="todo").count() == 2


def test_the_preview_works_before_any_test_case_exists(client, lead):
    study = services.study_create(slug="empty", name="Empty", lead=lead)
    client.force_login(lead)
    page = client.get(reverse("annotation:rubric_preview", args=[study.slug]))
    assert page.status_code == 200 and "No test cases yet" in page.text


@pytest.mark.parametrize("page", ["cases", "rubric", "edit"])
def test_page_queries_do_not_grow_with_the_number_of_cases(client, lead, page):
    small = make_study(lead=lead, slug="small", cases=2, status=Study.Status.DRAFT)
    large = make_study(lead=lead, slug="large", cases=40, status=Study.Status.DRAFT)
    client.force_login(lead)
    counts = []
    for study in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(reverse(f"studies:{page}", args=[study.slug])).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_preview_lists_empty_responses_as_warnings_and_imports_them(client, lead):
    study = services.study_create(slug="empty", name="Empty", lead=lead)
    client.force_login(lead)
    data = f"{HEADER}\nTC-1,P,,,a,\nTC-2,P,,,a,b\n".encode()
    response = client.post(
        reverse("studies:cases", args=[study.slug]), {"file": upload("c.csv", data)}
    )
    assert response.status_code == 302
    preview = client.get(response["Location"]).text
    assert 'id="import-warnings"' in preview and "1 empty response." in preview
    assert "Row 2, column F &#x27;response:improved&#x27;: the response of system" in preview
    assert client.post(response["Location"]).status_code == 302
    assert study.test_cases.count() == 2

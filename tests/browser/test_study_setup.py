"""A coordinator sets up a study in the browser: create, upload, preview, import, open."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from studies import services
from studies.access import COORDINATORS_GROUP
from studies.models import Study
from studies.presets import PRESETS

from ..factories import PASSWORD, UserFactory, make_study
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSV = """id,prompt,context,stratum,response:baseline,response:improved
TC-001,Should the lab release the weights?,,release,"Release them openly.","**Staged release.** Start with API access."
TC-002,How should the budget be split?,Three projects,allocation,"40/35/25.","As an AI developed by OpenAI, I suggest 40/35/25."
TC-003,Open a second office?,,operations,"It depends.","Not yet; hire remotely."
"""
BAD_CSV = "id,prompt,response:baseline,response:improved\nTC-001,,a,b\nTC-001,P,a,\n"


@pytest.fixture
def coordinator():
    user = UserFactory(username="coord")
    user.groups.add(Group.objects.get_or_create(name=COORDINATORS_GROUP)[0])
    return user


def test_coordinator_creates_a_study_imports_cases_and_opens_it(
    page, live_server, coordinator, tmp_path, screenshot
):
    sign_in(page, live_server, coordinator.username, PASSWORD)
    page.goto(f"{live_server.url}/studies/")
    page.get_by_role("main").get_by_role("link", name="New study").click()
    page.fill("#id_name", "External validation 2026")
    page.fill("#id_slug", "ext-2026")
    page.select_option("#id_rubric_preset", "reference")
    screenshot(page, "setup-create")
    page.get_by_role("button", name="Create the study").click()
    expect(page.get_by_text("Study “External validation 2026” created.")).to_be_visible()
    # The reference protocol brought the whole set-up, not only the rubric.
    created = Study.objects.get(slug="ext-2026")
    assert "evaluate **pairs**" in created.instructions and created.consent_text
    assert (created.blinding_seed, created.success_min_dimensions) == (42, 3)

    # A file with problems: every one is listed, nothing is imported.
    bad = tmp_path / "bad.csv"
    bad.write_text(BAD_CSV, encoding="utf-8")
    page.set_input_files("#id_file", str(bad))
    page.get_by_role("button", name="Check the file").click()
    problems = page.locator("#import-problems")
    expect(problems).to_contain_text("Row 2, column B 'prompt': the prompt is empty.")
    expect(problems).to_contain_text("Row 3, column A 'id': the id 'TC-001' is used twice")
    # The empty response on row 3 is a system's real output: a warning, not a problem.
    expect(problems).not_to_contain_text("response:improved")

    good = tmp_path / "cases.csv"
    good.write_text(CSV, encoding="utf-8")
    page.set_input_files("#id_file", str(good))
    page.get_by_role("button", name="Check the file").click()
    expect(page.locator("#count-cases")).to_have_text("3")
    expect(page.locator("#count-systems")).to_have_text("2: baseline, improved")
    expect(page.locator("#count-strata")).to_contain_text("allocation (1), operations (1)")
    # Before anything is written: the blinding check, and Markdown rendered as raters see it.
    expect(page.locator("#blinding-warnings")).to_contain_text("TC-002")
    expect(page.locator("#blinding-warnings")).to_contain_text("nothing has been imported yet")
    assert not Study.objects.get(slug="ext-2026").test_cases.exists()
    expect(
        page.locator(".preview-case").first.locator("strong", has_text="Staged release.")
    ).to_be_visible()
    expect(page.locator(".preview-case").first).not_to_contain_text("**")
    screenshot(page, "setup-import-preview")
    page.get_by_role("button", name="Import 3 test cases").click()
    expect(page.get_by_text("Imported 3 test cases from cases.csv.")).to_be_visible()
    expect(page.locator("#case-summary")).to_contain_text("3 test cases")
    warnings = page.locator("#blinding-warnings")
    expect(warnings).to_contain_text("TC-002")  # the self-description and the system name
    expect(warnings).to_contain_text("As an AI developed by OpenAI")
    # The label is not shown: with the text, it would tell the coordinator the key.
    expect(warnings).not_to_contain_text("Response A")
    expect(warnings).not_to_contain_text("Response B")

    page.get_by_role("link", name="Settings").click()
    page.get_by_role("link", name="Open the study…").click()
    expect(page.locator("#blinding-warnings")).to_be_visible()
    preview = page.locator("#fingerprint-preview").inner_text()
    assert len(preview) == 64
    screenshot(page, "setup-open-confirm")
    page.get_by_label("I have read the blinding warnings").check()
    page.get_by_role("button", name="Open the study").click()
    expect(page.get_by_text("The study is open.")).to_be_visible()
    study = Study.objects.get(slug="ext-2026")
    assert study.status == Study.Status.OPEN
    assert study.lead == coordinator
    expect(page.locator("#fingerprint")).to_have_text(study.protocol_fingerprint)
    assert study.protocol_fingerprint == preview
    # Once open, the upload form is gone.
    page.get_by_role("link", name="Test cases").click()
    expect(page.locator("#id_file")).to_have_count(0)


def test_the_rubric_preview_scores_every_new_kind_live(page, live_server, coordinator, screenshot):
    study = make_study(lead=coordinator, slug="kinds", cases=1, status=Study.Status.DRAFT)
    services.rubric_replace_with_preset(study=study, actor=coordinator, preset="likert")
    for preset in ("harm", "pairwise"):
        for spec in PRESETS[preset]["dimensions"]:
            services.dimension_save(
                study=study, actor=coordinator, key=None, new_key=spec["key"],
                name=spec["name"], kind=spec["kind"], config=spec["config"],
                level="nominal" if spec["kind"] == "categorical" else "ordinal",
            )  # fmt: skip
    sign_in(page, live_server, coordinator.username, PASSWORD)
    page.goto(f"{live_server.url}/s/kinds/rubric/")
    page.get_by_role("link", name="Preview as raters see it").click()
    card = page.locator('.response-card[data-label="A"]')
    # A total with a part unanswered is missing ("—"), never the sum of the parts given.
    expect(card.locator("[data-total]")).to_have_text("—")
    card.locator("#A-helpfulness-3").check()  # 4 · Agree
    card.locator("#A-clarity-4").check()  # 5 · Strongly agree
    expect(card.locator("#A-helpfulness [data-points]")).to_have_text("4")
    expect(card.locator("[data-total]")).to_have_text("—")
    card.locator("#A-accuracy-0").check()
    expect(card.locator("[data-total]")).to_have_text("10")
    card.locator("#A-accuracy").get_by_role("button", name="Clear answer").click()
    expect(card.locator("[data-total]")).to_have_text("—")
    card.locator("#A-accuracy-0").check()
    # Categories give no points, and their "0 / 0" is not shown.
    card.locator("#A-harmful-1").check()  # Yes
    expect(card.locator("#A-harmful legend [data-points]")).to_be_hidden()
    expect(card.locator("[data-total]")).to_have_text("10")
    page.locator("#case-preference").get_by_text("A slightly better").click()
    expect(page.locator("#case-preference-1")).to_be_checked()
    expect(page.locator("#save-status")).to_contain_text("preview", timeout=5000)
    screenshot(page, "rubric-preview")
    page.get_by_label("High").check()
    page.get_by_role("button", name="Submit and next").click()
    # Response B is unanswered: the preview refuses as a rater's submit would.
    expect(page.locator("#save-status")).to_contain_text("required answer")


def test_the_setup_pages_fit_a_phone(browser, live_server, coordinator, tmp_path, screenshot):
    study = make_study(lead=coordinator, slug="phone", cases=3, status=Study.Status.DRAFT)
    pending = services.case_upload_create(
        study=study, actor=coordinator, filename="more.csv",
        data=CSV.replace("TC-00", "TC-10").encode(),
    )  # fmt: skip
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    sign_in(page, live_server, coordinator.username, PASSWORD)
    for name, path in [
        ("list", "/studies/"),
        ("create", "/studies/new/"),
        ("settings", "/s/phone/settings/"),
        ("cases", "/s/phone/test-cases/"),
        ("import-preview", f"/s/phone/test-cases/import/{pending.uuid}/"),
        ("rubric", "/s/phone/rubric/"),
        ("dimension", "/s/phone/rubric/add/pairwise/"),
        ("open", "/s/phone/status/open/"),
        ("preview", "/s/phone/rubric/preview/"),
    ]:
        page.goto(f"{live_server.url}{path}")
        if name == "cases":
            page.get_by_text("File formats and sample files").click()
        screenshot(page, f"setup-phone-{name}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, name
    context.close()

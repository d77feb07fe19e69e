"""A coordinator invites a rater, assigns, exports, imports a worksheet and unblinds."""

import csv
import io
from pathlib import Path

import pytest
from openpyxl import load_workbook
from playwright.sync_api import expect

from annotation.models import Assignment, Rating
from studies.models import Membership, Study

from ..factories import PASSWORD, UserFactory, make_study
from ..payloads import study_with_systems, submit_all
from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SYSTEMS = ("Zephyr-Alpha-7", "Quokka-Omega-3")


@pytest.fixture
def lead():
    return UserFactory(username="browser-lead")


@pytest.fixture
def study(lead):
    study = make_study(lead=lead, slug="people", cases=4, raters=[], systems=SYSTEMS)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    study.refresh_from_db()
    return study


def test_invite_assign_export_import_and_unblind(browser, page, live_server, lead, study, tmp_path):
    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/people/raters/")

    # An existing account, invited by username, accepts; a newcomer is invited by link.
    validator = UserFactory(username="offline-validator")
    page.fill("#id_username", "offline-validator")
    page.get_by_role("button", name="Invite as rater").click()
    expect(page.get_by_text("If an account with that name exists")).to_be_visible()
    assert not Membership.objects.filter(study=study, user=validator).exists()
    accepting = browser.new_context()
    invitee = accepting.new_page()
    sign_in(invitee, live_server, validator.username, PASSWORD)
    invitee.goto(f"{live_server.url}/")
    invitee.get_by_role("button", name="Accept").click()
    expect(invitee.get_by_text("Welcome to")).to_be_visible()
    accepting.close()
    page.fill("#id_note", "for the second validator")
    page.get_by_role("button", name="Create link").click()
    link = page.locator("#invitation-link").input_value()
    assert link.startswith(live_server.url + "/invite/")

    newcomer = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    invited = newcomer.new_page()
    invited.goto(link)
    assert_fits(invited)
    invited.fill("#id_signup-username", "validator-two")
    invited.fill("#id_signup-password1", "a-long-pass-phrase-9")
    invited.fill("#id_signup-password2", "a-long-pass-phrase-9")
    invited.get_by_role("button", name="Create account and join").click()
    expect(invited.get_by_text("Welcome to")).to_be_visible()
    invited.goto(link)
    expect(invited.locator("h1")).to_have_text("This link has already been used")
    newcomer.close()

    page.goto(f"{live_server.url}/s/people/raters/")
    expect(page.locator("#invitation-table")).to_contain_text("Used")
    # The study is open: each rater got their cases on joining, with no Assign pressed
    # (two raters per case, so once the second had joined).
    expect(page.locator("#unassigned")).to_have_count(0)
    expect(page.locator("#rater-table")).to_contain_text("0 / 4")
    assert Assignment.objects.filter(rater__study=study).count() == 8
    assert "validator-two" not in page.content()
    assert_accessible(page, name="raters")

    # R-01 works offline: their worksheet, filled in, comes back through the import.
    page.goto(f"{live_server.url}/s/people/results/")
    page.select_option("#worksheet-rater", "R-01")
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download (Excel)").click()
    download = download_info.value
    assert download.suggested_filename == "people-worksheet-R-01.xlsx"
    # The columns of the validator instructions' worksheet, in their order, then where the
    # rater marks a skip, then the rater.
    instructions = ["TC-ID", "Response", "Depth", "Evidence", "Alternatives", "Structure",
                    "Actionability", "Total", "Confidence", "Notes"]  # fmt: skip
    sheet = load_workbook(io.BytesIO(Path(download.path()).read_bytes())).active
    assert [cell.value for cell in sheet[1]] == [*instructions, "Skipped", "Rater"]
    assert sheet.freeze_panes == "A2"
    with page.expect_download() as csv_info:
        page.get_by_role("link", name="Worksheet (CSV)").click()
    rows = list(csv.reader(io.StringIO(Path(csv_info.value.path()).read_text("utf-8-sig"))))
    assert rows[0] == [*instructions, "Rater"]
    mine = [row for row in rows[1:] if row[-1] == "R-01"]
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(rows[0])
        for row in mine:
            writer.writerow(row[:2] + ["4", "2", "4", "3", "2", "15", "High", "offline", "R-01"])
    page.select_option("#id_rater", "R-01")
    page.set_input_files("#id_file", str(filled))
    page.get_by_role("button", name="Check only").click()
    expect(page.locator("#import-check")).to_contain_text("4 test cases for R-01")
    assert Rating.objects.filter(assignment__rater__pseudonym="R-01").count() == 0
    # The checked file is kept: no need to choose it again.
    page.get_by_role("button", name="Import this file now for R-01").click()
    expect(page.get_by_text("Imported 4 test cases for R-01")).to_be_visible()
    assert Rating.objects.filter(assignment__rater__pseudonym="R-01").count() == 8
    assert_accessible(page, name="results")
    for name in SYSTEMS:
        assert name not in page.content()

    # Closed, then unblinded by the lead: the key appears.
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    page.reload()
    page.get_by_role("link", name="Unblind the study…").click()
    page.get_by_label("I understand").check()
    page.get_by_role("button", name="Unblind").click()
    expect(page.get_by_text("The study is unblinded")).to_be_visible()
    with page.expect_download() as key_info:
        page.get_by_role("link", name="Unblinding key (CSV)").click()
    key = Path(key_info.value.path()).read_text("utf-8")
    assert all(name in key for name in SYSTEMS)


def test_people_and_results_pages_fit_a_phone(browser, live_server, lead, study, screenshot):
    for user in (UserFactory(), UserFactory()):
        from studies.services import membership_add

        membership_add(study=study, user=user, role=Membership.Role.RATER)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    sign_in(page, live_server, lead.username, PASSWORD)
    for name, path in [
        ("raters", "/s/people/raters/"),
        ("results", "/s/people/results/"),
        ("unblind", "/s/people/unblind/"),
    ]:
        page.goto(f"{live_server.url}{path}")
        screenshot(page, f"results-phone-{name}")
        assert_fits(page)
    page.goto(f"{live_server.url}/s/people/raters/")
    page.get_by_role("button", name="Create link").click()
    screenshot(page, "results-phone-invitation-link")
    assert_fits(page)
    page.goto(f"{live_server.url}/invite/not-a-token/")
    assert_fits(page)
    context.close()


def test_the_agreement_table_fits_a_phone(browser, live_server, settings, screenshot):
    """On a phone, the per-dimension table shows α, its interval and κ without sideways
    scrolling; the level, probabilities, counts and % agreement wait for a wider screen."""
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    study = study_with_systems(cases=6, consented=True)
    submit_all(study)
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    sign_in(page, live_server, study.lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/agreement/")
    table = page.locator("table", has=page.get_by_text("Agreement per dimension"))
    expect(table.get_by_role("columnheader", name="95% interval")).to_be_visible()
    expect(table.get_by_role("columnheader", name="Pairable ratings")).to_be_hidden()
    screenshot(page, "agreement-phone")
    sideways = table.evaluate("(t) => t.scrollWidth - t.parentElement.clientWidth")
    assert sideways <= 0, f"the table is {sideways}px wider than the screen"
    coefficients = page.locator("#agreement-coefficients")
    expect(coefficients.get_by_role("columnheader", name="Gwet's AC")).to_be_visible()
    sideways = coefficients.evaluate("(t) => t.scrollWidth - t.parentElement.clientWidth")
    assert sideways <= 0, f"the coefficients table is {sideways}px wider than the screen"
    assert_fits(page)
    context.close()

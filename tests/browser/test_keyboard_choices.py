"""Number keys choose a dimension's option (a Likert answer is one key, not four), c goes to
the confidence, and Skip is in the ? sheet and on its own key."""

import pytest
from playwright.sync_api import expect

from annotation.services import assignments_create_all
from annotation.services.participation import consent_record
from studies.models import Membership, Study
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add

from ..factories import PASSWORD, UserFactory, make_cases
from .accessibility import assert_accessible
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open_case(page, live_server, *, preset, slug):
    lead, user = UserFactory(), UserFactory()
    study = study_create(slug=slug, name=slug, lead=lead, rubric_preset=preset)
    cases_add(study=study, systems=["baseline", "improved"], cases=make_cases(2))
    membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=membership)
    consent_record(rater=membership, agreed=True, prior_knowledge=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    assignment = membership.assignments.order_by("position").first()
    sign_in(page, live_server, user.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    page.wait_for_load_state("load")
    return assignment


def test_number_keys_answer_a_likert_scale_and_c_goes_to_the_confidence(page, live_server):
    _open_case(page, live_server, preset="likert", slug="keys-likert")
    keys = page.keyboard
    keys.type("j")  # Response A, Helpfulness
    keys.type("4")
    expect(page.locator("#A-helpfulness-3")).to_be_checked()  # value 4, "Agree"
    keys.type("5")  # the same dimension: a second key changes the answer
    expect(page.locator("#A-helpfulness-4")).to_be_checked()
    expect(page.locator("#A-helpfulness-3")).not_to_be_checked()
    keys.type("j")  # Clarity
    keys.type("2")
    expect(page.locator("#A-clarity-1")).to_be_checked()
    # On a dimension 1, 2, 3 answer it; c goes to the confidence, where they set it.
    expect(page.locator("#confidence-low")).not_to_be_checked()
    keys.type("c")
    keys.type("2")
    expect(page.locator("#confidence-medium")).to_be_checked()
    expect(page.locator("#A-clarity-1")).to_be_checked()


def test_skip_is_in_the_shortcut_sheet_and_x_opens_it(page, live_server):
    _open_case(page, live_server, preset="pairwise", slug="keys-pairwise")
    keys = page.keyboard
    keys.type("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(sheet).to_contain_text("Skip this case")
    expect(sheet).to_contain_text("choose one")
    assert_accessible(page, name="shortcut sheet")
    keys.press("Escape")
    expect(sheet).to_be_hidden()
    # A preference's options by their place: 1 is "A much better".
    keys.type("j")
    keys.type("1")
    expect(page.get_by_label("A much better")).to_be_checked()
    keys.type("x")
    expect(page.locator("#skip-case")).to_have_attribute("open", "")
    expect(page.locator("#skip-case summary")).to_be_focused()

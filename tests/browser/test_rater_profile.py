"""A rater agrees to the study, is offered the profile, fills it in with one answer
withheld, and finds it again from their study page; at 375 and 1366 pixels."""

import pytest

from annotation.models import RaterProfile
from studies.models import Membership, Study
from studies.services.profile_questions import profile_questions_set

from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTIONS = [
    {"key": "language", "label": "First language", "kind": "choice",
     "choices": ["English", "Welsh"]},
    {"key": "support_years", "label": "Years of customer support experience",
     "kind": "number", "min": 0, "max": 50},
    {"key": "region", "label": "Region you live in", "kind": "choice",
     "choices": ["Europe", "Asia"]},
]  # fmt: skip


@pytest.mark.parametrize("width", [1366, 375])
def test_a_rater_fills_a_profile_with_one_answer_withheld(page, live_server, screenshot, width):
    lead = UserFactory(username=f"profile-lead-{width}")
    rater = UserFactory(username=f"profile-rater-{width}")
    study = make_study(lead=lead, slug=f"profile-{width}", cases=2, raters=[rater],
                       status=Study.Status.DRAFT)  # fmt: skip
    study.consent_text = "You will rate answers. You may stop at any time."
    study.save(update_fields=["consent_text"])
    profile_questions_set(study=study, actor=lead, questions=QUESTIONS)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)

    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/start/")
    if page.get_by_role("radio", name="No", exact=True).count():  # the disclosure question
        page.get_by_role("radio", name="No", exact=True).check()
    page.check("#id_agree")
    page.get_by_role("button", name="Agree and continue").click()
    # The profile is the next step, optional, with its own consent.
    page.wait_for_url(f"**/s/{study.slug}/profile/")
    assert page.get_by_text("you can rate either way").is_visible()
    page.get_by_label("I agree to give these characteristics").check()
    page.get_by_label("Welsh").check()
    page.get_by_label("A whole number from 0 to 50").fill("6")
    region = page.locator("fieldset[data-question=region]")
    region.get_by_label("Prefer not to say").check()
    screenshot(page, f"rater-profile-{width}")
    assert_accessible(page, name="rater profile")
    assert_fits(page, width)
    page.get_by_role("button", name="Save").click()

    page.wait_for_url(f"**/s/{study.slug}/cases/")
    assert page.get_by_text("your profile is saved").is_visible()
    step = page.locator("#profile-step")
    assert step.get_by_text("You can change or withdraw it").is_visible()
    profile = RaterProfile.objects.get(rater=Membership.objects.get(study=study, user=rater))
    assert profile.consented and not profile.share_with_pseudonym
    assert profile.answers == {"language": "Welsh", "support_years": 6, "region": None}
    # Rating is open as before.
    assert page.get_by_role("link", name="Next unrated case").is_visible()

    # Back to it: the answers are there, the withheld one still withheld.
    step.get_by_role("link").click()
    page.wait_for_url(f"**/s/{study.slug}/profile/")
    assert page.get_by_label("Welsh").is_checked()
    assert region.get_by_label("Prefer not to say").is_checked()
    assert page.get_by_role("button", name="Withdraw and delete my profile").is_visible()


@pytest.mark.parametrize("width", [1366, 375])
def test_the_lead_sets_the_questions_from_the_preset(page, live_server, screenshot, width):
    lead = UserFactory(username=f"questions-lead-{width}")
    study = make_study(lead=lead, slug=f"questions-{width}", cases=2, status=Study.Status.DRAFT)
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/settings/")
    pages = page.get_by_role("navigation", name="Study pages")
    if width == 375:  # on a phone the study pages fold behind their button
        pages.get_by_role("button", name="Study pages").click()
    pages.get_by_role("link", name="Rater profile").click()
    page.get_by_role("button", name="Use the preset").click()
    assert page.get_by_text("Profile questions saved.").is_visible()
    assert page.locator("#q2-label").input_value() == "Region you live in"
    screenshot(page, f"profile-questions-{width}")
    assert_accessible(page, name="profile questions")
    assert_fits(page, width)
    # Moving the last question up saves the order.
    page.get_by_role("button", name="Move up question 3").click()
    assert page.locator("#q1-label").input_value() == "Region you live in"
    assert list(study.profile_questions.values_list("key", flat=True).order_by("position")) == [
        "language",
        "region",
        "support_years",
    ]

"""The rater's profile: its own consent, answers withheld, declining, changing, withdrawing,
and that no one else ever reaches one rater's profile (pages, API, exports)."""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation import exports
from annotation.models import RaterProfile, Withdrawal
from annotation.selectors.profile import profile_summary
from annotation.services.participation import consent_record, withdrawal_record
from annotation.services.profile import ProfileError, profile_save
from studies.models import Membership, Study
from studies.services.profile_questions import profile_questions_set
from tests.factories import UserFactory, make_study

QUESTIONS = [
    {"key": "language", "label": "Language", "kind": "choice", "choices": ["Xhosa", "Welsh"]},
    {"key": "years", "label": "Years of support", "kind": "number", "min": 0, "max": 50},
    {"key": "role", "label": "Job title", "kind": "text"},
]
# Answers no page but the rater's own may show: each is searched for in every other page.
SECRET_TEXT = "zebracrossing-title"
SECRET_YEARS = 37


@pytest.fixture
def profiled(lead, rater, other_rater):
    study = make_study(
        lead=lead, slug="profiled", cases=2, raters=[rater, other_rater], status=Study.Status.DRAFT
    )
    profile_questions_set(study=study, actor=lead, questions=QUESTIONS)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    return study


def member(study, user) -> Membership:
    return Membership.objects.get(study=study, user=user)


def consent(study, user) -> Membership:
    membership = member(study, user)
    consent_record(rater=membership, agreed=True, prior_knowledge=False)
    return membership


def profile_url(study) -> str:
    return reverse("annotation:profile", args=[study.slug])


# Onboarding ------------------------------------------------------------------------------


def test_after_the_study_consent_the_rater_is_offered_the_profile(client, profiled, rater):
    client.force_login(rater)
    response = client.post(
        reverse("annotation:consent", args=[profiled.slug]),
        {"agree": "on", "prior_knowledge": "no"},
    )
    assert response.status_code == 302 and response.url == profile_url(profiled)
    page = client.get(profile_url(profiled)).content.decode()
    assert "I agree to give these characteristics" in page
    assert page.count("Prefer not to say") == 3  # one per question
    assert "exported beside my pseudonym" in page


def test_a_study_without_questions_goes_straight_to_the_cases(client, lead, rater):
    study = make_study(lead=lead, slug="no-profile", cases=2, raters=[rater])
    client.force_login(rater)
    response = client.post(
        reverse("annotation:consent", args=[study.slug]), {"agree": "on", "prior_knowledge": "no"}
    )
    assert response.url == reverse("annotation:assignments", args=[study.slug])
    assert client.get(profile_url(study)).status_code == 302


def test_the_profile_waits_for_the_study_consent(client, profiled, rater):
    client.force_login(rater)
    response = client.get(profile_url(profiled))
    assert response.url == reverse("annotation:consent", args=[profiled.slug])


def test_a_rater_answers_with_one_answer_withheld(client, profiled, rater):
    membership = consent(profiled, rater)
    client.force_login(rater)
    response = client.post(
        profile_url(profiled),
        {
            "consent": "yes",
            "answer-language": "Welsh",
            "answer-years": "12",
            "answer-role": "agent",
            "answer-role-withheld": "1",
        },
    )
    assert response.status_code == 302
    profile = RaterProfile.objects.get(rater=membership)
    assert profile.consented and not profile.share_with_pseudonym
    assert profile.answers == {"language": "Welsh", "years": 12, "role": None}
    # The study page shows the step as done, and the page shows the answers back.
    home = client.get(reverse("annotation:assignments", args=[profiled.slug])).content.decode()
    assert "You can change or withdraw it" in home
    page = client.get(profile_url(profiled)).content.decode()
    assert 'value="Welsh" checked' in page and 'value="12"' in page


def test_a_wrong_answer_is_refused_and_nothing_is_saved(client, profiled, rater):
    membership = consent(profiled, rater)
    client.force_login(rater)
    response = client.post(profile_url(profiled), {"consent": "yes", "answer-years": "99"})
    assert response.status_code == 400
    assert "from 0 to 50" in response.content.decode()
    assert not RaterProfile.objects.filter(rater=membership).exists()
    # Neither agreeing nor declining: asked to choose.
    response = client.post(profile_url(profiled), {"answer-years": "9"})
    assert response.status_code == 400 and "declining is fine" in response.content.decode()


@pytest.mark.parametrize("typed", ["²", "1²", "٣", "--3", "1e3", "1\x00", "12" * 10])
def test_a_number_typed_oddly_is_refused_with_a_message(client, profiled, rater, typed):
    # Characters Python counts as digits without reading them as a number (superscripts),
    # other scripts' digits, and junk: a clear refusal, never an error page.
    membership = consent(profiled, rater)
    client.force_login(rater)
    response = client.post(profile_url(profiled), {"consent": "yes", "answer-years": typed})
    assert response.status_code == 400
    assert "whole number" in response.content.decode()
    assert not RaterProfile.objects.filter(rater=membership).exists()


def test_declining_keeps_no_answer_and_does_not_block_rating(client, profiled, rater):
    membership = consent(profiled, rater)
    client.force_login(rater)
    client.post(profile_url(profiled), {"consent": "no", "answer-years": "12", "share": "1"})
    profile = RaterProfile.objects.get(rater=membership)
    assert not profile.consented and profile.answers == {} and not profile.share_with_pseudonym
    response = client.get(reverse("annotation:next", args=[profiled.slug]))
    assert response.status_code == 302 and "/rate/" in response.url


def test_an_unanswered_profile_does_not_block_rating(client, profiled, rater):
    consent(profiled, rater)
    client.force_login(rater)
    response = client.get(reverse("annotation:next", args=[profiled.slug]))
    assert "/rate/" in response.url


def test_the_rater_changes_then_withdraws_the_profile(client, profiled, rater):
    membership = consent(profiled, rater)
    profile_save(rater=membership, consented=True, answers={"years": 3}, share_with_pseudonym=True)
    client.force_login(rater)
    client.post(profile_url(profiled), {"consent": "yes", "answer-years": "4"})
    profile = RaterProfile.objects.get(rater=membership)
    assert profile.answers["years"] == 4 and not profile.share_with_pseudonym
    client.post(profile_url(profiled), {"withdraw": "1"})
    assert not RaterProfile.objects.filter(rater=membership).exists()


def test_withdrawing_from_the_study_with_deletion_deletes_the_profile(profiled, rater, other_rater):
    membership = consent(profiled, rater)
    keeper = consent(profiled, other_rater)
    for who in (membership, keeper):
        profile_save(rater=who, consented=True, answers={"years": 3}, share_with_pseudonym=False)
    withdrawal_record(rater=membership, data=Withdrawal.Data.DELETE)
    withdrawal_record(rater=keeper, data=Withdrawal.Data.KEEP)
    assert not RaterProfile.objects.filter(rater=membership).exists()
    assert RaterProfile.objects.filter(rater=keeper).exists()
    with pytest.raises(ProfileError, match="withdrawn"):
        profile_save(rater=keeper, consented=True, answers={}, share_with_pseudonym=False)


def test_an_answer_to_no_question_is_refused(profiled, rater):
    membership = consent(profiled, rater)
    with pytest.raises(Exception, match="names no question"):
        profile_save(
            rater=membership, consented=True, answers={"age": 40}, share_with_pseudonym=False
        )


# No one else reaches a rater's profile ---------------------------------------------------


@pytest.fixture
def secret_profiles(profiled, rater, other_rater):
    """Both raters gave a profile with answers no other page may show; one shares it."""
    sharer = consent(profiled, rater)
    private = consent(profiled, other_rater)
    answers = {"language": "Xhosa", "years": SECRET_YEARS, "role": SECRET_TEXT}
    profile_save(rater=sharer, consented=True, answers=answers, share_with_pseudonym=True)
    profile_save(
        rater=private,
        consented=True,
        answers={**answers, "role": "private-" + SECRET_TEXT},
        share_with_pseudonym=False,
    )
    return sharer, private


def _study_urls(study) -> list[str]:
    """Every page and API endpoint of the project that names this study by its slug alone."""
    from tests.urls_enumeration import api_urls, project_urls

    urls = []
    for name, pattern in [*project_urls(), *api_urls()]:
        arguments = set(pattern.pattern.regex.groupindex)
        if arguments == {"slug"} and name:
            urls.append(reverse(name, kwargs={"slug": study.slug}))
    return urls


def test_no_coordinator_page_or_endpoint_shows_an_individual_profile(
    client, profiled, lead, secret_profiles
):
    """Every page and API endpoint of the study, read by its lead (also through a token):
    no text answer anywhere, and the profile page itself is the rater's only."""
    from studies.services import tokens

    _, secret = tokens.api_token_create(user=lead, name="tests")
    client.force_login(lead)
    urls = _study_urls(profiled)
    assert profile_url(profiled) in urls
    assert reverse("agreement:report", args=[profiled.slug]) in urls
    for url in urls:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"} if url.startswith("/api/") else {}
        response = client.get(url, **headers)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert SECRET_TEXT.encode() not in body, url
    assert client.get(profile_url(profiled)).status_code == 403


def test_the_api_schema_has_no_way_to_a_profile(client):
    schema = client.get("/api/v1/openapi.json").json()
    text = json.dumps(schema).lower()
    for word in ("share_with_pseudonym", "rater_profile", "raterprofile", "prefer not"):
        assert word not in text
    paths = [path for path in schema["paths"] if "profile" in path]
    assert paths == ["/api/v1/studies/{slug}/profile-questions/"]


def test_only_sharing_raters_are_in_the_profiles_export(profiled, secret_profiles):
    sharer, private = secret_profiles
    text = "".join(exports.export_text(study=profiled, fmt=exports.PROFILES_CSV))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Rater", "language", "years", "role"]
    assert rows[1:] == [[sharer.pseudonym, "Xhosa", str(SECRET_YEARS), SECRET_TEXT]]
    assert "private-" not in text


def test_a_withheld_answer_reads_prefer_not_to_say_in_the_export(profiled, rater):
    membership = consent(profiled, rater)
    profile_save(rater=membership, consented=True, answers={"years": 2}, share_with_pseudonym=True)
    text = "".join(exports.export_text(study=profiled, fmt=exports.PROFILES_CSV))
    assert list(csv.reader(io.StringIO(text)))[1] == [
        membership.pseudonym,
        "prefer not to say",
        "2",
        "prefer not to say",
    ]


def test_no_other_export_carries_a_profile(profiled, secret_profiles):
    for fmt in (exports.WORKSHEET_CSV, exports.LONG_CSV, exports.GOLD_CSV, exports.DICTIONARY_MD):
        text = "".join(exports.export_text(study=profiled, fmt=fmt))
        assert SECRET_TEXT not in text and "Xhosa" not in text, fmt


def test_the_bundle_has_the_profiles_file_only_for_a_study_that_asks(client, profiled, lead):
    import zipfile

    client.force_login(lead)
    response = client.get(reverse("agreement:report_bundle", args=[profiled.slug]))
    names = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist()
    assert f"{profiled.slug}-rater-profiles.csv" in names
    other = make_study(lead=lead, slug="no-profile-bundle", cases=2, raters=[UserFactory()])
    response = client.get(reverse("agreement:report_bundle", args=[other.slug]))
    names = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist()
    assert not any("rater-profiles" in name for name in names)


def test_the_report_shows_the_suppressed_summary(client, profiled, lead, secret_profiles):
    client.force_login(lead)
    page = client.get(reverse("agreement:report", args=[profiled.slug])).content.decode()
    assert 'id="section-rater-profile"' in page
    assert "2 of 2 raters gave a profile" in page
    # Two raters, under the minimum cell of 5: every count suppressed, no median.
    summary = profile_summary(study=profiled)
    assert all(row["count"] is None for q in summary["questions"] for row in q["rows"])
    assert (
        str(SECRET_YEARS) not in page.split('id="section-rater-profile"')[1].split("</section>")[0]
    )

"""The information sheet a rater consents to states the study's content warnings, the right
to skip and the daily limits (protocol 3), and their consent records what they read."""

import pytest
from django.urls import reverse

from annotation.models import ConsentRecord
from studies.models import StratumSetting, TestCase, WelfareSettings

from ..factories import UserFactory, make_study

WARNING = "Responses may describe self-harm in detail."


@pytest.fixture
def study_and_rater(db):
    user = UserFactory(username="sheet-rater")
    study = make_study(slug="sheet-study", cases=3, raters=[user])
    study.consent_text = "**Purpose.** Compare responses."
    study.consent_version = 2  # a version no rater has agreed to, whatever the factory did
    study.save()
    TestCase.objects.filter(study=study).update(stratum="harm-probes-secret-name")
    return study, user


def test_the_sheet_names_warnings_skipping_and_limits_but_no_stratum(client, study_and_rater):
    study, user = study_and_rater
    StratumSetting.objects.create(
        study=study, stratum="harm-probes-secret-name", content_warning=WARNING, daily_minutes=45
    )
    WelfareSettings.objects.create(study=study, daily_minutes=120)
    client.force_login(user)
    url = reverse("annotation:consent", args=[study.slug])
    page = client.get(url).text
    assert WARNING in page
    assert "You may skip any case" in page
    assert "at most 120 minutes" in page and "45 minutes" in page
    assert "harm-probes-secret-name" not in page
    assert client.post(url, {"agree": "on", "prior_knowledge": "no"}).status_code == 302
    record = ConsentRecord.objects.get(rater__user=user, version=2)
    # What the rater read is what their consent holds.
    assert record.consent_text.startswith("**Purpose.** Compare responses.")
    assert WARNING in record.consent_text and "You may skip any case" in record.consent_text


def test_a_case_of_its_own_warning_is_announced_without_a_count(client, study_and_rater):
    study, user = study_and_rater
    TestCase.objects.filter(study=study).update(content_warning="Graphic violence.")
    client.force_login(user)
    page = client.get(reverse("annotation:consent", args=[study.slug])).text
    assert "Some cases carry a content warning of their own" in page
    # The case's own text is read before that case, not listed in the sheet.
    assert "Graphic violence." not in page
    assert "minutes of active time" not in page  # no limit set, none stated


def test_the_sheet_states_each_stratum_limit_and_a_single_minute_as_such(client, study_and_rater):
    study, user = study_and_rater
    TestCase.objects.filter(study=study).order_by("position").filter(
        pk=study.test_cases.order_by("position").first().pk
    ).update(stratum="other-secret-name")
    StratumSetting.objects.create(study=study, stratum="harm-probes-secret-name", daily_minutes=1)
    StratumSetting.objects.create(study=study, stratum="other-secret-name", daily_minutes=30)
    WelfareSettings.objects.create(study=study, daily_minutes=1)
    client.force_login(user)
    page = client.get(reverse("annotation:consent", args=[study.slug])).text
    assert "at most 1 minute of active time" in page
    # Every limit, not only the smallest (a limit of 30 is not "1 minute or fewer").
    assert "a daily limit of their own: 1 or 30 minutes of active time a day" in page
    assert "secret-name" not in page


@pytest.mark.parametrize(
    "strata, values",
    [
        ([{"stratum": "harm-probes-secret-name", "content_warning": WARNING}], {}),
        ([{"stratum": "harm-probes-secret-name", "daily_minutes": 30}], {}),
        ([], {"daily_minutes": "60"}),
    ],
)
def test_a_pilot_rater_consents_again_when_a_warning_or_limit_is_added(
    client, study_and_rater, strata, values
):
    # During the pilot the welfare settings can still change, and raters have consented:
    # a new warning or limit is not in the sheet they agreed to, so they are asked again.
    from studies.models import Study
    from studies.services.welfare import welfare_settings_update

    study, user = study_and_rater
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PILOT)
    study.refresh_from_db()
    client.force_login(user)
    url = reverse("annotation:consent", args=[study.slug])
    assert client.post(url, {"agree": "on", "prior_knowledge": "no"}).status_code == 302
    cases = reverse("annotation:assignments", args=[study.slug])
    assert "Read and agree" not in client.get(cases).text
    welfare_settings_update(study=study, actor=study.lead, values=values, strata=strata)
    study.refresh_from_db()
    assert study.consent_version == 3
    assert "Read and agree" in client.get(cases).text
    assert client.post(url, {"agree": "on", "prior_knowledge": "no"}).status_code == 302
    record = ConsentRecord.objects.get(rater__user=user, version=3)
    assert "minutes" in record.consent_text or WARNING in record.consent_text


def test_pay_or_retention_changes_ask_no_new_consent(client, study_and_rater):
    from studies.services.welfare import welfare_settings_update

    study, _ = study_and_rater
    welfare_settings_update(study=study, actor=study.lead, values={"retention_days": "90"})
    study.refresh_from_db()
    assert study.consent_version == 2


def test_the_welfare_page_tells_the_lead_that_raters_are_asked_again(client, study_and_rater):
    from studies.models import Study

    study, _ = study_and_rater
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PILOT)
    client.force_login(study.lead)
    url = reverse("annotation:welfare", args=[study.slug])
    page = client.get(url).text
    assert "harm-probes-secret-name" in page
    form = {"pay_basis": "unpaid", "profile_min_cell": "5", "warning-0": WARNING}
    response = client.post(url, form, follow=True)
    assert "asked to agree again" in response.text
    study.refresh_from_db()
    assert study.consent_version == 3


def test_a_pilot_rater_consents_again_when_cases_with_their_own_warning_are_imported(
    client, study_and_rater
):
    from studies.models import Study
    from studies.services import test_cases_import

    study, user = study_and_rater
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PILOT)
    study.refresh_from_db()
    client.force_login(user)
    url = reverse("annotation:consent", args=[study.slug])
    assert client.post(url, {"agree": "on", "prior_knowledge": "no"}).status_code == 302
    systems = sorted(study.systems.values_list("name", flat=True))
    header = "id,prompt,content_warning," + ",".join(f"response:{s}" for s in systems)
    plain = f"{header}\nTC-900,P,,{','.join('r' for _ in systems)}\n".encode()
    test_cases_import(study=study, actor=study.lead, filename="more.csv", data=plain)
    study.refresh_from_db()
    assert study.consent_version == 2  # the sheet says the same: no new consent
    warned = f"{header}\nTC-901,P,Slurs.,{','.join('r' for _ in systems)}\n".encode()
    test_cases_import(study=study, actor=study.lead, filename="warned.csv", data=warned)
    study.refresh_from_db()
    assert study.consent_version == 3
    cases = reverse("annotation:assignments", args=[study.slug])
    assert "Read and agree" in client.get(cases).text
    assert "Some cases carry a content warning of their own" in client.get(url).text


def test_a_warned_case_added_on_its_own_in_the_pilot_asks_for_consent_again(study_and_rater):
    """The case writer holds the rule, whatever adds the case (an import, an attention
    check, the demo, a command)."""
    from studies.models import Study
    from studies.services import test_cases_add

    study, _ = study_and_rater
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PILOT)
    study.refresh_from_db()
    systems = sorted(study.systems.values_list("name", flat=True))

    def case(case_id, warning):
        responses = {system: "r" for system in systems}
        return {"id": case_id, "prompt": "P", "content_warning": warning, "responses": responses}

    test_cases_add(study=study, systems=systems, cases=[case("TC-910", "")])
    study.refresh_from_db()
    assert study.consent_version == 2
    test_cases_add(study=study, systems=systems, cases=[case("TC-911", "Slurs.")])
    study.refresh_from_db()
    assert study.consent_version == 3
    test_cases_add(study=study, systems=systems, cases=[case("TC-912", "Gore.")])
    study.refresh_from_db()
    assert study.consent_version == 3  # the sheet already says so

"""Daily exposure limits: active time credited to the rater's own day, the cases served
once a limit is reached, and what the rater, the coordinator, the protocol and the report
say about it."""

import json
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from agreement.report.sections import study_report
from annotation import selectors, services
from annotation.models import Assignment, ExposureDay
from annotation.selectors.exposure import exposure_today, raters_at_limit_today, servable
from annotation.services.exposure import exposure_credit, rater_time_zone_report
from studies.exposure import local_day, seconds_by_day, time_zone_clean, zone_of
from studies.models import Membership, StratumSetting, WelfareSettings
from studies.selectors import study_protocol_chunks, study_protocol_fingerprint
from tests.payloads import full_marks_payload, worked

from ..factories import UserFactory, make_study
from .support import consent_all
from .test_locks import together

BERLIN = "Europe/Berlin"


def today_in(name: str) -> date:
    return local_day(moment=timezone.now(), zone=zone_of(name))


def case_in(rater: Membership, stratum: str) -> Assignment:
    return rater.assignments.filter(test_case__stratum=stratum).order_by("position").first()


def spent(rater: Membership, stratum: str, minutes: int, *, day: date | None = None) -> None:
    """The rater has already spent ``minutes`` on ``stratum`` today (their own day)."""
    ExposureDay.objects.update_or_create(
        rater=rater,
        day=day or today_in(rater.time_zone or "UTC"),
        stratum=stratum,
        defaults={"seconds": minutes * 60},
    )


@pytest.fixture
def berlin(membership):
    Membership.objects.filter(pk=membership.pk).update(time_zone=BERLIN)
    membership.refresh_from_db()
    return membership


def study_limit(study, minutes):
    WelfareSettings.objects.update_or_create(study=study, defaults={"daily_minutes": minutes})


def stratum_limit(study, stratum, minutes):
    StratumSetting.objects.update_or_create(
        study=study, stratum=stratum, defaults={"daily_minutes": minutes}
    )


# The rater's day and time zone -----------------------------------------------------------


def test_a_save_just_after_midnight_in_berlin_counts_the_minutes_before_it_on_the_day_before(
    berlin,
):
    # 23:05 UTC on 10 March is 00:05 on 11 March in Berlin (UTC+1), still 10 March in UTC.
    end = datetime(2026, 3, 10, 23, 5, tzinfo=UTC)
    exposure_credit(rater=berlin, stratum="policy", seconds=600, end=end)
    days = dict(ExposureDay.objects.filter(rater=berlin).values_list("day", "seconds"))
    assert days == {date(2026, 3, 10): 300, date(2026, 3, 11): 300}


def test_a_save_late_in_the_evening_in_berlin_counts_on_that_day_not_the_utc_one(berlin):
    # 23:30 on 31 July in Berlin (UTC+2, summer time) is 21:30 UTC.
    exposure_credit(
        rater=berlin, stratum="", seconds=120, end=datetime(2026, 7, 31, 21, 30, tzinfo=UTC)
    )
    # 00:30 on 1 August in Berlin is 22:30 UTC on 31 July: a new day for the rater.
    exposure_credit(
        rater=berlin, stratum="", seconds=60, end=datetime(2026, 7, 31, 22, 31, tzinfo=UTC)
    )
    days = dict(ExposureDay.objects.filter(rater=berlin).values_list("day", "seconds"))
    assert days == {date(2026, 7, 31): 120, date(2026, 8, 1): 60}


def test_seconds_are_split_at_each_local_midnight_and_none_is_lost():
    zone = zone_of("America/New_York")
    end = datetime(2026, 1, 2, 5, 10, tzinfo=UTC)  # 00:10 on 2 January in New York
    parts = seconds_by_day(end=end, seconds=3600, zone=zone)
    assert parts == [(date(2026, 1, 1), 3000), (date(2026, 1, 2), 600)]
    assert seconds_by_day(end=end, seconds=0, zone=zone) == []


@pytest.mark.parametrize(
    "reported, stored",
    [
        ("Europe/Berlin", "Europe/Berlin"),
        ("  Asia/Kolkata ", "Asia/Kolkata"),
        ("Mars/Olympus_Mons", "UTC"),
        ("x" * 10_000, "UTC"),
        (["Europe/Berlin"], "UTC"),
        ("../../etc/passwd", "UTC"),
    ],
)
def test_a_reported_time_zone_is_kept_only_when_it_is_a_known_one(membership, reported, stored):
    assert time_zone_clean(reported) == stored
    rater_time_zone_report(rater=membership, reported=reported)
    membership.refresh_from_db()
    assert membership.time_zone == stored


def test_a_save_without_a_time_zone_keeps_the_one_stored(berlin):
    rater_time_zone_report(rater=berlin, reported=None)
    rater_time_zone_report(rater=berlin, reported="")
    berlin.refresh_from_db()
    assert berlin.time_zone == BERLIN


def test_the_autosave_stores_the_browsers_time_zone_and_credits_the_day_in_it(
    client, rater, membership
):
    case = case_in(membership, "policy")
    worked(case, 40)
    client.force_login(rater)
    response = client.post(
        reverse("annotation:draft", args=[case.uuid]),
        json.dumps({"payload": {}, "version": 0, "active_seconds": 30, "time_zone": BERLIN}),
        content_type="application/json",
    )
    assert response.status_code == 200
    membership.refresh_from_db()
    assert membership.time_zone == BERLIN
    row = ExposureDay.objects.get(rater=membership)
    assert (row.day, row.stratum, row.seconds) == (today_in(BERLIN), "policy", 30)


def test_submitting_credits_the_active_time_and_a_worksheet_import_credits_none(membership):
    case = case_in(membership, "operations")
    worked(case, 50)
    services.rating_submit(
        assignment=case, payload=full_marks_payload(), expected_version=0, active_seconds=45
    )
    assert ExposureDay.objects.get(rater=membership, stratum="operations").seconds == 45


def test_two_saves_credit_the_same_day_and_stratum_both(membership):
    first, second = membership.assignments.filter(test_case__stratum="policy")[:2]
    for case in (first, second):
        worked(case, 100)
        services.draft_save(assignment=case, payload={}, expected_version=0, active_seconds=90)
    assert ExposureDay.objects.get(rater=membership, stratum="policy").seconds == 180


@pytest.mark.django_db(transaction=True)
def test_two_tabs_saving_at_the_same_moment_both_count():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database with row locks and concurrent connections")
    study = make_study(slug="two-tabs", cases=6, raters=[UserFactory()])
    rater = study.memberships.get(pseudonym="R-01")
    cases = list(rater.assignments.filter(test_case__stratum="policy")[:2])
    for case in cases:
        worked(case, 100)
    runs = together(
        *(
            lambda case=case: services.draft_save(
                assignment=case, payload={}, expected_version=0, active_seconds=80
            )
            for case in cases
        )
    )
    assert [run.error for run in runs] == [None, None]
    assert ExposureDay.objects.get(rater=rater, stratum="policy").seconds == 160


# Serving ----------------------------------------------------------------------------------


def test_a_stratum_over_its_limit_is_not_served_and_the_others_still_are(
    client, rater, berlin, study
):
    stratum_limit(study, "policy", 30)
    spent(berlin, "policy", 30)
    client.force_login(rater)
    response = client.get(reverse("annotation:next", args=[study.slug]))
    served = Assignment.objects.get(uuid=response["Location"].rstrip("/").split("/")[-1])
    assert served.test_case.stratum == "operations"
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "today's limit of 30 minutes on cases in “policy”" in page
    assert "tomorrow at 00:00 (Europe/Berlin)" in page
    assert "continue with the next one" in page
    # The case list says when the two cases of "policy" open again, instead of "Rate".
    assert page.count("Tomorrow at 00:00 (Europe/Berlin)") == 2


def test_a_stratum_just_under_its_limit_is_still_served(rater, berlin, study):
    stratum_limit(study, "policy", 30)
    ExposureDay.objects.create(rater=berlin, day=today_in(BERLIN), stratum="policy", seconds=1799)
    exposure = selectors.exposure_today(rater=berlin)
    assert exposure.allows("policy")
    served = servable(pending=selectors.pending_cases(rater=berlin), exposure=exposure)
    assert served.filter(test_case__stratum="policy").count() == 2
    spent(berlin, "policy", 30)
    served = servable(
        pending=selectors.pending_cases(rater=berlin), exposure=exposure_today(rater=berlin)
    )
    assert not served.filter(test_case__stratum="policy").exists()


def test_yesterdays_time_does_not_count_today(berlin, study):
    study_limit(study, 10)
    spent(berlin, "policy", 60, day=today_in(BERLIN) - timedelta(days=1))
    assert selectors.next_unrated(rater=berlin) is not None


def test_the_study_limit_adds_up_every_stratum_and_then_serves_nothing(
    client, rater, berlin, study
):
    study_limit(study, 60)
    stratum_limit(study, "policy", 45)
    spent(berlin, "policy", 40)
    spent(berlin, "operations", 19)
    assert selectors.next_unrated(rater=berlin) is not None  # 59 minutes
    spent(berlin, "operations", 20)  # 60 minutes, neither stratum at its own limit
    assert selectors.exposure_today(rater=berlin).strata_reached == []
    assert selectors.next_unrated(rater=berlin) is None
    client.force_login(rater)
    response = client.get(reverse("annotation:next", args=[study.slug]))
    assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    page = client.get(response["Location"]).text
    assert "today's limit of 60 minutes of rating in this study" in page
    assert "tomorrow at 00:00 (Europe/Berlin)" in page
    assert "Next unrated case" not in page


def test_a_rater_who_reported_no_time_zone_is_told_in_utc(client, rater, membership, study):
    study_limit(study, 5)
    spent(membership, "policy", 5)
    client.force_login(rater)
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "tomorrow at 00:00 (UTC)" in page


def test_a_case_not_started_over_the_limit_is_not_opened(client, rater, berlin, study):
    stratum_limit(study, "policy", 10)
    spent(berlin, "policy", 10)
    client.force_login(rater)
    response = client.get(reverse("annotation:rate", args=[case_in(berlin, "policy").uuid]))
    assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    other = client.get(reverse("annotation:rate", args=[case_in(berlin, "operations").uuid]))
    assert other.status_code == 200
    assert 'id="exposure-limit"' not in other.text


def test_a_case_started_before_the_limit_can_be_saved_and_submitted(client, rater, berlin, study):
    stratum_limit(study, "policy", 10)
    case = case_in(berlin, "policy")
    services.draft_save(assignment=case, payload={}, expected_version=0)
    spent(berlin, "policy", 10)
    client.force_login(rater)
    page = client.get(reverse("annotation:rate", args=[case.uuid]))
    assert page.status_code == 200
    assert "You began this case before reaching the limit" in page.text
    saved = client.post(
        reverse("annotation:draft", args=[case.uuid]),
        json.dumps({"payload": {"notes": "typed"}, "version": 1, "time_zone": BERLIN}),
        content_type="application/json",
    )
    assert saved.status_code == 200
    submitted = client.post(
        reverse("annotation:rate", args=[case.uuid]),
        {"payload": json.dumps(full_marks_payload()), "version": "2", "time_zone": BERLIN},
    )
    case.refresh_from_db()
    assert case.status == Assignment.Status.SUBMITTED
    # The next case served is one of another stratum.
    served = Assignment.objects.get(uuid=submitted["Location"].rstrip("/").split("/")[-1])
    assert served.test_case.stratum == "operations"


def test_the_study_page_counts_as_waiting_only_the_cases_not_started(client, rater, berlin, study):
    stratum_limit(study, "policy", 10)
    policy = list(berlin.assignments.filter(test_case__stratum="policy").order_by("position"))
    assert len(policy) >= 2
    services.draft_save(assignment=policy[0], payload={}, expected_version=0)
    spent(berlin, "policy", 10)
    client.force_login(rater)
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    waiting = len(policy) - 1  # the one begun stays open to be finished
    assert f"({waiting} case{'s' if waiting != 1 else ''} wait" in page


def test_the_last_case_under_the_limit_leads_to_the_study_page_not_the_end(
    client, rater, berlin, study
):
    study_limit(study, 1)
    case = case_in(berlin, "policy")
    services.draft_save(assignment=case, payload={}, expected_version=0)
    spent(berlin, "policy", 1)
    client.force_login(rater)
    response = client.post(
        reverse("annotation:rate", args=[case.uuid]),
        {"payload": json.dumps(full_marks_payload()), "version": "1"},
    )
    assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    page = client.get(response["Location"]).text
    assert "3 cases wait until then" not in page  # the study limit holds every case back
    assert "tomorrow at 00:00 (Europe/Berlin)" in page


def test_without_limits_nothing_is_held_back_and_no_rows_are_read(berlin, study):
    spent(berlin, "policy", 600)
    exposure = selectors.exposure_today(rater=berlin)
    assert exposure.seconds == {}
    assert selectors.next_unrated(rater=berlin) is not None


# The coordinator, the protocol and the report ---------------------------------------------


def test_the_qc_page_counts_the_raters_at_a_limit_on_their_own_day(
    client, lead, study, berlin, other_rater
):
    study_limit(study, 60)
    stratum_limit(study, "policy", 20)
    spent(berlin, "policy", 20)  # a stratum's limit, today in Berlin
    other = study.memberships.get(user=other_rater)
    spent(other, "operations", 60, day=today_in("UTC") - timedelta(days=2))  # long ago
    counts = raters_at_limit_today(study=study)
    assert (counts.study, counts.stratum) == (0, 1)
    spent(other, "operations", 60)
    assert raters_at_limit_today(study=study).study == 1
    client.force_login(lead)
    page = client.get(reverse("agreement:qc", args=[study.slug])).text
    assert "<strong>2</strong> raters reached a limit today" in page
    assert "R-01" not in page.split('id="exposure-today"')[1].split("</p>")[0]


def test_the_qc_page_says_nothing_of_limits_when_the_study_sets_none(client, lead, study):
    client.force_login(lead)
    assert 'id="exposure-today"' not in client.get(reverse("agreement:qc", args=[study.slug])).text


def test_the_fingerprint_of_a_study_without_limits_is_unchanged(study):
    before = study_protocol_fingerprint(study=study)
    # Settings that set no limit (pay, recruitment) change nothing.
    WelfareSettings.objects.create(study=study, daily_minutes=None, recruitment="Staff")
    assert study_protocol_fingerprint(study=study) == before
    # A stratum with a content warning only adds its warning, no limits.
    StratumSetting.objects.create(study=study, stratum="policy", content_warning="Hard text.")
    document = json.loads(b"".join(study_protocol_chunks(study=study)))
    assert "exposure" not in document and "content_warnings" in document


def test_the_limits_are_part_of_the_protocol_and_change_its_fingerprint(study):
    before = study_protocol_fingerprint(study=study)
    stratum_limit(study, "policy", 30)
    with_stratum = study_protocol_fingerprint(study=study)
    assert with_stratum != before
    study_limit(study, 120)
    assert study_protocol_fingerprint(study=study) not in (before, with_stratum)
    document = json.loads(b"".join(study_protocol_chunks(study=study)))
    assert document["exposure"] == {
        "daily_minutes": 120,
        "strata": [{"stratum": "policy", "daily_minutes": 30}],
    }


def test_the_report_states_the_limits(client, lead, study):
    assert study_report(study=study)["exposure"] is None
    study_limit(study, 120)
    stratum_limit(study, "policy", 30)
    assert study_report(study=study)["exposure"]["daily_minutes"] == 120
    client.force_login(lead)
    page = client.get(reverse("agreement:report", args=[study.slug])).text
    assert "limited to 120 minutes a day over the whole study" in page
    assert "30 minutes a day on “policy”" in page


def test_a_rater_in_another_study_is_not_held_by_this_ones_limits(rater, study):
    other = make_study(slug="other-study", cases=2, raters=[rater])
    consent_all(other)
    mine = other.memberships.get(user=rater)
    study_limit(study, 1)
    spent(study.memberships.get(user=rater), "policy", 5)
    assert selectors.next_unrated(rater=mine) is not None


def test_the_submit_form_reports_the_time_zone_too(client, rater, membership):
    case = case_in(membership, "operations")
    worked(case, 20)
    client.force_login(rater)
    client.post(
        reverse("annotation:rate", args=[case.uuid]),
        {
            "payload": json.dumps(full_marks_payload()),
            "version": "0",
            "active_seconds": "15",
            "time_zone": "America/Sao_Paulo",
        },
    )
    membership.refresh_from_db()
    assert membership.time_zone == "America/Sao_Paulo"
    row = ExposureDay.objects.get(rater=membership)
    assert (row.day, row.seconds) == (today_in("America/Sao_Paulo"), 15)


def test_content_warnings_are_part_of_the_protocol_and_change_its_fingerprint(study):
    before = study_protocol_fingerprint(study=study)
    assert "content_warning" not in b"".join(study_protocol_chunks(study=study)).decode()
    StratumSetting.objects.create(study=study, stratum="policy", content_warning="Self-harm.")
    with_stratum = study_protocol_fingerprint(study=study)
    assert with_stratum != before
    case = study.test_cases.order_by("position").first()
    type(case).objects.filter(pk=case.pk).update(content_warning="Graphic violence.")
    assert study_protocol_fingerprint(study=study) not in (before, with_stratum)
    document = json.loads(b"".join(study_protocol_chunks(study=study)))
    assert document["content_warnings"] == [{"stratum": "policy", "content_warning": "Self-harm."}]
    warned = [c for c in document["test_cases"] if "content_warning" in c]
    assert [(c["id"], c["content_warning"]) for c in warned] == [
        (case.case_id, "Graphic violence.")
    ]

"""Rater welfare: the settings' service and page, the pay check on a worked example, the
set-up checklist's pay item and the overview's warning."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment
from annotation.pay_equivalent import hourly_per_case, percentile
from annotation.selectors.pay import pay_check
from studies.errors import StudySetupError
from studies.models import Membership, StratumSetting, Study, StudyEvent, WelfareSettings
from studies.selectors import study_setup_checklist
from studies.services.membership import membership_add
from studies.services.welfare import welfare_settings_update

from ..factories import PASSWORD, UserFactory, make_study

PAID = {
    "pay_basis": "case",
    "pay_amount": "2.00",
    "pay_currency": "eur",
    "minimum_hourly": "12",
    "recruitment": "Contract raters via a vendor.",
    "retention_days": "180",
}


def welfare_events(study, kind=StudyEvent.Kind.WELFARE_SETTINGS_CHANGED):
    return list(study.events.filter(kind=kind).order_by("pk"))


# --- the arithmetic -------------------------------------------------------------------


def test_percentiles_interpolate_between_ranks():
    assert percentile([900, 300, 600], 0.5) == 600
    assert percentile([300, 400, 600, 800, 900], 0.9) == pytest.approx(860)
    assert percentile([400, 800], 0.5) == 600
    assert percentile([1200], 0.9) == 1200
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_hourly_equivalent_of_pay_per_case():
    # 2.00 per case at 10 minutes a case: 12.00 an hour; at 860 s: 8.3720... -> 8.37.
    assert hourly_per_case(Decimal("2.00"), 600) == Decimal("12.00")
    assert hourly_per_case(Decimal("2.00"), 860) == Decimal("8.37")
    assert hourly_per_case(Decimal("2.00"), 0) is None


# --- the service ----------------------------------------------------------------------


@pytest.mark.django_db
def test_settings_saved_with_the_change_recorded():
    study = make_study(status=Study.Status.DRAFT)
    welfare_settings_update(
        study=study,
        actor=study.lead,
        values={**PAID, "daily_minutes": "120"},
        strata=[{"stratum": "policy", "content_warning": "Some prompts discuss violence."}],
    )
    saved = WelfareSettings.objects.get(study=study)
    assert (saved.pay_basis, saved.pay_amount, saved.pay_currency) == ("case", Decimal("2"), "EUR")
    assert (saved.minimum_hourly, saved.daily_minutes, saved.retention_days) == (
        Decimal("12"),
        120,
        180,
    )
    [event] = welfare_events(study)
    assert event.actor == study.lead
    assert event.detail["fields"]["pay_amount"] == {"from": None, "to": "2.00"}
    assert event.detail["fields"]["pay_currency"] == {"from": "", "to": "EUR"}
    assert event.detail["fields"]["daily_minutes"] == {"from": None, "to": 120}
    [warnings] = welfare_events(study, StudyEvent.Kind.CONTENT_WARNINGS_SET)
    assert warnings.detail["strata"] == {
        "policy": {"from": "", "to": "Some prompts discuss violence."}
    }
    assert StratumSetting.objects.get(study=study, stratum="policy").content_warning == (
        "Some prompts discuss violence."
    )
    # The same values again change nothing and record nothing.
    welfare_settings_update(study=study, actor=study.lead, values={**PAID, "daily_minutes": 120})
    assert len(welfare_events(study)) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "values, problem",
    [
        ({"pay_currency": "EURO"}, "currency: give the three-letter ISO 4217 code"),
        ({"pay_currency": "€"}, "currency: give the three-letter ISO 4217 code"),
        ({"pay_amount": "-1"}, "pay amount: give an amount from 0"),
        ({"pay_amount": "100001"}, "pay amount: give an amount from 0"),
        ({"pay_amount": "2.005"}, "pay amount: give an amount from 0"),
        ({"pay_amount": "NaN"}, "pay amount: give an amount from 0"),
        ({"minimum_hourly": "1e9"}, "minimum hourly equivalent: give an amount"),
        ({"daily_minutes": "0"}, "daily limit (minutes): give a whole number 1-1440"),
        ({"daily_minutes": "1441"}, "daily limit (minutes): give a whole number 1-1440"),
        ({"daily_minutes": "1.5"}, "daily limit (minutes): give a whole number 1-1440"),
        ({"daily_minutes": "--30"}, "daily limit (minutes): give a whole number 1-1440"),
        ({"retention_days": "3²"}, "retention (days): give a whole number 0-3650"),
        ({"retention_days": "3651"}, "retention (days): give a whole number 0-3650"),
        ({"profile_min_cell": "1"}, "smallest profile count reported: give a whole number"),
        ({"profile_min_cell": ""}, "smallest profile count reported: give a whole number"),
        ({"recruitment": "x" * 2001}, "recruitment: keep it under 2,000 characters"),
        ({"recruitment": "bad\x00text"}, "recruitment: the text contains"),
        ({"pay_basis": "weekly"}, "pay basis: choose one of"),
        ({"bonus": "1"}, "bonus: not a welfare setting"),
        ({"pay_currency": ""}, "currency: give the currency of the pay"),
        ({"pay_amount": ""}, "pay amount: give the amount paid"),
    ],
)
def test_bad_values_change_nothing(values, problem):
    study = make_study(status=Study.Status.DRAFT)
    with pytest.raises(StudySetupError) as refused:
        # Every other value is valid: one bad value refuses the whole request.
        welfare_settings_update(
            study=study,
            actor=study.lead,
            values={**PAID, "daily_minutes": "90", **values},
            strata=[{"stratum": "policy", "content_warning": "Violence.", "daily_minutes": 30}],
        )
    assert "nothing was saved" in str(refused.value)
    assert any(p.startswith(problem) for p in refused.value.problems), refused.value.problems
    assert not WelfareSettings.objects.filter(study=study).exists()
    assert not StratumSetting.objects.filter(study=study).exists()
    assert not study.events.filter(
        kind__in=[StudyEvent.Kind.WELFARE_SETTINGS_CHANGED, StudyEvent.Kind.CONTENT_WARNINGS_SET]
    ).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "strata, problem",
    [
        ([{"stratum": "harm", "content_warning": "x"}], "the study has no stratum 'harm'"),
        ([{"stratum": "policy"}, {"stratum": "policy"}], "'policy' is given twice"),
        ([{"stratum": "policy", "daily_minutes": 0}], "daily limit of 'policy'"),
        ([{"stratum": "policy", "colour": "red"}], "unknown field 'colour'"),
        (["policy"], "give stratum, content_warning, daily_minutes"),
        ([{"stratum": str(n)} for n in range(5)], "give at most one row for each"),
    ],
)
def test_bad_strata_change_nothing(strata, problem):
    study = make_study(status=Study.Status.DRAFT)
    with pytest.raises(StudySetupError) as refused:
        welfare_settings_update(study=study, actor=study.lead, values=PAID, strata=strata)
    assert any(problem in p for p in refused.value.problems), refused.value.problems
    assert not WelfareSettings.objects.filter(study=study).exists()
    assert not StratumSetting.objects.exists()


@pytest.mark.django_db
def test_limits_and_warnings_freeze_when_the_study_opens_but_pay_does_not():
    study = make_study(status=Study.Status.DRAFT)
    welfare_settings_update(
        study=study,
        actor=study.lead,
        values={**PAID, "daily_minutes": 120},
        strata=[{"stratum": "policy", "content_warning": "Violence.", "daily_minutes": 30}],
    )
    study.status = Study.Status.OPEN
    study.save(update_fields=["status"])
    for values, strata in [
        ({"daily_minutes": 240}, None),
        ({}, [{"stratum": "policy", "content_warning": "Other text.", "daily_minutes": 30}]),
        ({}, [{"stratum": "policy", "content_warning": "Violence.", "daily_minutes": 60}]),
        ({"pay_amount": "3"}, [{"stratum": "operations", "content_warning": "New."}]),
    ]:
        with pytest.raises(StudySetupError, match="frozen protocol"):
            welfare_settings_update(study=study, actor=study.lead, values=values, strata=strata)
    saved = WelfareSettings.objects.get(study=study)
    assert (saved.daily_minutes, saved.pay_amount) == (120, Decimal("2.00"))
    # Unchanged limits and warnings sent again are not a change.
    welfare_settings_update(
        study=study,
        actor=study.lead,
        values={"pay_amount": "2.50", "daily_minutes": 120, "recruitment": "By invitation."},
        strata=[{"stratum": "policy", "content_warning": "Violence.", "daily_minutes": 30}],
    )
    saved.refresh_from_db()
    assert (saved.pay_amount, saved.recruitment) == (Decimal("2.50"), "By invitation.")
    last = welfare_events(study)[-1]
    assert last.detail["fields"] == {
        "pay_amount": {"from": "2.00", "to": "2.50"},
        "recruitment": {"from": "Contract raters via a vendor.", "to": "By invitation."},
    }


@pytest.mark.django_db
def test_unpaid_clears_the_amount():
    study = make_study(status=Study.Status.DRAFT)
    welfare_settings_update(study=study, actor=None, values=PAID)
    welfare_settings_update(study=study, actor=None, values={"pay_basis": "unpaid"})
    saved = WelfareSettings.objects.get(study=study)
    assert (saved.pay_basis, saved.pay_amount) == ("unpaid", None)


# --- the pay check: a worked example ------------------------------------------------------


def submitted(assignment, *, seconds, at, source=Assignment.Source.SCREEN):
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.Status.SUBMITTED, active_seconds=seconds, submitted_at=at, source=source
    )


@pytest.fixture
def timed_study(db):
    """Pilot times 300, 600, 900 s (policy) and 400, 800 s (operations); one main-study
    time, 1200 s; two submitted cases without a measured time; pay 2.00 EUR per case."""
    raters = [UserFactory(), UserFactory()]
    study = make_study(cases=6, raters=raters, status=Study.Status.DRAFT)
    welfare_settings_update(study=study, actor=None, values=PAID)
    opened = timezone.now() - timedelta(days=1)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN, opened_at=opened)
    study.refresh_from_db()
    pilot, main = opened - timedelta(days=2), opened + timedelta(hours=1)
    first, second = (
        list(m.assignments.select_related("test_case").order_by("test_case__case_id"))
        for m in study.memberships.filter(role=Membership.Role.RATER).order_by("pk")
    )
    policy = [a for a in first + second if a.test_case.stratum == "policy"]
    operations = [a for a in first + second if a.test_case.stratum == "operations"]
    for assignment, seconds in zip(policy, (300, 600, 900), strict=False):
        submitted(assignment, seconds=seconds, at=pilot)
    for assignment, seconds in zip(operations, (400, 800), strict=False):
        submitted(assignment, seconds=seconds, at=pilot)
    submitted(policy[3], seconds=1200, at=main)
    submitted(policy[4], seconds=0, at=main)
    submitted(operations[2], seconds=500, at=main, source=Assignment.Source.WORKSHEET)
    return study


def test_pay_check_on_a_worked_example(timed_study):
    check = pay_check(study=timed_study)
    rows = {(r.phase, r.stratum): r for r in check.rows}
    assert set(rows) == {
        ("pilot", None),
        ("pilot", "operations"),
        ("pilot", "policy"),
        ("main", None),
    }
    expected = {
        # phase, stratum: n, median s, 90th percentile s, hourly at each
        ("pilot", None): (5, 600, 860, "12.00", "8.37"),
        ("pilot", "policy"): (3, 600, 840, "12.00", "8.57"),
        ("pilot", "operations"): (2, 600, 760, "12.00", "9.47"),
        ("main", None): (1, 1200, 1200, "6.00", "6.00"),
    }
    for key, (n, median, p90, at_median, at_p90) in expected.items():
        row = rows[key]
        assert (row.n, row.median_seconds, row.p90_seconds) == (n, median, pytest.approx(p90))
        assert (row.hourly_at_median, row.hourly_at_p90) == (Decimal(at_median), Decimal(at_p90))
    assert check.untimed == 2
    # 12.00 at the median meets the minimum of 12; the 90th percentile does not.
    pilot = rows[("pilot", None)]
    assert not pilot.below_at_median and pilot.below_at_p90
    assert rows[("main", None)].below_at_median
    [first, *_] = check.warnings("pilot")
    assert first == (
        "Pilot times give an hourly equivalent of 8.37 EUR at the 90th percentile, below the "
        "minimum of 12.00 EUR."
    )
    assert check.warnings("main") == [
        "Main study times give an hourly equivalent of 6.00 EUR at the median, below the "
        "minimum of 12.00 EUR."
    ]


def test_pay_per_hour_is_its_own_equivalent(timed_study):
    welfare_settings_update(
        study=timed_study, actor=None, values={"pay_basis": "hour", "pay_amount": "15"}
    )
    check = pay_check(study=timed_study)
    assert {r.hourly_at_median for r in check.rows} == {Decimal("15.00")}
    assert check.warnings("pilot") == [] and check.warnings("main") == []


def checklist_item(study):
    return next(i for i in study_setup_checklist(study=study).items if i.title == "Rater pay")


@pytest.mark.django_db
def test_checklist_warns_before_opening_when_pilot_times_fall_short(timed_study):
    Study.objects.filter(pk=timed_study.pk).update(status=Study.Status.PILOT)
    timed_study.refresh_from_db()
    item = checklist_item(timed_study)
    # Pay is recorded (done), and what its pilot times show is a warning on the item.
    assert item.done and item.optional
    assert "8.37 EUR at the 90th percentile, below the minimum of 12.00 EUR" in item.warning
    welfare_settings_update(study=timed_study, actor=None, values={"pay_amount": "3.00"})
    item = checklist_item(timed_study)
    assert item.done and "hourly equivalent 18.00 EUR at the median" in item.detail
    assert not item.warning


@pytest.mark.django_db
def test_checklist_asks_for_pay_and_a_pilot():
    study = make_study(status=Study.Status.DRAFT)
    assert checklist_item(study).detail == "Pay is not recorded yet."
    welfare_settings_update(study=study, actor=None, values=PAID)
    item = checklist_item(study)
    # Recorded pay is never "Missing"; the pilot is still to check it.
    assert item.done and "Run the pilot" in item.detail
    welfare_settings_update(study=study, actor=None, values={"pay_basis": "unpaid"})
    assert checklist_item(study).done


# --- the pages ------------------------------------------------------------------------


def signed_in(client, user):
    client.login(username=user.username, password=PASSWORD)
    return client


@pytest.mark.django_db
def test_overview_warns_once_main_times_fall_short(client, timed_study):
    page = signed_in(client, timed_study.lead).get(
        reverse("annotation:overview", args=[timed_study.slug])
    )
    assert page.status_code == 200
    assert "Main study times give an hourly equivalent of 6.00 EUR" in page.content.decode()


@pytest.mark.django_db
def test_welfare_page_shows_the_pay_check(client, timed_study):
    page = signed_in(client, timed_study.lead).get(
        reverse("annotation:welfare", args=[timed_study.slug])
    )
    text = page.content.decode()
    assert page.status_code == 200
    assert 'id="pay-check-table"' in text and "8.37 EUR" in text and "6.00 EUR" in text
    assert "Main study times give an hourly equivalent of 6.00 EUR at the median" in text
    # Open: the exposure fields are read-only.
    assert 'id="welfare-frozen"' in text


@pytest.mark.django_db
def test_welfare_page_saves_and_refuses(client):
    study = make_study(status=Study.Status.DRAFT)
    coordinator = UserFactory()
    membership_add(study=study, user=coordinator, role=Membership.Role.COORDINATOR)
    url = reverse("annotation:welfare", args=[study.slug])
    client = signed_in(client, coordinator)
    rows = client.get(url).context["strata"]
    policy = [r["stratum"] for r in rows].index("policy")
    form = {**PAID, "daily_minutes": "120", "profile_min_cell": "5"}
    form[f"warning-{policy}"] = "Some prompts discuss violence."
    form[f"minutes-{policy}"] = "30"
    bad = client.post(url, {**form, "pay_currency": "EURO", "minimum_hourly": "-3"})
    assert bad.status_code == 400
    assert "currency: give the three-letter ISO 4217 code" in bad.content.decode()
    assert 'value="EURO"' in bad.content.decode()  # what was sent, to correct
    assert not WelfareSettings.objects.filter(study=study).exists()
    assert client.post(url, form).status_code == 302
    saved = WelfareSettings.objects.get(study=study)
    assert (saved.daily_minutes, saved.pay_currency) == (120, "EUR")
    setting = StratumSetting.objects.get(study=study, stratum="policy")
    assert (setting.content_warning, setting.daily_minutes) == (
        "Some prompts discuss violence.",
        30,
    )
    assert welfare_events(study)[0].actor == coordinator


@pytest.mark.django_db
def test_welfare_page_is_for_the_study_coordinators(client):
    rater, outsider = UserFactory(), UserFactory()
    study = make_study(raters=[rater], status=Study.Status.DRAFT)
    url = reverse("annotation:welfare", args=[study.slug])
    assert signed_in(client, rater).get(url).status_code == 403
    assert signed_in(client, outsider).get(url).status_code == 404
    assert signed_in(client, outsider).post(url, PAID).status_code == 404
    assert not WelfareSettings.objects.exists()

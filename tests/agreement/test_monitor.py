"""Monitored collection of the primary question: chosen in the plan and frozen with the
protocol (its fingerprint), evaluated by the worker after each recompute under a version,
symmetric in the two systems before unblinding, and the lead's early stop."""

import json

import pytest

from agreement.analysis.roles import dimension_measure
from agreement.models import AnalysisPlan, PrimaryMonitor
from agreement.report.sections import study_report
from agreement.selectors.monitor import monitor_shown, monitor_win_losses
from agreement.services.monitor import (
    MonitoringError,
    monitor_evaluate,
    monitoring_set,
    study_stop_early,
)
from agreement.services.plan import AnalysisPlanError, primary_measure_set
from annotation.services import assignments_create_all, rating_submit
from annotation.services.participation import consent_record
from studies import services as study_services
from studies.models import BlindedLabel, Membership, Study, StudyEvent, Webhook, WebhookDelivery
from studies.selectors import study_protocol_fingerprint
from studies.services import membership_add, study_create, study_open
from studies.services.lifecycle import study_close
from studies.services.unblinding import study_unblind

from ..factories import UserFactory, make_cases

SYSTEMS = ("baseline", "improved")
PREFERENCE = dimension_measure("preference")


@pytest.fixture(autouse=True)
def _few_resamples(settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 20


def monitored_study(*, cases: int = 24, monitoring: bool = True, slug: str = "mon") -> Study:
    lead = UserFactory(username=f"{slug}-lead")
    study = study_create(slug=slug, name="Monitored", lead=lead, rubric_preset="pairwise")
    study_services.test_cases_add(
        study=study, systems=list(SYSTEMS), cases=make_cases(cases, SYSTEMS)
    )
    for n in range(2):  # the plan's default minimum of valid ratings per item
        user = UserFactory(username=f"{slug}-rater-{n}")
        membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=membership)
        consent_record(rater=membership, agreed=True, prior_knowledge=False)
    primary_measure_set(study=study, actor=lead, measure=PREFERENCE)
    if monitoring:
        monitoring_set(
            study=study, actor=lead, enabled=True, alpha="0.05", expected_effect="0.08",
            margin="0.05",
        )  # fmt: skip
    return study_open(study=study, actor=lead, acknowledge_warnings=True)


def rate(study: Study, *, winner: str | None, count: int | None = None, start: int = 0) -> None:
    """Both raters prefer ``winner`` (None: a tie) on ``count`` cases from ``start``."""
    chosen = []
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        assignments = membership.assignments.select_related("test_case")
        chosen += list(assignments.order_by("test_case__position"))[
            start : None if count is None else start + count
        ]
    for assignment in chosen:
        if winner is None:
            choice = 0
        else:
            a_system = (
                BlindedLabel.objects.filter(test_case=assignment.test_case, label="A")
                .values_list("response__system__name", flat=True)
                .get()
            )
            key_choice = -2 if a_system == winner else 2
            choice = -key_choice if assignment.flipped else key_choice
        rating_submit(
            assignment=assignment,
            payload={"case": {"preference": {"choice": choice}}, "confidence": "high"},
            any_version=True,
        )


def monitor_of(study: Study) -> PrimaryMonitor:
    return PrimaryMonitor.objects.get(study=study)


@pytest.mark.django_db(transaction=True)
def test_the_worker_decides_after_enough_one_sided_comparisons_and_shows_no_direction():
    study = monitored_study()
    rate(study, winner="improved", count=5)
    shown = monitor_shown(study=study)
    assert shown["state"] == "not_decided" and shown["n"] == 5 and shown["current"]
    for hidden in ("statistic", "low", "high", "wins", "losses", "rate", "interval"):
        assert hidden not in shown
    rate(study, winner="improved", start=5, count=15)
    shown = monitor_shown(study=study)
    assert shown["state"] == "decided" and shown["n"] == 20 and shown["may_stop"]
    text = json.dumps(shown)
    assert "improved" not in text and "baseline" not in text
    # The report's monitor section before unblinding is the same symmetric state.
    assert study_report(study=study)["monitor"] == shown


@pytest.mark.django_db(transaction=True)
def test_a_webhook_hears_each_change_of_state_and_nothing_directional():
    study = monitored_study(slug="mon-hook")
    Webhook.objects.create(
        study=study, url="https://example.org/hook", events=["monitor.changed"], secret="whsec"
    )
    rate(study, winner="improved", count=20)
    bodies = [
        payload["data"]
        for payload in WebhookDelivery.objects.order_by("pk").values_list("payload", flat=True)
    ]
    # The state was "not yet decided" since the study opened (before the webhook): one
    # delivery, when it decided at the 19th comparison, not one per recompute.
    assert bodies == [{"state": "decided", "n": 19}]


@pytest.mark.django_db(transaction=True)
def test_the_state_is_the_same_whichever_system_is_preferred():
    states = []
    for slug, winner in (("mon-a", "improved"), ("mon-b", "baseline")):
        study = monitored_study(slug=slug)
        rate(study, winner=winner, count=20)
        rate(study, winner=None, start=20, count=3)
        states.append({k: v for k, v in monitor_shown(study=study).items() if k != "evaluated_at"})
        assert monitor_of(study).n == 20
    assert states[0] == states[1]
    assert states[0]["state"] == "decided"


@pytest.mark.django_db(transaction=True)
def test_the_worker_counts_the_comparisons_as_the_report_does():
    """One rule: the monitor's keyed count, before unblinding, is the report's win rate's
    after it (wins, losses; ties left out), on mixed verdicts."""
    study = monitored_study(slug="mon-count")
    rate(study, winner="improved", count=8)
    rate(study, winner="baseline", start=8, count=5)
    rate(study, winner=None, start=13, count=3)
    blinded = monitor_win_losses(study=Study.objects.get(pk=study.pk))
    assert monitor_of(study).n == sum(blinded) == 13
    study = study_unblind(study=study_close(study=study, actor=study.lead), actor=study.lead)
    pair = study_report(study=study)["comparison"]["preferences"][0]["pairs"][0]
    assert (pair["first"], pair["second"]) == SYSTEMS
    assert (pair["items"]["wins"], pair["items"]["losses"], pair["items"]["ties"]) == (8, 5, 3)
    assert blinded == (8, 5) == monitor_win_losses(study=study)


@pytest.mark.django_db(transaction=True)
def test_a_stale_run_never_overwrites_a_fresher_state():
    study = monitored_study()
    rate(study, winner="improved", count=20)
    fresh = monitor_of(study)
    assert fresh.state == "decided"
    assert not monitor_evaluate(study=study, version=fresh.version - 1)
    assert not monitor_evaluate(study=study, version=fresh.version)
    assert monitor_of(study).version == fresh.version
    assert monitor_evaluate(study=study, version=fresh.version + 1)


@pytest.mark.django_db(transaction=True)
def test_the_lead_stops_collection_once_decided_and_the_report_says_so():
    study = monitored_study()
    rate(study, winner="improved", count=5)
    with pytest.raises(MonitoringError, match="has not decided"):
        study_stop_early(study=study, actor=study.lead)
    assert Study.objects.get(pk=study.pk).is_open
    rate(study, winner="improved", start=5, count=15)
    study = study_stop_early(study=study, actor=study.lead)
    assert study.is_closed
    event = study.events.filter(kind=StudyEvent.Kind.CLOSED).get()
    recorded = event.detail["stopped_early"]
    assert recorded["state"] == "decided" and recorded["n"] == 20
    assert recorded["statistic"] >= recorded["threshold"] == pytest.approx(20.0)
    shown = monitor_shown(study=study)
    assert shown["stopped_early"]["n"] == 20 and "statistic" not in shown["stopped_early"]
    study = study_unblind(study=study, actor=study.lead)
    report = study_report(study=study)["monitor"]
    assert report["stopped_early"]["statistic"] == pytest.approx(recorded["statistic"])
    primary = report["primary"]
    assert (primary["wins"], primary["losses"]) == (20, 0)
    assert primary["low"] > 0.5 and primary["high"] == 1.0
    assert report["valid"] == "anytime"
    # The fixed-sample interval is shown beside it, and is narrower (and not valid here).
    assert report["fixed"]["low"] > primary["low"]


@pytest.mark.django_db
def test_monitoring_is_frozen_with_the_protocol_and_in_its_fingerprint():
    plain = monitored_study(slug="plain", monitoring=False)
    monitored = monitored_study(slug="watched")
    with pytest.raises(MonitoringError, match="frozen"):
        monitoring_set(
            study=monitored, actor=monitored.lead, enabled=False, alpha="0.05",
            expected_effect="0.08", margin="0.05",
        )  # fmt: skip
    with pytest.raises(AnalysisPlanError, match="frozen"):
        primary_measure_set(study=monitored, actor=monitored.lead, measure="")
    # A study without monitoring keeps the document it had before monitoring existed.
    from studies.selectors import study_protocol_chunks

    plain_document = json.loads(b"".join(study_protocol_chunks(study=plain)))
    watched_document = json.loads(b"".join(study_protocol_chunks(study=monitored)))
    assert "monitoring" not in plain_document
    assert watched_document["monitoring"] == {
        "method": watched_document["monitoring"]["method"],
        "primary_measure": PREFERENCE,
        "alpha": "0.050",
        "expected_effect": "0.080",
        "margin": "0.050",
        "mixing": "19.031250",
    }
    assert study_protocol_fingerprint(study=monitored) == monitored.protocol_fingerprint
    assert study_protocol_fingerprint(study=plain) == plain.protocol_fingerprint
    # The fingerprint holds the monitor: a change in the database would show.
    AnalysisPlan.objects.filter(study=monitored).update(monitoring_margin="0.100")
    assert study_protocol_fingerprint(study=monitored) != monitored.protocol_fingerprint


@pytest.mark.django_db
@pytest.mark.parametrize(
    "options, message",
    [
        ({"alpha": "0.5"}, "alpha"),
        ({"alpha": "abc"}, "alpha"),
        ({"alpha": "nan"}, "alpha"),
        ({"expected_effect": "0.6"}, "expected effect"),
        ({"margin": "0\x00.1"}, "margin"),
        ({"margin": "-1"}, "margin"),
    ],
)
def test_bad_settings_are_refused_and_change_nothing(options, message):
    lead = UserFactory(username="bad-lead")
    study = study_create(slug="bad", name="Bad", lead=lead, rubric_preset="pairwise")
    primary_measure_set(study=study, actor=lead, measure=PREFERENCE)
    values = {"alpha": "0.05", "expected_effect": "0.08", "margin": "0.05", **options}
    with pytest.raises(MonitoringError, match=message):
        monitoring_set(study=study, actor=lead, enabled=True, **values)
    assert not AnalysisPlan.objects.filter(study=study, monitoring=True).exists()


@pytest.mark.django_db
def test_monitoring_needs_a_win_rate_as_the_primary_question():
    lead = UserFactory(username="wr-lead")
    study = study_create(slug="wr", name="Wr", lead=lead, rubric_preset="pairwise")
    values = {"alpha": "0.05", "expected_effect": "0.08", "margin": "0.05"}
    with pytest.raises(MonitoringError, match="win rate"):
        monitoring_set(study=study, actor=lead, enabled=True, **values)
    primary_measure_set(study=study, actor=lead, measure=PREFERENCE)
    monitoring_set(study=study, actor=lead, enabled=True, **values)
    with pytest.raises(AnalysisPlanError, match="win rate"):
        primary_measure_set(study=study, actor=lead, measure="")

"""The study report: nothing about systems before unblinding; the estimates, checklist and
bundle after it; coordinators only."""

import hashlib
import io
import json
import zipfile
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agreement.models import AnalysisPlan, StudyAgreement
from studies.models import Study
from studies.selectors import study_protocol_fingerprint
from tests.payloads import (
    SYSTEMS,
    close_and_unblind,
    coordinator_of,
    study_with_systems,
    submit_all,
)

from ..factories import UserFactory


@pytest.fixture
def rated_study(db, settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    study = study_with_systems(cases=6, consented=True)
    submit_all(study)
    return study


@pytest.mark.django_db(transaction=True)
def test_the_report_before_unblinding_names_no_system_and_shows_no_estimate(client, rated_study):
    client.force_login(rated_study.lead)
    page = client.get(reverse("agreement:report", args=[rated_study.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    assert all(system not in html for system in SYSTEMS)
    assert 'id="report-blinded"' in html
    assert "Estimates are computed after unblinding" in html
    assert "withheld until unblinding" in html  # the blinding seed
    bundle = client.get(reverse("agreement:report_bundle", args=[rated_study.slug]))
    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))) as archive:
        names = archive.namelist()
        assert not any(name.endswith(("-key.csv", "-protocol.json")) for name in names)
        for name in names:
            text = archive.read(name).decode("utf-8", errors="replace")
            assert all(system not in text for system in SYSTEMS), name


@pytest.mark.django_db(transaction=True)
def test_after_unblinding_the_report_has_the_estimates_and_the_bundle_every_number(
    client, rated_study
):
    close_and_unblind(rated_study)
    client.force_login(rated_study.lead)
    html = client.get(reverse("agreement:report", args=[rated_study.slug])).content.decode()
    assert all(system in html for system in SYSTEMS)
    # No primary question named: none uncorrected, the report says so.
    assert "<strong>Primary:" not in html and "Holm-adjusted p" in html
    assert "No primary question was named in the analysis plan" in html
    assert "every question above is corrected with Holm" in html
    assert html.count("<svg") >= 4
    assert 'data-checklist="estimates" data-done="yes"' in html
    # The histogram of paired differences names the two systems once they are known.
    caption = html[html.index('id="differences-caption"') :].split("</figcaption>")[0]
    first, second = sorted(SYSTEMS)
    assert f"the total of {second} minus the total of {first}" in caption
    bundle = client.get(reverse("agreement:report_bundle", args=[rated_study.slug]))
    assert bundle["Content-Type"] == "application/zip"
    assert bundle["Content-Disposition"] == f'attachment; filename="{rated_study.slug}-report.zip"'
    assert bundle.streaming and bundle["Cache-Control"] == "no-store"

    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))) as archive:
        names = set(archive.namelist())
        slug = rated_study.slug
        assert {"report.html", "results.json", "configuration.json", "README.txt"} <= names
        assert {f"{slug}-long.csv", f"{slug}-data-dictionary.md", f"{slug}-key.csv"} <= names
        protocol = archive.read(f"{slug}-protocol.json")
        results = json.loads(archive.read("results.json"))
        configuration = json.loads(archive.read("configuration.json"))
    assert results["comparison"]["systems"] == sorted(SYSTEMS)
    assert configuration["blinding"]["seed"] == rated_study.blinding_seed
    assert configuration["protocol"] == f"{rated_study.slug}-protocol.json"
    fingerprint = study_protocol_fingerprint(study=rated_study)
    assert hashlib.sha256(protocol).hexdigest() == fingerprint
    assert [item["key"] for item in results["checklist"]][:2] == ["systems", "sampling"]


@pytest.mark.django_db
def test_only_the_studys_coordinators_reach_the_report(client):
    study = study_with_systems(cases=2)
    rater = study.memberships.filter(role="rater").first().user
    for url in (reverse("agreement:report", args=[study.slug]),
                reverse("agreement:report_bundle", args=[study.slug])):  # fmt: skip
        client.force_login(UserFactory())
        assert client.get(url).status_code == 404
        client.force_login(rater)
        assert client.get(url).status_code == 403
        client.force_login(coordinator_of(study))
        assert client.get(url).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_the_coordinator_names_the_primary_question_before_unblinding(client, rated_study):
    from agreement.services.plan import primary_measure_choices

    study = rated_study
    client.force_login(study.lead)
    report_url = reverse("agreement:report", args=[study.slug])
    choose_url = reverse("agreement:primary_measure", args=[study.slug])
    choices = dict(primary_measure_choices(study=study))
    assert "total" in choices and "dimension:depth" in choices
    page = client.get(report_url).content.decode()
    assert 'name="measure"' in page and "None named: every question corrected" in page

    # A measure the study does not have: refused, nothing stored.
    response = client.post(choose_url, {"measure": "no-such-dimension"}, follow=True)
    assert "Choose one of the measures listed" in response.content.decode()
    assert not AnalysisPlan.objects.filter(study=study).exclude(primary_measure="").exists()

    client.post(choose_url, {"measure": "dimension:depth"})
    assert "primary-missing" not in client.get(report_url).content.decode()
    assert AnalysisPlan.objects.get(study=study).primary_measure == "dimension:depth"
    event = study.events.filter(reason__startswith="Primary question").get()
    assert "Depth" in event.reason

    close_and_unblind(study)
    html = client.get(report_url).content.decode()
    questions = StudyAgreement.objects.get(study=study).result["comparison"]["questions"]
    assert questions[0]["measure"] == "dimension:depth" and questions[0]["primary"]
    assert "<strong>Primary:</strong> Depth" in html
    day = study.events.get(reason__startswith="Primary question").created_at.date()
    assert f"named in the analysis plan on {day.isoformat()}, before the study opened" in html
    bundle = client.get(reverse("agreement:report_bundle", args=[study.slug]))
    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))) as archive:
        assert (
            json.loads(archive.read("configuration.json"))["primary_measure"] == "dimension:depth"
        )
    # Once the results are known, the primary question stays as it was.
    response = client.post(choose_url, {"measure": "total"}, follow=True)
    assert "can no longer change" in response.content.decode()
    assert AnalysisPlan.objects.get(study=study).primary_measure == "dimension:depth"


@pytest.mark.django_db
def test_a_named_primary_measure_gone_from_the_rubric_is_pointed_out(client):
    study = study_with_systems(cases=2)
    AnalysisPlan.objects.create(study=study, primary_measure="dimension:renamed-since")
    client.force_login(study.lead)
    page = client.get(reverse("agreement:report", args=[study.slug])).content.decode()
    assert 'id="primary-missing"' in page


@pytest.mark.django_db
def test_the_report_says_whether_the_primary_question_was_named_before_the_opening():
    from agreement.services.plan import primary_measure_named, primary_measure_set

    study = study_with_systems(cases=2)
    assert primary_measure_named(study=study) is None
    primary_measure_set(study=study, actor=study.lead, measure="total")
    for opened, before in ((1, True), (-1, False)):
        Study.objects.filter(pk=study.pk).update(opened_at=timezone.now() + timedelta(days=opened))
        study.refresh_from_db()
        named = primary_measure_named(study=study)
        assert named["measure"] == "total" and named["before_opening"] is before

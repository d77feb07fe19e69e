"""The demo's pairwise study loads with a judge whose calibration page has data."""

from types import SimpleNamespace

import pytest
from django.core.management import call_command

from agreement.models import Judge
from studies import blinding
from studies.models import Study

from .analysis_pages import computed_page


@pytest.mark.django_db
def test_judge_demo_loads_once_and_the_calibration_page_shows_it(client, monkeypatch):
    # The demo is a small sample: its kappa depends on which system each prompt shows first,
    # which the study's random blinding secret draws. A fixed secret makes it one sample.
    monkeypatch.setattr(blinding, "secrets", SimpleNamespace(token_hex=lambda n: "5eed" * 8))
    call_command("load_demo", stdout=None)
    call_command("load_judge_demo")
    call_command("load_judge_demo")  # idempotent
    study = Study.objects.get(slug="next-step-demo")
    judge = Judge.objects.get(study=study)
    assert judge.outputs.count() == 2 * study.test_cases.count()
    assert judge.outputs.filter(verdict="").exists()  # some outputs listed as unparseable
    client.force_login(study.lead)
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    report = page.context["report"]
    # The demo study is open: the judge on its own, and the raters only after unblinding.
    assert report["humans"] is None and report["position_consistency"] is not None
    assert report["unparseable"]
    Study.objects.filter(pk=study.pk).update(status=Study.Status.UNBLINDED)
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    humans = page.context["report"]["humans"]
    # A mostly right judge and mostly right raters agree: verdicts reach the key the right
    # way round (read the wrong way round, the kappa would be below zero).
    assert humans["majority"]["kappa"] > 0 and humans["n_raters"] == 2

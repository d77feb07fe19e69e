"""The report's defects of issue 26, each a test: a preference-only study shows no score
measure; the ranking page, the report and its bundle show one interval per system; with no
primary question named the set-up checklist asks for one; the k line comes from the
design; the key asked for before unblinding is refused for the blinding's sake."""

import io
import json
import zipfile

import pytest
from django.urls import reverse

from agreement.analysis.roles import TOTAL_MEASURE, dimension_measure
from agreement.models import StudyAgreement
from agreement.report.sections import study_report
from agreement.selectors import setup_checklist_analysis_plan
from agreement.services.plan import primary_measure_choices, primary_measure_set
from agreement.stats.ranking import RANKING_RESAMPLES
from annotation.services import rating_submit
from studies.models import Study

from ..payloads import close_and_unblind
from .analysis_pages import computed_page
from .test_arena import QUALITY
from .test_arena import arena as arena  # the fixture: four systems, six pairings, 3 raters


def _rate_with_upsets(study, raters) -> None:
    """The better system of each pairing wins all but its pairing's first comparison, so
    every system beats and loses to another: the Bradley-Terry fit exists."""
    upset = set()
    for user in raters:
        membership = study.memberships.get(user=user)
        for assignment in membership.assignments.select_related("test_case"):
            labels = {
                label.label: label.response.system.name
                for label in assignment.test_case.labels.select_related("response__system")
            }
            pairing = frozenset(labels.values())
            better, worse = sorted(pairing, key=QUALITY.get, reverse=True)
            winner = better if pairing in upset else worse
            upset.add(pairing)
            key_choice = -1 if labels["A"] == winner else 1
            rating_submit(
                assignment=assignment,
                payload={
                    "case": {
                        "preference": {"choice": -key_choice if assignment.flipped else key_choice}
                    },
                    "confidence": "high",
                },
                any_version=True,
            )


@pytest.fixture
def ranked(arena, settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    study, raters = arena
    _rate_with_upsets(study, raters)
    return close_and_unblind(study)


def _bundle(client, study) -> dict:
    response = client.get(reverse("agreement:report_bundle", args=[study.slug]))
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.django_db(transaction=True)
def test_a_preference_only_study_shows_no_score_measure(client, ranked):
    """Issue 26: an arena's report showed "Total score" with mean 0 for every system, paired
    rows with interval [0, 0] and Holm questions with p null."""
    study = ranked
    comparison = StudyAgreement.objects.get(study=study).result["comparison"]
    assert comparison["per_system"] == [] and comparison["paired"] == []
    assert comparison["cases_plot"] == [] and comparison["length"]["score"] is None
    assert len(comparison["preferences"][0]["pairs"]) == 6
    questions = comparison["questions"]
    assert {q["measure"] for q in questions} == {dimension_measure("preference")}
    assert all(q["p"] is not None for q in questions)
    assert [q["measure"] for q in comparison["aggregation"]["questions"]] == [
        dimension_measure("preference")
    ]
    assert TOTAL_MEASURE not in dict(primary_measure_choices(study=study))

    client.force_login(study.lead)
    html = client.get(reverse("agreement:report", args=[study.slug])).content.decode()
    assert "Total score" not in html and 'id="no-scores"' in html
    files = _bundle(client, study)
    assert b"Total score" not in files["results.json"] + files["report.html"]


@pytest.mark.django_db(transaction=True)
def test_the_ranking_page_the_report_and_the_bundle_show_one_interval(client, ranked):
    """Issue 26: the page used 1,000 resamples and the report 2,000, so one study showed two
    intervals per system. One count, and the same resampled cases: the same interval."""
    study = ranked
    client.force_login(study.lead)
    page = computed_page(client, "agreement:ranking", study.slug).context["arena"]
    assert page["ranking"] is not None, page["problem"]
    in_report = study_report(study=study)["comparison"]["preferences"][0]["ranking"]
    in_bundle = json.loads(_bundle(client, study)["results.json"])["comparison"]["preferences"]
    assert page["n_resamples"] == in_report["n_resamples"] == RANKING_RESAMPLES
    shown = {
        "page": {row["system"]: row for row in page["ranking"]},
        "report": {row["system"]: row for row in in_report["order"]},
        "bundle": {row["system"]: row for row in in_bundle[0]["ranking"]["order"]},
    }
    assert set(shown["page"]) == set(shown["report"]) == set(shown["bundle"]) == set(QUALITY)
    for system, row in shown["page"].items():
        for where in ("report", "bundle"):
            other = shown[where][system]
            for key in ("score", "low", "high"):
                assert other[key] == pytest.approx(row[key], rel=1e-9, abs=1e-12), (where, key)
            assert (other["rank_low"], other["rank_high"]) == (row["rank_low"], row["rank_high"])
    # The intervals are intervals: the resamples were drawn.
    assert any(row["low"] < row["score"] < row["high"] for row in shown["page"].values())


@pytest.mark.django_db
def test_the_set_up_checklist_asks_for_the_primary_question(arena):
    """No silent default: the checklist says what happens without one, and is done once the
    analysis plan names it."""
    study, _ = arena
    (item,) = setup_checklist_analysis_plan(study=study)
    assert not item.done and not item.optional
    assert "before the ratings come in" in item.detail and "Holm" in item.detail
    assert "default rule" not in item.detail
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    primary_measure_set(study=study, actor=study.lead, measure=dimension_measure("preference"))
    (item,) = setup_checklist_analysis_plan(study=study)
    assert item.done


@pytest.mark.django_db
def test_the_k_line_comes_from_the_design(client, arena):
    """Issue 26: "None rater per test case" when the design has no fixed k."""
    study, _ = arena
    client.force_login(study.lead)
    url = reverse("agreement:report", args=[study.slug])
    assert study.raters_per_item is None
    html = client.get(url).content.decode()
    assert "None rater" not in html
    line = html[html.index('id="design-k"') :].split("</p>")[0]
    assert "Every rater rates every test case (no fixed number of raters per case)" in line
    for k, text in ((2, "2 raters per test case"), (1, "1 rater per test case")):
        Study.objects.filter(pk=study.pk).update(raters_per_item=k)
        line = client.get(url).content.decode().split('id="design-k"')[1].split("</p>")[0]
        assert text in line and "None" not in line


@pytest.mark.django_db
def test_the_key_before_unblinding_is_refused_for_the_blinding(client, arena):
    """Issue 26: the lead was told "Your role in this study does not allow this". (The API's
    refusal: tests/api/test_results.py.)"""
    study, _ = arena
    client.force_login(study.lead)
    page = client.get(reverse("annotation:export", args=[study.slug, "key-csv"]))
    assert page.status_code == 403
    text = page.content.decode()
    assert "break the blinding" in text and "does not include this page" not in text


def test_every_ranking_the_app_computes_takes_the_one_resample_count():
    """Read from the code: each call of ``bradley_terry`` outside the statistics passes
    ``n_resamples=RANKING_RESAMPLES``, so a third place that ranks cannot drift either."""
    import ast
    from pathlib import Path

    calls = []
    for path in sorted(Path("agreement").rglob("*.py")):
        if path.parts[1] == "stats":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "bradley_terry":
                count = next((k.value for k in node.keywords if k.arg == "n_resamples"), None)
                calls.append((str(path), getattr(count, "id", ast.dump(count) if count else None)))
    assert len(calls) >= 2  # the ranking page's and the report's
    assert all(count == "RANKING_RESAMPLES" for _, count in calls), calls

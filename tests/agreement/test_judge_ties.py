"""Judges that may tie: the "[[C]]" verdict as a template option, read and counted as a
tie in the calibration (three categories, ties kept), checked against scikit-learn and
statsmodels as independent oracles."""

import csv
import io
import json
import re

import numpy as np
import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from agreement.judges import parse_verdict
from agreement.judges.measures import (
    first_position_rate,
    judge_case_preferences,
    kappa_with_interval,
    position_consistency,
    tie_rate,
)
from agreement.judges.verdicts import (
    REFERENCE_TEMPLATE,
    REFERENCE_TIE_TEMPLATE,
    key_preference,
    template_check,
)
from agreement.models import Judge
from agreement.services import judge_outputs_import
from studies.models import StudyEvent

from .analysis_pages import computed_page
from .test_judge_pages import HUMANS, swapped, unblind
from .test_judge_pages import study as study  # the shared fixture

NAN = np.nan
CATEGORIES = [-1.0, 0.0, 1.0]


# Reading a verdict ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Both are equally correct.\n[[C]]",
        "Neither is better.  [[C]] \n",
        "Equally good. Final verdict: [[tie]]",
        "Equally good.\n[[Tie]]",
    ],
)
def test_a_tie_is_read_where_the_template_allows_one(text):
    assert parse_verdict(text, allow_tie=True) == "tie"


def test_decisive_verdicts_read_the_same_with_ties_allowed():
    assert parse_verdict("A is right.\n[[A]]", allow_tie=True) == "A"
    assert parse_verdict("B is right. [[B]]", allow_tie=True) == "B"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Both are equally correct.\n[[C]]", "malformed verdict token '[[C]]' (only [[A]] or"),
        ("Equally good.\n[[tie]]", "malformed verdict token '[[tie]]'"),
        ("A is better. [[A]]", None),
    ],
)
def test_the_strict_template_stays_the_default_with_ties_malformed(text, reason):
    if reason is None:
        assert parse_verdict(text) == "A"
        return
    with pytest.raises(ValueError, match=re.escape(reason)):
        parse_verdict(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Close. [[A]] or maybe [[C]]", "more than one verdict (2 found)"),
        ("Close. [[C]] [[C]]", "more than one verdict"),
        ("[[C]] because they are the same", "before the explanation"),
        ("[[C]]", "no explanation before the verdict"),
        ("Equal. [[C]] Really.", "text after the verdict"),
        ("Neither. [[D]]", "malformed verdict token '[[D]]' (only [[A]], [[B]] or [[C]])"),
        ("Neither. [[c]]", "malformed verdict token '[[c]]'"),
        ("Neither is better.", "no verdict ([[A]], [[B]] or [[C]])"),
    ],
)
def test_with_ties_allowed_a_verdict_is_still_never_guessed(text, reason):
    with pytest.raises(ValueError, match=re.escape(reason)):
        parse_verdict(text, allow_tie=True)


def test_a_tie_is_no_preference_in_either_order():
    assert key_preference("tie", "AB") == 0
    assert key_preference("tie", "BA", swapped=True) == 0


def test_a_template_that_allows_a_tie_says_so():
    assert template_check(REFERENCE_TEMPLATE) == []
    assert template_check(REFERENCE_TIE_TEMPLATE, allow_tie=True) == []
    assert '"[[C]]" for a tie' in REFERENCE_TIE_TEMPLATE
    (problem,) = template_check(REFERENCE_TEMPLATE, allow_tie=True)
    assert "must tell the judge" in problem
    (problem,) = template_check(REFERENCE_TIE_TEMPLATE)
    assert "does not allow one" in problem


# The calibration's statistics with ties -----------------------------------------------------


def test_position_consistency_counts_a_tie_in_both_orders_as_consistent():
    # Key-order preferences per case in orders AB and BA.
    by_order = np.array([[0, 0], [-1, -1], [0, 1], [-1, 0], [1, 1], [0, NAN], [-1, 1]], dtype=float)
    # Both orders on 6 cases; consistent: the tie/tie, -1/-1 and +1/+1 ones.
    assert position_consistency(by_order) == (pytest.approx(3 / 6), 6)
    # A tie in one order and a preference in the other counts as a tie, like two opposite
    # preferences; a single order's tie stays a tie.
    assert judge_case_preferences(by_order).tolist() == [0, -1, 0, 0, 1, 0, 0]


def test_first_position_rate_is_over_decisive_verdicts_and_ties_have_their_own_rate():
    shown = ["A", "tie", "B", "A", "tie", "A"]
    assert first_position_rate(shown) == (0.75, 4)
    assert tie_rate(shown) == (pytest.approx(2 / 6), 6)
    assert np.isnan(first_position_rate(["tie"])[0])


def test_three_category_kappa_with_a_judge_that_ties_equals_two_oracles():
    rng = np.random.default_rng(26)
    humans = rng.choice(CATEGORIES, size=200, p=[0.4, 0.2, 0.4])
    # A judge that agrees most of the time and otherwise says "tie" more often than not.
    noise = rng.choice(CATEGORIES, size=200, p=[0.2, 0.6, 0.2])
    judge = np.where(rng.random(200) < 0.7, humans, noise)
    judge[:7] = NAN
    humans[7:10] = NAN
    assert (judge == 0).sum() > 30  # the judge does tie
    result = kappa_with_interval(judge, humans, n_resamples=300, seed=4)
    kept = ~np.isnan(judge) & ~np.isnan(humans)
    assert result.n_cases == kept.sum() == 190
    scikit = cohen_kappa_score(judge[kept], humans[kept], labels=CATEGORIES)
    table = np.array(
        [[np.sum((judge[kept] == a) & (humans[kept] == b)) for b in CATEGORIES] for a in CATEGORIES]
    )
    assert result.kappa == pytest.approx(scikit, abs=1e-12)
    assert result.kappa == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    assert result.low < result.kappa < result.high
    # Dropping the ties (what reading only decisive verdicts did) gives another answer.
    decisive = kept & (judge != 0)
    dropped = cohen_kappa_score(judge[decisive], humans[decisive], labels=CATEGORIES)
    assert dropped != pytest.approx(result.kappa, abs=1e-3)


def test_kappa_on_a_three_category_table_worked_by_hand():
    """Two judges of 100 items in three categories (the table below, rows the first):
    observed agreement p_o = (75 + 4 + 10) / 100 = 0.89; chance agreement from the
    margins (80, 10, 10) and (80, 5, 15): p_e = 0.8 * 0.8 + 0.1 * 0.05 + 0.1 * 0.15 = 0.66;
    kappa = (0.89 - 0.66) / (1 - 0.66) = 0.23 / 0.34."""
    table = np.array([[75, 1, 4], [5, 4, 1], [0, 0, 10]])
    first = np.repeat(np.repeat(CATEGORIES, 3), table.ravel())
    second = np.repeat(np.tile(CATEGORIES, 3), table.ravel())
    result = kappa_with_interval(first, second, n_resamples=0)
    assert result.kappa == pytest.approx(0.23 / 0.34, abs=1e-12)
    assert result.n_cases == 100


# End to end: import, calibration, export ------------------------------------------------------

# A judge that ties, per case (order AB, order BA), as its verdicts read when a case's
# prompts show its key label A first; "C" is a tie.
TYING_JUDGE = [("C", "C"), ("A", "B"), ("C", "B"), ("B", "A"), ("C", "C"), ("A", "C")]


def tying_outputs(study, verdicts=TYING_JUDGE, judge="tier"):
    lines = []
    for n, (first, second) in enumerate(verdicts, 1):
        swap = swapped(study, f"TC-{n:03d}")
        flip = {"A": "B", "B": "A", "C": "C"} if swap else {"A": "A", "B": "B", "C": "C"}
        for order, verdict in (("AB", flip[first]), ("BA", flip[second])):
            lines.append(
                {
                    "case_id": f"TC-{n:03d}",
                    "order": order,
                    "judge": judge,
                    "output": f"Weighing case {n}.\n[[{verdict}]]",
                }
            )
    return "\n".join(json.dumps(line) for line in lines).encode()


def _key_preference(verdict: str, order: str) -> int:
    """An order's verdict in key terms, for a case whose prompts show key label A first."""
    if verdict == "C":
        return 0
    return (-1 if verdict == "A" else 1) * (1 if order == "AB" else -1)


def _majority(column):
    """The report's rule, by hand: the side more raters chose (a tie chooses none), a tie
    when as many chose each side; None when nobody rated the case."""
    sides = [v for v in column if not np.isnan(v)]
    if not sides:
        return None
    first, second = sum(v < 0 for v in sides), sum(v > 0 for v in sides)
    return -1.0 if first > second else 1.0 if second > first else 0.0


def import_page(client, study, data, template):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.post(
        reverse("agreement:judges", args=[study.slug]),
        {"action": "import", "template": template, "file": SimpleUploadedFile("j.jsonl", data)},
    )


def test_a_judge_that_ties_is_calibrated_with_its_ties_kept(client, study):
    client.force_login(study.lead)
    response = import_page(client, study, tying_outputs(study), "reference-tie")
    assert response.status_code == 302
    judge = Judge.objects.get(study=study, name="tier")
    assert judge.allow_tie
    assert judge.outputs.filter(verdict="tie").count() == 6
    assert not judge.outputs.filter(verdict="").exists()
    event = study.events.get(kind=StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED)
    assert event.detail["ties"] == 6 and event.detail["allow_tie"] is True

    unblind(study)
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    report = page.context["report"]
    # Worked by hand from TYING_JUDGE: both orders agree (tie/tie twice, the swap undone on
    # cases 2 and 4) on cases 1, 2, 4, 5; case 3 and 6 are a tie against a preference.
    assert report["position_consistency"] == pytest.approx(4 / 6)
    assert report["n_ties"] == 6 and report["tie_rate"] == pytest.approx(6 / 12)
    assert report["n_decisive"] == 6 and report["allow_tie"] is True
    # The oracle: the judge's case preference in key terms, written out independently.
    judge_key = []
    for first, second in TYING_JUDGE:
        ab, ba = _key_preference(first, "AB"), _key_preference(second, "BA")
        judge_key.append(ab if ab == ba else 0)
    assert judge_key == [0, -1, 0, 1, 0, 0]
    majority = [_majority(column) for column in np.array(HUMANS, dtype=float).T]
    shared = [i for i, m in enumerate(majority) if m is not None]
    expected = cohen_kappa_score(
        [judge_key[i] for i in shared], [majority[i] for i in shared], labels=CATEGORIES
    )
    humans = report["humans"]
    assert humans["majority"]["kappa"] == pytest.approx(expected)
    assert humans["majority"]["n"] == len(shared)  # every case: the ties are kept
    for row, preferences in zip(humans["per_rater"], HUMANS, strict=True):
        assert row["kappa"] == pytest.approx(
            cohen_kappa_score(judge_key, preferences, labels=CATEGORIES)
        )
    html = page.content.decode()
    assert 'id="tie-rate"' in html and "a tie counts as a tie" in html


def test_the_same_outputs_under_the_strict_template_leave_the_ties_unparseable(client, study):
    client.force_login(study.lead)
    assert import_page(client, study, tying_outputs(study), "reference").status_code == 302
    judge = Judge.objects.get(study=study, name="tier")
    assert not judge.allow_tie
    assert judge.outputs.filter(verdict="").count() == 6
    assert "malformed verdict token '[[C]]'" in judge.outputs.filter(verdict="")[0].problem
    unblind(study)
    strict = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    assert len(strict.context["report"]["unparseable"]) == 6
    # Imported again as answers to the tie template: every output of the judge is read by
    # that rule, the earlier ones too, and the calibration is computed anew.
    other = tying_outputs(study, verdicts=TYING_JUDGE[:1])
    assert import_page(client, study, other, "reference-tie").status_code == 302
    judge.refresh_from_db()
    assert judge.allow_tie and not judge.outputs.filter(verdict="").exists()
    again = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    assert again.context["report"]["n_ties"] == 6
    assert again.context["report"]["unparseable"] == []


def test_the_import_reads_by_the_service_default_strictly(study):
    counts = judge_outputs_import(study=study, filename="j.jsonl", data=tying_outputs(study))
    assert counts["unparseable"] == 6 and counts["ties"] == 0
    counts = judge_outputs_import(
        study=study, filename="j.jsonl", data=tying_outputs(study), allow_tie=True
    )
    assert counts["unparseable"] == 0 and counts["ties"] == 6


def test_a_template_that_allows_ties_is_saved_from_the_page_and_exported(client, study):
    client.force_login(study.lead)
    url = reverse("agreement:judges", args=[study.slug])
    text = 'Q: {question}\n1) {step_a}\n2) {step_b}\nAnswer [[A]], [[B]] or "[[C]]" for a tie.'
    refused = client.post(url, {"action": "template", "name": "ties", "text": text})
    assert refused.status_code == 400 and "does not allow one" in refused.content.decode()
    saved = client.post(
        url, {"action": "template", "name": "ties", "text": text, "allow_tie": "on"}
    )
    assert saved.status_code == 302
    template = study.judge_templates.get()
    assert template.allow_tie
    page = client.get(url).content.decode()
    assert "ties (ties allowed)" in page and 'value="reference-tie"' in page
    prompts = client.get(
        reverse("agreement:judge_prompts", args=[study.slug]), {"template": "reference-tie"}
    )
    first = json.loads(b"".join(prompts.streaming_content).decode().splitlines()[0])
    assert '"[[C]]" for a tie' in first["prompt"]
    # Outputs to the study's own tie template are read with ties.
    response = import_page(client, study, tying_outputs(study), str(template.uuid))
    assert response.status_code == 302
    assert Judge.objects.get(name="tier").outputs.filter(verdict="tie").count() == 6


def test_the_outputs_export_gives_a_tie_as_a_tie_after_unblinding(client, study):
    client.force_login(study.lead)
    import_page(client, study, tying_outputs(study), "reference-tie")
    unblind(study)
    response = client.get(reverse("agreement:judge_export", args=[study.slug]))
    rows = list(
        csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")))
    )
    by_case = {(row["case_id"], row["order"]): row for row in rows}
    assert by_case["TC-001", "AB"]["verdict_as_shown"] == "tie"
    assert by_case["TC-001", "AB"]["preferred_key_label"] == "tie"
    assert by_case["TC-002", "AB"]["preferred_key_label"] == "A"

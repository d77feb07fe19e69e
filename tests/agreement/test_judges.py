"""The strict verdict parser, the prompt templates and the judge calibration statistics."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from agreement.judges.measures import (
    first_position_rate,
    judge_case_preferences,
    kappa_with_interval,
    longer_preferred_rate,
    position_consistency,
)
from agreement.judges.verdicts import (
    REFERENCE_TEMPLATE,
    key_preference,
    parse_verdict,
    template_check,
    template_fill,
)
from studies.rendering import reasoning_steps

NAN = np.nan


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Step A computes the sum correctly; B does not.\n[[A]]", "A"),
        ("B is right.  [[B]]  \n\n", "B"),
        ("Both are close, but the second is correct.\n\nFinal verdict: [[B]]\n", "B"),
    ],
)
def test_well_formed_verdicts_are_read(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("A is better, clearly.", "no verdict"),
        ("", "no verdict"),
        ("A is better. [[A]] Really: [[A]]", "more than one verdict"),
        ("Hard to say. [[A]] or [[B]]", "more than one verdict"),
        ("A is better. [[A]] That is my answer.", "text after the verdict"),
        ("[[A]] A is better because it adds correctly.", "before the explanation"),
        ("[[B]]", "no explanation before the verdict"),
        ("   \n[[B]]  ", "no explanation before the verdict"),
        ("Neither is right. [[C]]", "malformed verdict token '[[C]]'"),
        ("A is better. [A]", "malformed verdict token '[A]'"),
        ("A is better. [[a]]", "malformed verdict token '[[a]]'"),
        ("A is better. [[ A ]]", "malformed verdict token '[[ A ]]'"),
        ("Tie. [[Tie]]", "malformed"),
        ("A is nice [B] but [[A]]", "malformed verdict token '[B]'"),
    ],
)
def test_unparseable_outputs_name_the_reason(text, reason):
    with pytest.raises(ValueError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        parse_verdict(text)


def test_overlong_output_is_refused():
    with pytest.raises(ValueError, match="longer than"):
        parse_verdict("x" * 100_001 + "[[A]]")


def test_key_preference_undoes_the_swap():
    assert key_preference("A", "AB") == -1
    assert key_preference("B", "AB") == 1
    assert key_preference("A", "BA") == 1
    assert key_preference("B", "BA") == -1


def test_reference_template_fills_question_numbered_steps_and_candidates():
    assert template_check(REFERENCE_TEMPLATE) == []
    filled = template_fill(
        REFERENCE_TEMPLATE,
        question="What is 2 + 3 * 4?",
        steps=reasoning_steps("Multiply first.\n\n3 * 4 = 12"),
        first="Add: 2 + 12 = 14 {step_b}",
        second="Add: 2 + 3 = 5",
    )
    assert "What is 2 + 3 * 4?\nStep 1: Multiply first.\nStep 2: 3 * 4 = 12" in filled
    assert "Reasoning Step]\nAdd: 2 + 12 = 14 {step_b}\n[The End of Assistant A" in filled
    assert "Reasoning Step]\nAdd: 2 + 3 = 5\n[The End of Assistant B" in filled
    assert '"[[A]]" if assistant A is better' in filled


def test_template_problems_are_listed():
    assert template_check("  ") == ["The template is empty."]
    problems = template_check("Judge {question} {candidate}")
    assert any("{candidate}" in p for p in problems)
    assert any("{step_a}" in p for p in problems)


def test_judge_case_preference_is_a_tie_when_the_orders_disagree():
    by_order = np.array([[-1, -1], [-1, 1], [NAN, 1], [NAN, NAN]], dtype=float)
    result = judge_case_preferences(by_order)
    assert result[:3].tolist() == [-1.0, 0.0, 1.0]
    assert np.isnan(result[3])


def test_kappa_equals_scikit_learn_and_the_interval_brackets_it():
    rng = np.random.default_rng(3)
    humans = rng.choice([-1.0, 0.0, 1.0], size=80, p=[0.45, 0.1, 0.45])
    judge = np.where(rng.random(80) < 0.75, humans, rng.choice([-1.0, 0.0, 1.0], size=80))
    judge[:5] = NAN  # no verdict: left out
    result = kappa_with_interval(judge, humans, n_resamples=500, seed=1)
    kept = ~np.isnan(judge)
    expected = cohen_kappa_score(judge[kept], humans[kept], labels=[-1.0, 0.0, 1.0])
    assert result.kappa == pytest.approx(expected)
    assert result.n_cases == 75
    assert result.low < result.kappa < result.high
    again = kappa_with_interval(judge, humans, n_resamples=500, seed=1)
    assert (again.low, again.high) == (result.low, result.high)


def test_position_consistency_and_first_position_rate():
    by_order = np.array([[-1, -1], [-1, 1], [1, 1], [NAN, 1]], dtype=float)
    assert position_consistency(by_order) == (pytest.approx(2 / 3), 3)
    assert first_position_rate(["A", "A", "B", "A"]) == (0.75, 4)
    assert np.isnan(first_position_rate([])[0])


def test_longer_preferred_rate_counts_decisive_verdicts_between_unequal_lengths():
    preferences = np.array([-1, 1, 1, 0, -1], dtype=float)
    lengths = np.array([[10, 5], [10, 5], [3, 9], [1, 9], [4, 4]])
    # Case 0 chose the longer A, case 1 the shorter B, case 2 the longer B; 3 a tie, 4 equal.
    assert longer_preferred_rate(preferences, lengths) == (pytest.approx(2 / 3), 3)

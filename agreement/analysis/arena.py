"""Reads for the ranking of systems from the raters' pairwise preferences.

Each submitted preference on a sample case is one comparison between the two systems of
that case (whichever pair it is: cases may compare varying pairings), read in key order
with the screen's side undone (``selectors.ratings.study_ratings``). The win matrix and
the Bradley-Terry ranking (``ranking``) name the systems, so they exist only once the study
is unblinded.
"""

import numpy as np

from agreement.judges.prompts import pairwise_dimension
from agreement.selectors.ratings import study_ratings
from agreement.stats.ranking import RANKING_RESAMPLES, bradley_terry, win_matrix
from studies.models import BlindedLabel, Study, TestCase

from .jobs import ranking_unavailable


def study_ranking(*, study: Study) -> dict:
    """{"available", "reason", "systems", "wins", "ties", "ranking"} for the ranking page."""
    unavailable = ranking_unavailable(study=study)
    if unavailable is not None:
        return unavailable
    dimension = pairwise_dimension(study)
    pairs = _case_systems(study)
    systems = sorted({name for labels in pairs.values() for name in labels.values()})
    number = {name: i for i, name in enumerate(systems)}
    first, second, outcome, items = _comparisons(study, dimension, pairs, number)
    if len(systems) < 2 or not outcome:
        return {"available": False, "reason": "No submitted preferences to rank yet."}
    first_codes = np.array(first, dtype=int)
    second_codes = np.array(second, dtype=int)
    matrix = win_matrix(first_codes, second_codes, outcome, len(systems))
    try:
        ranking = bradley_terry(
            first_codes,
            second_codes,
            outcome,
            len(systems),
            items=items,
            n_resamples=RANKING_RESAMPLES,
            seed=study.blinding_seed,
        )
    except ValueError as error:
        ranking, problem = None, str(error)
    else:
        problem = ""
    return {
        "available": True,
        "systems": systems,
        "n_comparisons": len(outcome),
        "matrix": _matrix_rows(matrix, systems),
        "problem": problem,
        "ranking": None if ranking is None else _ranking_rows(ranking, systems),
        "n_degenerate": 0 if ranking is None else ranking.n_degenerate,
        "n_resamples": RANKING_RESAMPLES,
    }


def _case_systems(study: Study) -> dict[int, dict[str, str]]:
    """The system behind each label of each sample case: {case pk: {label: system}}."""
    pairs: dict[int, dict[str, str]] = {}
    rows = BlindedLabel.objects.filter(
        test_case__study=study, test_case__purpose=TestCase.Purpose.SAMPLE
    ).values_list("test_case_id", "label", "response__system__name")
    for case_pk, label, system in rows:
        pairs.setdefault(case_pk, {})[label] = system
    return pairs


def _comparisons(study: Study, dimension, pairs, number) -> tuple[list, list, list, list]:
    """Each submitted preference as (first system, second system, outcome, case)."""
    cases = list(study.test_cases.in_sample().order_by("position").values_list("pk", flat=True))
    data = study_ratings(study=study, pilot=study.current_phase == "pilot")
    found = next((d for d in data.dimensions if d.key == dimension.key), None)
    first, second, outcome, items = [], [], [], []
    if found is None:
        return first, second, outcome, items
    # The blinded key's orientation: each case's A and B are read from its labels below.
    key_matrix = found.key_matrix
    for column, case_pk in enumerate(cases):
        labels = pairs.get(case_pk, {})
        if set(labels) != {"A", "B"}:
            continue
        for value in key_matrix[:, column]:
            if np.isnan(value):
                continue
            first.append(number[labels["A"]])
            second.append(number[labels["B"]])
            # Negative prefers the key's A (the first system), positive its B.
            outcome.append(1.0 if value < 0 else 0.0 if value > 0 else 0.5)
            # The case's column, as the report's ranking numbers its items: the same
            # resamples draw the same cases, so both show one interval.
            items.append(column)
    return first, second, outcome, items


def _matrix_rows(matrix, systems: list[str]) -> list[dict]:
    rates = matrix.win_rates
    return [
        {
            "system": name,
            "cells": [
                {
                    "wins": int(matrix.wins[i, j]),
                    "losses": int(matrix.wins[j, i]),
                    "ties": int(matrix.ties[i, j]),
                    "met": int(matrix.comparisons[i, j]),
                    "rate": None if i == j or np.isnan(rates[i, j]) else float(rates[i, j]),
                }
                for j in range(len(systems))
            ],
        }
        for i, name in enumerate(systems)
    ]


def _ranking_rows(ranking, systems: list[str]) -> list[dict]:
    return [
        {
            "rank": place,
            "system": systems[i],
            "score": float(ranking.scores[i]),
            "low": _number(ranking.low[i]),
            "high": _number(ranking.high[i]),
            "rank_low": _whole(ranking.rank_low[i]),
            "rank_high": _whole(ranking.rank_high[i]),
        }
        for place, i in enumerate(ranking.order, 1)
    ]


def _number(value) -> float | None:
    return None if np.isnan(value) else float(value)


def _whole(value) -> int | None:
    return None if np.isnan(value) else int(value)

"""Reads of adjudication for the analysis: the resolved answers as the numbers the analysis
reads, and how many cases were adjudicated, by trigger and outcome.

Agreement statistics never read these: adjudication enters the analysis only as an item's
label (protocol 11). Each answer is read by its rubric kind (``agreement_value``), never
decoded here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from django.db.models import Count, Max

from annotation.models import Adjudication
from studies.models import Study

if TYPE_CHECKING:
    import numpy as np

DONE = Adjudication.Status.DONE


def study_adjudicated_labels(
    *,
    study: Study,
    case_ids: list[int],
    labels: list[str],
    reversed_cases: dict[int, bool] | None = None,
) -> dict[str, np.ndarray]:
    """Per dimension key, the adjudicated value of each unit (NaN where none), laid out as
    the analysis lays out its matrices' columns: (case, key label) pairs, case-major, for a
    response's dimension; cases for a per-case one. Only resolved ("done") adjudications
    of ``case_ids`` count.

    ``reversed_cases`` (case pk -> True where key label A holds the later system) turns a
    preference to the systems' order, as ``agreement`` does after unblinding; None keeps
    the key's order. Answers are stored in key order (never flipped).
    """
    import numpy as np  # the analysis's read only: the pages count, and load no numpy

    rubric = [(d.key, d.scoring()) for d in study.rubric.dimensions.order_by("position")]
    case_index = {case_id: i for i, case_id in enumerate(case_ids)}
    label_index = {label: i for i, label in enumerate(labels)}
    values = {
        key: np.full(len(case_ids) * (len(labels) if scoring.scope == "response" else 1), np.nan)
        for key, scoring in rubric
    }
    rows = Adjudication.objects.filter(
        test_case__study=study, test_case_id__in=case_ids, status=DONE
    ).values_list("test_case_id", "answers")
    for case_id, answers in rows.iterator():
        case = case_index[case_id]
        answers = answers if isinstance(answers, dict) else {}
        responses = _part(answers, "responses")
        per_case = _part(answers, "case")
        for key, scoring in rubric:
            if scoring.scope == "case":
                value = scoring.agreement_value(per_case.get(key), flipped=False)
                if value is not None and reversed_cases is not None and scoring.compares_two:
                    value = scoring.in_key_order(value, flipped=bool(reversed_cases.get(case_id)))
                if value is not None:
                    values[key][case] = value
                continue
            for label, answer in responses.items():
                if label not in label_index or not isinstance(answer, dict):
                    continue
                value = scoring.agreement_value(answer.get(key), flipped=False)
                if value is not None and not math.isnan(value):
                    values[key][case * len(labels) + label_index[label]] = value
    return values


def _part(answers: dict, name: str) -> dict:
    """One part of an adjudication's answers ("responses" or "case"); {} if none."""
    part = answers.get(name)
    return part if isinstance(part, dict) else {}


def adjudication_counts(*, study: Study, case_ids: list[int] | None = None) -> dict:
    """How many cases went to adjudication, per trigger (a case with several triggers counts
    under each), and how many are waiting, resolved, or cannot be resolved. Counts only:
    no label, no system. ``case_ids``: only those cases (the analysis's sample)."""
    rows = Adjudication.objects.filter(test_case__study=study)
    if case_ids is not None:
        rows = rows.filter(test_case_id__in=case_ids)
    status = dict(rows.values_list("status").annotate(n=Count("pk")).order_by())
    per_trigger = dict.fromkeys(Adjudication.Trigger.values, 0)
    for triggers in rows.values_list("triggers", flat=True).iterator():
        named = {t for found in (triggers or {}).values() if isinstance(found, list) for t in found}
        for trigger in named & set(per_trigger):
            per_trigger[trigger] += 1
    return {
        "total": sum(status.values()),
        "waiting": status.get(Adjudication.Status.WAITING, 0),
        "done": status.get(Adjudication.Status.DONE, 0),
        "unresolvable": status.get(Adjudication.Status.UNRESOLVABLE, 0),
        "per_trigger": [
            {"trigger": trigger, "name": Adjudication.Trigger(trigger).label, "n": n}
            for trigger, n in per_trigger.items()
        ],
    }


def adjudication_inputs(*, study: Study) -> list:
    """The resolved adjudications' part of the analysis inputs: their number and latest
    change, so a resolution (or its revision) makes a stored result stale. [] while none
    is resolved, so that results stored before adjudication existed stay fresh."""
    done = Adjudication.objects.filter(test_case__study=study, status=DONE).aggregate(
        n=Count("pk"), last=Max("updated_at")
    )
    if not done["n"]:
        return []
    return [done["n"], done["last"].isoformat()]

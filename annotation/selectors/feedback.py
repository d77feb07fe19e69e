"""Reads for feedback on a rater's answers: the self-check page and the expected answers of
gold items. Nothing here joins the system of a response."""

from dataclasses import dataclass

from annotation.consistency import Entry, Finding, find_inconsistencies
from annotation.models import (
    Assignment,
)
from studies.models import Membership, TestCase
from studies.rubric import answer_flag, response_total
from studies.selectors import rubric_for_display


def _listed_side_by_side(rows: list[dict], scoring, labels: list[str]) -> list[dict]:
    """Per submitted case, what the rater listed for one dimension under each screen label
    (the kind's ``display``: items and count, or points alone when counted offline)."""
    cases = []
    for row in rows:
        by_label = {
            rating.shown_label: scoring.display(rating.scores.get(scoring.key))
            for rating in row["assignment"].ratings.all()
        }
        cells = [by_label.get(label) for label in labels]
        cases.append({"assignment": row["assignment"], "cells": cells})
    return cases


@dataclass(frozen=True)
class SelfCheck:
    dimensions: list[dict]  # per-response dimensions, as rubric_for_display gives them
    case_dimensions: list[dict]
    rows: list[dict]  # one per submitted case, in the rater's order
    counted: list[dict]  # per dimension that lists items: every case's items side by side
    labels: list[str]
    flags: list[dict]
    findings: list[tuple[Finding, Assignment | None]]
    pending: list[Assignment]
    max_total: int


def _flags(assignment: Assignment, label: str, scores: dict, names: dict) -> list[dict]:
    """The dimensions a rater flagged as hard to apply in one response's (or case's) scores."""
    flags = []
    for key, value in scores.items():
        flagged, note = answer_flag(value)
        if flagged:
            flags.append(
                {
                    "assignment": assignment,
                    "label": label,
                    "dimension": names.get(key, key),
                    "note": note,
                }
            )
    return flags


def self_check(*, rater: Membership) -> SelfCheck:
    """The rater's own submitted scores, by the labels they saw; nothing about systems."""
    dimensions = rubric_for_display(rubric=rater.study.rubric)
    per_response = [d for d in dimensions if d["scope"] == "response"]
    per_case = [d for d in dimensions if d["scope"] == "case"]
    names = {d["key"]: d["name"] for d in dimensions}
    assignments = list(
        rater.assignments.select_related("test_case")
        .prefetch_related("ratings", "revisions")
        .order_by("position")
    )
    kinds = {d.key: d for d in rater.study.rubric.scoring_dimensions()}
    scorings = list(kinds.values())
    rows, flags, entries, pending = [], [], [], []
    labels: set[str] = set()
    for assignment in assignments:
        if assignment.status == Assignment.Status.SKIPPED:
            continue  # not theirs to rate, nor to look over
        if assignment.status != Assignment.Status.SUBMITTED:
            pending.append(assignment)
            continue
        responses = []
        for rating in sorted(assignment.ratings.all(), key=lambda r: r.shown_label):
            labels.add(rating.shown_label)
            total = response_total(scorings, rating.scores)  # None: a part unanswered
            responses.append(
                {
                    "label": rating.shown_label,
                    "total": total,
                    # Each answer as the rater's form put it: points, a preference's or
                    # a category's words (the kind says), as the rater's screen showed it.
                    "points": [
                        kinds[d["key"]].answer_text(rating.scores.get(d["key"])) or None
                        for d in per_response
                    ],
                }
            )
            entries.append(Entry(assignment.rater_label, rating.shown_label, rating.scores, total))
            flags += _flags(assignment, rating.shown_label, rating.scores, names)
        flags += _flags(assignment, "", assignment.case_scores or {}, names)
        rows.append(
            {
                "assignment": assignment,
                "responses": responses,
                "case_points": [
                    kinds[d["key"]].answer_text((assignment.case_scores or {}).get(d["key"]))
                    or None
                    for d in per_case
                ],
                "revisions": len(assignment.revisions.all()),
            }
        )
    ordered_labels = sorted(labels)
    listing = [d for d in per_response if d["lists_items"]]
    counted = [
        {
            "dimension": dimension,
            "cases": _listed_side_by_side(rows, kinds[dimension["key"]], ordered_labels),
        }
        for dimension in listing
    ]
    by_case = {a.rater_label: a for a in assignments}
    findings = find_inconsistencies(
        entries=entries,
        counted=[kinds[d["key"]] for d in listing],
        max_total=sum(d["max"] for d in per_response),
    )
    return SelfCheck(
        dimensions=per_response,
        case_dimensions=per_case,
        rows=rows,
        counted=counted,
        labels=ordered_labels,
        flags=flags,
        findings=[(finding, by_case.get(finding.case)) for finding in findings],
        pending=pending,
        max_total=sum(d["max"] for d in per_response),
    )


def expected_answer_details(
    *, assignment: Assignment, expected: dict, dimensions: dict, names: dict
) -> list[dict]:
    """Each expected answer of a submitted gold item or attention check, checked by its
    dimension's kind: [{"label", "key", "dimension", "response", "expected", "given", "met"}].

    ``expected`` is the case's ``ExpectedAnswer.answers``; ``dimensions`` the rubric's
    kinds by key; ``names`` what to call each key label (system names for coordinators, the
    labels themselves in an export before unblinding). Ratings come from
    ``assignment.ratings`` (prefetch them for many assignments).
    """
    scores = {rating.label: rating.scores or {} for rating in assignment.ratings.all()}
    wanted = [
        (label, key, spec, scores.get(label, {}).get(key), False)
        for label, by_key in sorted((expected.get("responses") or {}).items())
        for key, spec in by_key.items()
    ] + [
        ("", key, spec, (assignment.case_scores or {}).get(key), assignment.flipped)
        for key, spec in (expected.get("case") or {}).items()
    ]
    details = []
    for label, key, spec, value, flipped in wanted:
        scoring = dimensions.get(key)
        if scoring is None:  # a dimension removed since (only possible before opening)
            continue
        details.append(
            {
                "label": label,
                "key": key,
                "dimension": scoring.name,
                "response": names.get(label, label),
                "expected": scoring.expected_text(spec, names=names),
                "given": scoring.given_text(value, flipped=flipped, names=names),
                "met": scoring.expected_met(spec, value, flipped=flipped),
            }
        )
    return details


def gold_feedback(*, assignment: Assignment) -> str:
    """The explanation to show after a missed gold item, when the study gives feedback on
    gold (off by default: the protocol keeps gold unannounced); "" otherwise."""
    from studies.selectors import quality_settings_for

    case = assignment.test_case
    if (
        case.purpose != TestCase.Purpose.GOLD
        or not quality_settings_for(study=case.study).gold_feedback
    ):
        return ""
    expected = getattr(case, "expected", None)
    if expected is None or not expected.explanation:
        return ""
    dimensions = {d.key: d for d in case.study.rubric.scoring_dimensions()}
    details = expected_answer_details(
        assignment=assignment, expected=expected.answers, dimensions=dimensions, names={}
    )
    return expected.explanation if any(not d["met"] for d in details) else ""

"""Reads for agreement: the study's ratings as matrices, as every statistic reads them."""

import json
import math
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from django.db import connections
from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    F,
    Field,
    Func,
    Q,
    Value,
)
from django.utils.dateparse import parse_datetime

from agreement.analysis.agreement import DimensionData
from annotation.models import Assignment, Rating
from studies.models import BlindedLabel, Membership, Study, TestCase
from studies.rubric import response_total

from .results import _ratings_summary


@dataclass(frozen=True)
class StudyRatings:
    raters: list[str]
    dimensions: list[DimensionData]
    # Ratings: one per rater and response rated, or, in a rubric of preferences only
    # (nothing rated per response), one per rater and case: a verdict (``_count``). So are
    # ``left_out``'s and ``case_ratings``' counts.
    n_ratings: int
    left_out: dict
    # For the comparison of systems: the sample's cases (pks, in order) and the key labels
    # of the response units (cases x labels, case-major), each response's total
    # (raters x response units) and each case's confidence (raters x cases, 1-3).
    case_ids: list[int]
    labels: list[str]
    totals: np.ndarray
    confidence: np.ndarray
    # The ratings part of ``analysis_inputs``, from the very rows these data were read from.
    inputs_ratings: list | None = None
    # How many of the counted ratings each case (``case_ids``) has, and how many submitted
    # ratings (counted or not: those ``inputs_ratings`` counts).
    case_ratings: np.ndarray | None = None
    case_inputs: np.ndarray | None = None
    # The adaptive design's agreement data (the first k_min ratings of each case) carry here
    # every counted rating, which the labels and the comparison of systems read.
    labelled: "StudyRatings | None" = None


@dataclass(frozen=True)
class SubmittedRatings:
    """Every submitted rating of a study (any purpose, rater or phase), read in one query
    as columns, with each rating's answers as numbers: what the agreement data and the QC
    records are both laid out from."""

    rubric: list  # [(dimension, its scoring)] in the rubric's order
    members: dict[int, tuple[str, str]]  # membership pk -> (pseudonym, status)
    cases: list[tuple[int, str, str]]  # (pk, stratum, purpose), by position
    opened: bool  # whether the study was ever opened
    # One entry per rating:
    rating: np.ndarray
    rater: np.ndarray  # membership pks
    case: np.ndarray  # test case pks
    assignment: np.ndarray
    label: np.ndarray
    shown_label: np.ndarray
    # Each response's total by the rubric's one rule (``studies.rubric.response_total``),
    # read from its answers (never from the stored column: see ``Rating.total``); NaN
    # where a part is not given.
    total: np.ndarray
    confidence: np.ndarray
    active_seconds: np.ndarray
    source: np.ndarray
    stamp: np.ndarray  # submitted_at as a ``RatingStamp``
    after_opening: np.ndarray  # submitted at or after the opening (all False if never opened)
    values: np.ndarray  # ratings x dimensions, in key order, NaN where unanswered
    # The pairwise preference as the screen showed it (negative: the first shown), NaN
    # without one or when unanswered.
    shown_preference: np.ndarray


class RatingStamp(Func):
    """A rating's submitted_at as a value that orders and changes with it, without a
    timezone-aware datetime per row: whole microseconds since 1970 on PostgreSQL (an
    integer, the narrowest to send and compare), the stored text on SQLite (UTC, in one
    fixed format)."""

    output_field = Field()  # an integer or text, as the backend gives it: no conversion

    # SQLite's form; PostgreSQL's is in ``as_postgresql``, which Django picks by vendor.
    template = "CAST(%(expressions)s AS text)"

    def __init__(self):
        super().__init__(F("submitted_at"))

    def as_postgresql(self, compiler, connection, **extra_context):
        return self.as_sql(
            compiler,
            connection,
            template="(EXTRACT(EPOCH FROM %(expressions)s) * 1000000)::bigint",
            **extra_context,
        )

    @staticmethod
    def dtype(vendor: str):
        return np.int64 if vendor == "postgresql" else object

    @staticmethod
    def time(stamp) -> datetime:
        """The aware datetime a stamp was read from (as the ORM would return it)."""
        if isinstance(stamp, str):
            time = parse_datetime(stamp)
            if time is None:
                raise ValueError(f"Not a stored time: {stamp!r}.")
            return time if time.tzinfo else time.replace(tzinfo=UTC)
        return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(stamp))


# Plain columns: the rater as a membership pk (not its pseudonym), no answers, no datetime.
ROW_COLUMNS = {
    "rating": ("pk", np.int64),
    "rater": ("assignment__rater_id", np.int64),
    "case": ("assignment__test_case_id", np.int64),
    "assignment": ("assignment_id", np.int64),
    "label": ("label", str),
    "shown_label": ("shown_label", str),
    "confidence": ("assignment__confidence", str),
    "active_seconds": ("assignment__active_seconds", np.int64),
    "source": ("assignment__source", str),
    "flipped": ("assignment__flipped", bool),
    "stamp": ("stamp", None),  # the backend's RatingStamp
    "after_opening": ("after_opening", bool),
}


def study_submitted_ratings(*, study: Study, case_ids: list[int] | None = None) -> SubmittedRatings:
    """The study's submitted ratings in one query (no model instances, no answers: each
    answer's numbers come from ``_answer_values``, which reads only the new ones);
    ``case_ids``: those of these cases only (the tallies' update reads no other)."""
    rubric = [(dimension, dimension.scoring()) for dimension in study.rubric.dimensions.all()]
    members = {
        pk: (pseudonym, status)
        for pk, pseudonym, status in study.memberships.values_list("pk", "pseudonym", "status")
    }
    cases = study.test_cases.order_by("position")
    ratings = Rating.objects.filter(
        assignment__test_case__study=study, assignment__status=Assignment.Status.SUBMITTED
    ).order_by()
    if case_ids is not None:
        cases = cases.filter(pk__in=case_ids)
        ratings = ratings.filter(assignment__test_case_id__in=case_ids)
    cases = list(cases.values_list("id", "stratum", "purpose"))
    # The database tells the phase.
    after = Value(False)
    if study.opened_at is not None:
        after = ExpressionWrapper(Q(submitted_at__gte=study.opened_at), BooleanField())
    query = ratings.annotate(stamp=RatingStamp(), after_opening=after).values_list(
        *(field for field, _ in ROW_COLUMNS.values())
    )
    # The query's rows as the driver returns them, with no per-row step of the ORM: no
    # column of it needs a converter (plain numbers, text and booleans, the stamp as above).
    connection = connections[query.db]
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in ROW_COLUMNS]
    dtypes = {name: dtype for name, (_, dtype) in ROW_COLUMNS.items()}
    dtypes["stamp"] = RatingStamp.dtype(connection.vendor)
    arrays = {
        name: np.array(column, dtype=dtypes[name])
        for name, column in zip(ROW_COLUMNS, columns, strict=True)
    }
    values, shown, totals = _answer_values(
        study=study,
        ratings=ratings,
        pks=arrays["rating"],
        stamps=arrays["stamp"],
        flipped=arrays.pop("flipped"),
        rubric=rubric,
        keep=case_ids is None,
    )
    return SubmittedRatings(
        rubric=rubric,
        members=members,
        cases=cases,
        opened=study.opened_at is not None,
        values=values,
        shown_preference=shown,
        total=totals,
        **arrays,
    )


def study_ratings(
    *,
    study: Study,
    pilot: bool,
    submitted: SubmittedRatings | None = None,
    first_per_case: int | None = None,
    keyed: bool = False,
) -> StudyRatings:
    """The submitted ratings that count: main-study (or pilot) data of raters not excluded.

    Pilot data are ratings last submitted before the study opened (a study never opened has
    only the phase it is in). Units are (test case, key label) for per-response dimensions
    and test cases for per-case dimensions. ``submitted``: the study's submitted ratings,
    if read already. ``first_per_case``: only the first that many counted ratings of each
    case (``agreement_first_ratings``: the adaptive design's fixed part, for agreement).
    ``keyed``: preferences in the systems' order even while blinded (the monitor's read,
    see ``study_system_order``).
    """
    data = submitted or study_submitted_ratings(study=study)
    cases = [(pk, stratum) for pk, stratum, purpose in data.cases if purpose == SAMPLE]
    case_ids = np.array([pk for pk, _ in cases], dtype=np.int64)
    in_sample = np.isin(data.case, case_ids)
    excluded = [pk for pk, (_, status) in data.members.items() if status == EXCLUDED]
    by_excluded = np.isin(data.rater, excluded)
    counted = in_sample & ~by_excluded
    chosen = counted
    if data.opened:
        chosen = counted & (~data.after_opening if pilot else data.after_opening)
    rows = np.flatnonzero(chosen)
    beyond = 0
    if first_per_case is not None:
        kept = _first_per_case(data=data, rows=rows, k=first_per_case)
        beyond, rows = _count(data, rows) - _count(data, kept), kept
    layout = _layout(data=data, rows=rows, case_ids=case_ids)
    raters, labels = layout["raters"], layout["labels"]
    response_strata = [stratum for _, stratum in cases for _ in labels]
    case_strata = [stratum for _, stratum in cases]
    reversed_cases = _cases_in_reverse_system_order(
        study=study, case_ids=case_ids.tolist(), keyed=keyed
    )
    dimensions = []
    for index, (dimension, scoring) in enumerate(data.rubric):
        if scoring.scope == "case":
            strata, where = case_strata, layout["per_case"]
            column = data.values[layout["first_rows"], index]
        else:
            strata, where = response_strata, layout["per_response"]
            column = data.values[rows, index]
        matrix = np.full((len(raters), len(strata)), np.nan)
        matrix[where] = column
        orientation, key_order = "key", None
        if reversed_cases is not None and scoring.compares_two and scoring.scope == "case":
            # After unblinding a preference reads in the systems' order: chance agreement
            # depends on which side is called "first".
            orientation, key_order = "system", matrix
            matrix = matrix.copy()
            for column, (case_id, _) in enumerate(cases):
                if reversed_cases.get(case_id):
                    matrix[:, column] = [
                        v if math.isnan(v) else scoring.in_key_order(v, flipped=True)
                        for v in matrix[:, column]
                    ]
        dimensions.append(
            DimensionData(
                key=dimension.key,
                name=dimension.name,
                level=dimension.level,
                matrix=matrix,
                unit_strata=strata,
                categories=scoring.agreement_values,
                scope=scoring.scope,
                orientation=orientation,
                key_order_matrix=key_order,
            )
        )
    return StudyRatings(
        raters=raters,
        dimensions=dimensions,
        n_ratings=_count(data, rows),
        left_out={
            "excluded_rater_ratings": _count(data, np.flatnonzero(in_sample & by_excluded)),
            "other_phase_ratings": _count(data, np.flatnonzero(counted & ~chosen)),
            **({"beyond_k_min_ratings": beyond} if first_per_case is not None else {}),
        },
        case_ids=case_ids.tolist(),
        labels=labels,
        totals=layout["totals"],
        confidence=layout["confidence"],
        inputs_ratings=_ratings_summary(
            count=int(in_sample.sum()),
            last=RatingStamp.time(data.stamp[in_sample].max()) if in_sample.any() else None,
            last_id=int(data.rating[in_sample].max()) if in_sample.any() else None,
        ),
        case_ratings=np.bincount(
            layout["row_cases"] if _per_response(data) else layout["per_case"][1],
            minlength=len(case_ids),
        ),
        case_inputs=np.bincount(
            _positions(case_ids, data.case[in_sample]), minlength=len(case_ids)
        ),
    )


SAMPLE = TestCase.Purpose.SAMPLE
EXCLUDED = Membership.Status.EXCLUDED


def _per_response(data: SubmittedRatings) -> bool:
    """Whether the rubric rates anything per response (else it holds preferences only)."""
    return any(scoring.scope == "response" for _, scoring in data.rubric)


def _count(data: SubmittedRatings, rows: np.ndarray) -> int:
    """The ratings among ``rows``: one per response rated, or, in a rubric of preferences
    only, one per rater and case (a verdict; its two stored rows are one rating)."""
    if _per_response(data):
        return len(rows)
    return len(np.unique(data.assignment[rows]))


def agreement_first_ratings(*, study: Study) -> int | None:
    """How many ratings of each case agreement reads: k_min in the adaptive design (extra
    raters go where raters disagree, so their ratings would bias agreement downwards),
    None (all of them) otherwise."""
    design = study.adaptive_raters
    return design[0] if design else None


def _first_per_case(*, data: SubmittedRatings, rows: np.ndarray, k: int) -> np.ndarray:
    """The ``rows`` of each case's first ``k`` assignments among them, in assignment order:
    the order of submission in the adaptive design, which adds a rater to a case only once
    all its earlier ratings are in (``annotation.services.adaptive``); a rater's later
    revision does not move them."""
    assignments = data.assignment[rows]
    distinct, first = np.unique(assignments, return_index=True)  # by assignment id
    cases = data.case[rows][first]
    order = np.lexsort((distinct, cases))
    sorted_cases = cases[order]
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order)) - np.searchsorted(sorted_cases, sorted_cases)
    return rows[np.isin(assignments, distinct[rank < k])]


def _layout(*, data: SubmittedRatings, rows: np.ndarray, case_ids: np.ndarray) -> dict:
    """Where each of the chosen ``rows`` goes: raters (sorted pseudonyms) x response units
    (cases x labels, case-major) and raters x cases (one row per assignment); the totals
    and the confidence laid out so."""
    pseudonyms = {pk: name for pk, (name, _) in data.members.items()}
    raters = sorted({pseudonyms[pk] for pk in np.unique(data.rater[rows]).tolist()})
    rater_index = {name: i for i, name in enumerate(raters)}
    member_pks = np.array(list(pseudonyms), dtype=np.int64)
    member_rows = np.array([rater_index.get(name, -1) for name in pseudonyms.values()], np.intp)
    row_raters = member_rows[_positions(member_pks, data.rater[rows])]
    labels, row_labels = np.unique(data.label[rows], return_inverse=True)
    labels = labels.tolist() or ["A", "B"]
    row_cases = _positions(case_ids, data.case[rows])
    row_units = row_cases * len(labels) + row_labels
    # A per-case answer is stored once per assignment: take one row of each.
    _, first = np.unique(data.assignment[rows], return_index=True)
    totals = np.full((len(raters), len(case_ids) * len(labels)), np.nan)
    totals[row_raters, row_units] = data.total[rows]
    confidence = np.full((len(raters), len(case_ids)), np.nan)
    confidence[row_raters[first], row_cases[first]] = [
        CONFIDENCE_LEVELS.get(level, math.nan) for level in data.confidence[rows[first]].tolist()
    ]
    return {
        "raters": raters,
        "labels": labels,
        "per_response": (row_raters, row_units),
        "per_case": (row_raters[first], row_cases[first]),
        "first_rows": rows[first],
        "row_cases": row_cases,
        "totals": totals,
        "confidence": confidence,
    }


def _positions(keys: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The position in ``keys`` (distinct) of each of ``found`` (all among them)."""
    order = np.argsort(keys, kind="stable")
    return order[np.searchsorted(keys[order], found)]


def study_system_order(*, study: Study, keyed: bool = False) -> list[str]:
    """The systems in the order the analysis names them (by name); empty while blinded,
    unless ``keyed``: the worker's step that evaluates the anytime-valid monitor, which
    keeps only what is symmetric in the systems (``services.monitor``)."""
    if not (study.is_unblinded or keyed):
        return []
    return list(study.systems.order_by("name").values_list("name", flat=True))


def _cases_in_reverse_system_order(
    *, study: Study, case_ids: list[int], keyed: bool = False
) -> dict | None:
    """Test case pk -> True where key label A holds the later system of the pair; None
    while the study is blinded (nothing here reads a system before unblinding, but the
    monitor's ``keyed`` read: see ``study_system_order``)."""
    order = {name: i for i, name in enumerate(study_system_order(study=study, keyed=keyed))}
    if not order:
        return None
    rows = BlindedLabel.objects.filter(test_case_id__in=case_ids).values_list(
        "test_case_id", "label", "response__system__name"
    )
    labels: dict[int, dict[str, int]] = {}
    for case_id, label, system in rows.iterator():
        labels.setdefault(case_id, {})[label] = order[system]
    return {
        case_id: by_label.get("A", 0) > by_label.get("B", 0) for case_id, by_label in labels.items()
    }


CONFIDENCE_LEVELS = {
    Assignment.Confidence.LOW: 1.0,
    Assignment.Confidence.MEDIUM: 2.0,
    Assignment.Confidence.HIGH: 3.0,
}


# Each stored answer's numbers for agreement, kept per process (a worker's) for a few
# studies: a recompute reads and converts only the answers submitted or revised since the
# last run of the same rubric, so its cost hardly grows with the study.
@dataclass(frozen=True)
class _KeptValues:
    pks: np.ndarray  # sorted
    stamps: np.ndarray  # submitted_at as a RatingStamp, as read with the values
    flipped: np.ndarray
    values: np.ndarray  # pks x dimensions
    shown: np.ndarray
    totals: np.ndarray


_ANSWER_VALUES: OrderedDict[int, tuple[str, _KeptValues]] = OrderedDict()
_STUDIES_KEPT = 4


def _answer_values(
    *,
    study: Study,
    ratings,
    pks: np.ndarray,
    stamps: np.ndarray,
    flipped: np.ndarray,
    rubric: list,
    keep: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rating (``pks``, with their ``stamps`` and sides): its values for agreement, one per
    dimension (NaN when unanswered), the pairwise preference as shown on screen (NaN
    without one) and the response's total (NaN when a part of it is not given)."""
    # The rubric's uuid tells a study apart from an earlier one under the same id.
    dimensions = [(d.key, d.kind, d.config) for d, _ in rubric]
    signature = json.dumps([str(study.rubric.uuid), dimensions], default=str)
    empty = _KeptValues(
        pks=np.zeros(0, np.int64),
        stamps=np.zeros(0, object),
        flipped=np.zeros(0, bool),
        values=np.zeros((0, len(rubric))),
        shown=np.zeros(0),
        totals=np.zeros(0),
    )
    kept_signature, kept = _ANSWER_VALUES.get(study.pk, ("", empty))
    if kept_signature != signature:
        kept = empty
    # A rating's answers change only with its submitted_at (every write of the one service
    # sets it); the side it was shown on turns a pairwise preference.
    where = np.minimum(np.searchsorted(kept.pks, pks), max(len(kept.pks) - 1, 0))
    same = np.zeros(len(pks), bool)
    if len(kept.pks):
        same = kept.pks[where] == pks
        same &= (kept.stamps[where] == stamps) & (kept.flipped[where] == flipped)
    values = np.full((len(pks), len(rubric)), np.nan)
    shown = np.full(len(pks), np.nan)
    totals = np.full(len(pks), np.nan)
    values[same], shown[same] = kept.values[where[same]], kept.shown[where[same]]
    totals[same] = kept.totals[where[same]]
    row_stamps, row_flipped = stamps.copy(), flipped.copy()
    read = same.copy()  # False: not read (deleted meanwhile)
    missing = pks[~same]
    if len(missing):
        source = ratings if 2 * len(missing) > len(pks) else Rating.objects.filter(pk__in=missing)
        index = {pk: i for i, pk in enumerate(pks.tolist())}
        for pk, stamp, side, row_values, row_shown, total in _answers_read(
            source=source, rubric=rubric
        ):
            i = index.get(pk)
            if i is not None and not same[i]:
                values[i], shown[i], totals[i] = row_values, row_shown, total
                row_stamps[i], row_flipped[i], read[i] = stamp, side, True
    if not keep:  # a few cases' ratings: the study's kept values stay as they are
        return values, shown, totals
    order = np.flatnonzero(read)[np.argsort(pks[read])]
    _ANSWER_VALUES[study.pk] = (
        signature,
        _KeptValues(
            pks=pks[order],
            stamps=row_stamps[order],
            flipped=row_flipped[order],
            values=values[order],
            shown=shown[order],
            totals=totals[order],
        ),
    )
    _ANSWER_VALUES.move_to_end(study.pk)
    while len(_ANSWER_VALUES) > _STUDIES_KEPT:
        _ANSWER_VALUES.popitem(last=False)
    return values, shown, totals


def _answers_read(*, source, rubric: list):
    """(pk, stamp, flipped, values, preference as shown, total) of each rating of
    ``source``."""
    preference = next((scoring for _, scoring in rubric if scoring.compares_two), None)
    scorings = [scoring for _, scoring in rubric]
    per_case = any(scoring.scope == "case" for _, scoring in rubric)
    rows = source.annotate(stamp=RatingStamp()).values_list(
        "pk", "stamp", "assignment__flipped", "scores",
        *(["assignment__case_scores"] if per_case else []),
    )  # fmt: skip
    for pk, stamp, flipped, scores, *case in rows:
        answers = {"response": scores or {}, "case": (case[0] if case else None) or {}}
        # The kind turns the answer into a number in key order (a flip undone).
        values = [
            scoring.agreement_value(answers[scoring.scope].get(d.key), flipped=flipped)
            for d, scoring in rubric
        ]
        # Unflipped: the preference as the rater's screen showed it.
        on_screen = None
        if preference is not None:
            on_screen = preference.agreement_value(answers["case"].get(preference.key))
        total = response_total(scorings, answers["response"])
        yield (
            pk,
            stamp,
            flipped,
            [math.nan if v is None else v for v in values],
            math.nan if on_screen is None else on_screen,
            math.nan if total is None else float(total),
        )

"""The study's alpha tallies (``stats.coincidence``): built from scratch by a full run,
then updated case by case from the cases a rating touched, reading no other rating.

A from-scratch run reads every rating and rebuilds the tallies from the very data it
analysed. Between two, a run updates only the touched cases: it reads their ratings, lays
them out as the full run does (``selectors.ratings.study_ratings``), and replaces each of
their units' old counts by the new ones, O(V^2) per unit. The update reads the truth of those
cases under the tallies' row lock, so it is idempotent: two updates of the same case, in
any order, leave what one from-scratch build gives. Structural changes (exclusions, rubric,
cases, phase, unblinding) make the tallies invalid, and the next run rebuilds them.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agreement.models import AgreementTallies, CaseTally, TouchedCase
from agreement.selectors.ratings import (
    StudyRatings,
    agreement_first_ratings,
    study_ratings,
    study_submitted_ratings,
)
from agreement.stats.coincidence import MAX_VALUES, Tally, unit_counts
from studies.bulk_rows import rows_insert
from studies.models import Study

logger = logging.getLogger(__name__)

# {dimension key: {label ("" for a per-case dimension): {value: count}}}
CaseCounts = dict[str, dict[str, dict[float, int]]]


@dataclass(frozen=True)
class TallySeen:
    """What a from-scratch run saw of the tallies before it read its data: their version,
    whether they were valid (then brought up to date), and the touched cases left."""

    version: int
    valid: bool
    touched: list[int] = field(default_factory=list)


def tallies_cases_touched(*, study_id: int, case_ids: list[int]) -> None:
    """Record, in the rating's own transaction, that these cases' ratings changed."""
    TouchedCase.objects.bulk_create(
        [TouchedCase(study_id=study_id, test_case_id=pk) for pk in sorted(set(case_ids))]
    )


def tallies_invalidate(*, study_id: int) -> None:
    """A structural change: the next run rebuilds the tallies from scratch."""
    AgreementTallies.objects.filter(study_id=study_id).update(
        built_for={}, version=F("version") + 1
    )


def tallies_seen(*, study: Study, built_for: dict) -> TallySeen:
    """Called before a from-scratch run reads its data (see ``tallies_settle``): valid
    tallies are brought up to date first, so that the run can check them."""
    row = tallies_update(study=study, built_for=built_for)
    valid = row is not None
    if row is None:
        row, _ = AgreementTallies.objects.get_or_create(study=study)
    touched = list(TouchedCase.objects.filter(study=study).values_list("pk", flat=True))
    return TallySeen(version=row.version, valid=valid, touched=touched)


def _scratch_totals(data: StudyRatings) -> dict:
    totals = {}
    for dimension in data.dimensions:
        tally = Tally.from_matrix(dimension.matrix)
        if tally.n_values <= MAX_VALUES:
            totals[dimension.key] = tally.to_json()
    return totals


def case_counts(data: StudyRatings) -> dict[int, CaseCounts]:
    """Each case's units' value counts, from a layout of its ratings (rated units only)."""
    cases: dict[int, CaseCounts] = {}
    labels = data.labels
    for dimension in data.dimensions:
        matrix = dimension.matrix
        for column in range(matrix.shape[1]):
            counts = unit_counts(matrix[:, column].tolist())
            if not counts:
                continue
            if dimension.scope == "case":
                case, label = data.case_ids[column], ""
            else:
                case, label = (
                    data.case_ids[column // len(labels)],
                    labels[column % len(labels)],
                )
            cases.setdefault(case, {}).setdefault(dimension.key, {})[label] = counts
    return cases


def tallies_settle(*, study: Study, data: StudyRatings, built_for: dict, seen: TallySeen) -> str:
    """After a from-scratch run read ``data``: check the tallies against it, and rebuild
    them from it when they were invalid or differ. Returns what was done: "checked",
    "rebuilt", or "left" (written since ``seen``, or touched since: the next update
    applies those cases, and the newer write knows more)."""
    totals = _scratch_totals(data)
    with transaction.atomic():
        row = AgreementTallies.objects.select_for_update().get(study=study)
        if row.version != seen.version:
            return "left"
        if seen.valid:
            same = row.totals == {key: totals.get(key) for key in row.totals}
            if same and row.n_ratings == data.n_ratings:
                if row.inputs_ratings != data.inputs_ratings:
                    row.inputs_ratings = data.inputs_ratings
                    row.save(update_fields=["inputs_ratings"])
                return "checked"
            if TouchedCase.objects.filter(study=study).exists():
                return "left"
            # The update and the from-scratch build must agree exactly: they did not.
            logger.error("Alpha tallies of study %s differed from scratch; rebuilt", study.pk)
        _rebuild(study=study, row=row, data=data, totals=totals, built_for=built_for, seen=seen)
        return "rebuilt"


def _rebuild(*, study, row, data: StudyRatings, totals: dict, built_for: dict, seen: TallySeen):
    """Replace every case's counts and the totals by those of ``data`` (under the lock)."""
    cases = case_counts(data)
    per_case, per_case_inputs = _case_ratings(data)
    CaseTally.objects.filter(study=study).delete()
    # COPY on PostgreSQL: bulk_create's quoting of each row's counts (an array of JSON
    # texts) was most of a rebuild's time at 100,000 ratings.
    rows_insert(
        CaseTally,
        [
            {
                "study_id": study.pk,
                "test_case_id": case,
                "counts": _counts_json(cases.get(case, {})),
                "n_ratings": per_case.get(case, 0),
                "n_inputs": per_case_inputs.get(case, 0),
            }
            for case in data.case_ids
            if case in cases or per_case_inputs.get(case, 0)
        ],
    )
    TouchedCase.objects.filter(pk__in=seen.touched).delete()
    AgreementTallies.objects.filter(pk=row.pk).update(
        built_for=built_for,
        totals=totals,
        n_ratings=data.n_ratings,
        inputs_ratings=data.inputs_ratings,
        version=F("version") + 1,
        built_at=timezone.now(),
    )


def tallies_update(*, study: Study, built_for: dict) -> AgreementTallies | None:
    """Bring the tallies up to date with the touched cases (reading only theirs); None
    when they are not valid for the study as it is (a from-scratch run is needed)."""
    with transaction.atomic():
        row = AgreementTallies.objects.select_for_update().filter(study=study).first()
        if row is None or not row.built_for or row.built_for != built_for:
            return None
        touched = list(TouchedCase.objects.filter(study=study).values_list("pk", "test_case_id"))
        if not touched:
            return row
        case_ids = sorted({case for _, case in touched})
        submitted = study_submitted_ratings(study=study, case_ids=case_ids)
        data = study_ratings(
            study=study,
            pilot=study.current_phase == "pilot",
            submitted=submitted,
            first_per_case=agreement_first_ratings(study=study),
        )
        new = case_counts(data)
        per_case, per_case_inputs = _case_ratings(data)
        # The touched cases' rows, locked in one order (the tallies' row is held already).
        old = {
            tally.test_case_id: tally
            for tally in CaseTally.objects.select_for_update()
            .filter(study=study, test_case_id__in=case_ids)
            .order_by("test_case_id")
        }
        totals = {key: Tally.from_json(value) for key, value in row.totals.items()}
        n_ratings, n_inputs, lost = row.n_ratings, 0, False
        created, changed, emptied = [], [], []
        for case in case_ids:
            before = old.get(case)
            old_counts = _counts_read(before.counts) if before else {}
            new_counts = new.get(case, {})
            for key, tally in totals.items():
                units_old, units_new = old_counts.get(key, {}), new_counts.get(key, {})
                for label in sorted(set(units_old) | set(units_new)):
                    tally.replace(units_old.get(label, {}), units_new.get(label, {}))
            n_new, inputs_new = per_case.get(case, 0), per_case_inputs.get(case, 0)
            n_ratings += n_new - (before.n_ratings if before else 0)
            n_inputs += inputs_new - (before.n_inputs if before else 0)
            lost = lost or inputs_new < (before.n_inputs if before else 0)
            fields = {
                "counts": _counts_json(new_counts),
                "n_ratings": n_new,
                "n_inputs": inputs_new,
            }
            if before is None:
                if new_counts or inputs_new:
                    created.append(CaseTally(study=study, test_case_id=case, **fields))
            elif new_counts or inputs_new:
                for name, value in fields.items():
                    setattr(before, name, value)
                changed.append(before)
            else:
                emptied.append(before.pk)
        CaseTally.objects.bulk_create(created)
        CaseTally.objects.bulk_update(changed, ["counts", "n_ratings", "n_inputs"])
        CaseTally.objects.filter(pk__in=emptied).delete()
        TouchedCase.objects.filter(pk__in=[pk for pk, _ in touched]).delete()
        row.totals = {key: tally.to_json() for key, tally in totals.items()}
        row.n_ratings = n_ratings
        row.inputs_ratings = _inputs_ratings(row.inputs_ratings, n_inputs, data, lost=lost)
        row.version += 1
        row.save(update_fields=["totals", "n_ratings", "inputs_ratings", "version"])
        return row


def _case_ratings(data: StudyRatings) -> tuple[dict[int, int], dict[int, int]]:
    """Per case: its counted ratings, and its submitted ones (the inputs')."""
    counted = [] if data.case_ratings is None else data.case_ratings.tolist()
    inputs = [] if data.case_inputs is None else data.case_inputs.tolist()
    return (
        dict(zip(data.case_ids, counted, strict=True)),
        dict(zip(data.case_ids, inputs, strict=True)),
    )


def _inputs_ratings(stored: list | None, added: int, data: StudyRatings, *, lost: bool):
    """The inputs' [count, last, last id] after the touched cases' ratings changed by
    ``added``; None once a rating was deleted (the latest may be gone)."""
    if stored is None or lost:
        return None
    count, last, last_id = stored
    _, touched_last, touched_id = data.inputs_ratings or [0, None, None]
    if touched_last is not None and (
        last is None or datetime.fromisoformat(touched_last) > datetime.fromisoformat(last)
    ):
        last = touched_last
    if touched_id is not None and (last_id is None or touched_id > last_id):
        last_id = touched_id
    return [count + added, last, last_id]


def _counts_json(counts: CaseCounts) -> dict:
    return {
        key: {label: {repr(v): n for v, n in unit.items()} for label, unit in units.items()}
        for key, units in counts.items()
    }


def _counts_read(stored: dict) -> CaseCounts:
    return {
        key: {label: {float(v): n for v, n in unit.items()} for label, unit in units.items()}
        for key, units in stored.items()
    }

"""Test cases: adding them with their blinding, importing a file, removing them."""

import hashlib
from collections.abc import Iterable, Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from studies import selectors
from studies.blinding import LABELS, blinded_order
from studies.errors import CaseImportError, StudySetupError
from studies.events import study_event_record
from studies.identity_check import find_identity_mentions
from studies.importing import ParsedCases
from studies.models import (
    BlindedLabel,
    CaseUpload,
    IdentityMention,
    Response,
    Study,
    StudyEvent,
    System,
    TestCase,
)
from studies.signals import analysis_inputs_announce

from .guards import locked_study, refuse_if_frozen

# Rows per INSERT: a file's cases are written in statements of this many rows, so that no
# statement holds a whole 10 MB file's text again.
WRITE_BATCH = 500


@transaction.atomic
def test_cases_add(
    *, study: Study, systems: Sequence[str], cases: Sequence[dict]
) -> list[TestCase]:
    """Add test cases with one response per system, blinded from the study seed.

    Each case is ``{"id", "prompt", "context", "stratum", "responses": {system: text}}``;
    its responses are its systems (every system, or a few of them in an arena-style study);
    ``systems`` is their union. Input is assumed validated (the importer reports problems
    before calling this).
    """
    existing = set(study.systems.values_list("name", flat=True))
    if existing and not set(systems) <= existing:
        raise StudySetupError(
            f"The study's systems are {', '.join(sorted(existing))}; a later file can only "
            "use those."
        )
    system_rows = {
        name: System.objects.get_or_create(study=study, name=name)[0] for name in systems
    }
    start = study.test_cases.count()
    created = TestCase.objects.bulk_create(
        [
            TestCase(
                study=study,
                case_id=case["id"],
                position=start + offset,
                prompt=case["prompt"],
                context=case.get("context", ""),
                stratum=case.get("stratum", ""),
            )
            for offset, case in enumerate(cases)
        ],
        batch_size=WRITE_BATCH,
    )
    responses, orders = [], []
    for test_case, case in zip(created, cases, strict=True):
        order = blinded_order(
            seed=study.blinding_seed,
            secret=study.blinding_secret,
            case_id=test_case.case_id,
            systems=sorted(case["responses"]),
        )
        orders.append(order)
        responses += [
            Response(test_case=test_case, system=system_rows[name], text=case["responses"][name])
            for name in order
        ]
    responses = Response.objects.bulk_create(responses, batch_size=WRITE_BATCH)
    _identity_mentions_store(
        rows=((r.pk, r.test_case.case_id, r.system.name, r.text) for r in responses),
        systems=systems,
    )
    responses = iter(responses)
    BlindedLabel.objects.bulk_create(
        [
            BlindedLabel(test_case=test_case, label=label, response=next(responses))
            for test_case, order in zip(created, orders, strict=True)
            for label in LABELS[: len(order)]
        ],
        batch_size=WRITE_BATCH,
    )
    if created:
        analysis_inputs_announce(study_id=study.pk, reason="cases")
    return created


def _identity_mentions_store(
    *, rows: Iterable[tuple[int, str, str, str]], systems: Sequence[str]
) -> int:
    """Scan (response pk, case id, system, text) rows once and store what the check finds."""
    keys: dict[tuple[str, str], int] = {}

    def texts():
        for pk, case_id, system, text in rows:
            keys[case_id, system] = pk
            yield case_id, system, text

    mentions = find_identity_mentions(responses=texts(), systems=systems)
    # In the scanner's order, so that the pk keeps it within a response.
    IdentityMention.objects.bulk_create(
        IdentityMention(
            response_id=keys[mention.case_id, mention.system],
            reason=mention.reason,
            matched=mention.matched,
            snippet=mention.snippet,
        )
        for mention in mentions
    )
    return len(mentions)


@transaction.atomic
def identity_mentions_rescan(*, study: Study) -> int:
    """Scan every response of the study again, e.g. after a text changed; returns the count."""
    IdentityMention.objects.filter(response__test_case__study=study).delete()
    rows = Response.objects.filter(test_case__study=study).values_list(
        "pk", "test_case__case_id", "system__name", "text"
    )
    return _identity_mentions_store(
        rows=rows.iterator(chunk_size=2000),
        systems=list(study.systems.values_list("name", flat=True)),
    )


@transaction.atomic
def case_upload_create(
    *, study: Study, actor: AbstractBaseUser | None, filename: str, data: bytes
) -> CaseUpload:
    """Keep a checked file until the coordinator confirms its import (one pending per study)."""
    study = locked_study(study)
    refuse_if_frozen(study, "Test cases can no longer be added.")
    study.case_uploads.filter(imported_at__isnull=True).delete()
    return CaseUpload.objects.create(
        study=study,
        uploaded_by=actor,
        filename=filename[:255],
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        content=data,
    )


@transaction.atomic
def test_cases_import(
    *,
    study: Study,
    actor: AbstractBaseUser | None,
    filename: str,
    data: bytes,
    upload: CaseUpload | None = None,
) -> ParsedCases:
    """Import a whole file in one transaction, or nothing if it has any problem."""
    study = locked_study(study)
    refuse_if_frozen(study, "Test cases can no longer be added.")
    parsed = selectors.test_cases_preview(study=study, filename=filename, data=data)
    if not parsed.ok:
        raise CaseImportError(parsed.problem_lines())
    test_cases_add(study=study, systems=parsed.systems, cases=parsed.cases)
    if upload is not None:
        upload.imported_at = timezone.now()
        upload.save(update_fields=["imported_at"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.CASES_IMPORTED,
        filename=filename,
        sha256=hashlib.sha256(data).hexdigest(),
        file_type=parsed.file_type,
        cases=len(parsed.cases),
        systems=parsed.systems,
    )
    return parsed


@transaction.atomic
def test_cases_remove_all(*, study: Study, actor: AbstractBaseUser | None) -> int:
    """Remove every test case, response and system, e.g. to import a corrected file."""
    study = locked_study(study)
    refuse_if_frozen(study, "Test cases can no longer be removed.")
    count = study.test_cases.count()
    study.test_cases.all().delete()
    study.systems.all().delete()
    study_event_record(study=study, actor=actor, kind=StudyEvent.Kind.CASES_REMOVED, cases=count)
    if count:
        analysis_inputs_announce(study_id=study.pk, reason="cases")
    return count

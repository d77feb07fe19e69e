"""Test-case files before import (their check and preview) and the blinding check of the
study's texts."""

import hashlib
from collections.abc import Callable
from pathlib import Path

from django.core.cache import cache
from django.db.models import Count, Max

from ..importing.cases import ParsedCases, parse_cases
from ..importing.identity_check import (
    MAX_LISTED,
    IdentityScanner,
    Mention,
    find_identity_mentions,
)
from ..importing.read_ahead import read_ahead
from ..importing.tabular import Source
from ..models import (
    IdentityMention,
    Study,
)


def test_cases_preview(
    *,
    study: Study,
    filename: str,
    data: Source,
    sink: Callable[[dict], None] | None = None,
    ahead: bool = False,
) -> ParsedCases:
    """Check a file against the study (its ids and systems); writes nothing itself.

    ``data`` is the file's bytes or its path; ``sink`` as for ``parse_cases``. ``ahead``:
    the file is read and checked in a thread of its own (``read_ahead``), a few chunks
    ahead of the sink, which runs in the caller's thread (an import that writes each case
    overlaps the reading with its writes).
    """
    existing_ids = set(study.test_cases.values_list("case_id", flat=True))
    study_systems = list(study.systems.values_list("name", flat=True))

    def read(into: Callable[[dict], None] | None) -> ParsedCases:
        return parse_cases(
            filename=filename,
            data=data,
            existing_ids=existing_ids,
            study_systems=study_systems,
            sink=into,
        )

    if ahead and sink is not None:
        return read_ahead(read, sink)
    return read(sink)


# The blinding check lists this many passages, then says how many more there are.
MENTIONS_SHOWN = MAX_LISTED


def study_identity_mentions(
    *, study: Study, limit: int | None = None, from_position: int = 0
) -> list[Mention]:
    """Passages that may name their system or model, as stored when the texts were imported
    (see ``studies.importing.identity_check`` and ``services.identity_mentions_rescan``).

    Ordered by case and system name, never through the blinded labels: listed in label
    order, the first warning of a case would always be Response A's, and the coordinator
    knows which system wrote each text. Within a response, in the scanner's order.
    """
    rows = (
        IdentityMention.objects.filter(
            response__test_case__study=study, response__test_case__position__gte=from_position
        )
        .order_by("response__test_case__position", "response__system__name", "pk")
        .values_list(
            "response__test_case__case_id", "response__system__name", "reason", "matched", "snippet"
        )
    )
    if limit is not None:
        rows = rows[:limit]
    return [
        Mention(case_id=case_id, system=system, reason=reason, matched=matched, snippet=snippet)
        for case_id, system, reason, matched, snippet in rows
    ]


def study_identity_mention_counts(*, study: Study) -> tuple[int, int]:
    """How many passages the blinding check found, and in how many responses."""
    counts = IdentityMention.objects.filter(response__test_case__study=study).aggregate(
        passages=Count("pk"), responses=Count("response", distinct=True)
    )
    return counts["passages"], counts["responses"]


def study_next_case_position(*, study: Study) -> int:
    """The position the next imported test case takes (as the import's writer numbers
    them): the cases an import adds start here."""
    return study.test_cases.count()


def study_identity_report(*, study: Study, from_position: int = 0) -> dict:
    """The blinding check's hits in the cases from ``from_position`` on (an import's), for
    the command and the API: the total, and the first ``MAX_LISTED`` with their phrase."""
    total = IdentityMention.objects.filter(
        response__test_case__study=study, response__test_case__position__gte=from_position
    ).count()
    listed = study_identity_mentions(study=study, limit=MAX_LISTED, from_position=from_position)
    return {"count": total, "listed": listed}


def study_blinding_check(*, study: Study) -> dict:
    """What the blinding check shows on a page: the first passages and how many there are."""
    passages, _ = study_identity_mention_counts(study=study)
    shown = study_identity_mentions(study=study, limit=MENTIONS_SHOWN) if passages else []
    return {"mentions": shown, "mention_count": passages, "mentions_more": passages - len(shown)}


def test_cases_check(*, study: Study, filename: str, data: Source) -> tuple[ParsedCases, dict]:
    """An upload's check and the blinding check of its texts, in one pass over the file that
    keeps no case beyond the first few (``parsed.cases`` is empty): what the preview shows,
    as ``test_cases_preview`` and ``test_cases_preview_blinding_check`` would show it."""
    known = set(study.systems.values_list("name", flat=True))
    scanners: list[IdentityScanner] = []

    def scan(scanner: IdentityScanner, case: dict) -> None:
        for name in sorted(case["responses"]):
            scanner.scan(case["id"], name, case["responses"][name])

    def sink(case: dict) -> None:
        if not scanners:  # a CSV file's first case has every system of the file
            systems = sorted(known | set(case["responses"]))
            scanners.append(IdentityScanner(systems=systems, keep=MENTIONS_SHOWN))
        scan(scanners[0], case)

    parsed = test_cases_preview(study=study, filename=filename, data=data, sink=sink)
    scanner = scanners[0] if scanners else None
    wanted = known | set(parsed.systems)
    if parsed.ok and scanner is not None and not wanted <= scanner.systems:
        # A system first seen after the first case (a JSONL file, an arena-style study):
        # its name is looked for in every text, in a second pass.
        scanner = IdentityScanner(systems=sorted(wanted), keep=MENTIONS_SHOWN)
        test_cases_preview(
            study=study, filename=filename, data=data, sink=lambda case: scan(scanner, case)
        )
    mentions = scanner.mentions if scanner is not None else []
    count = scanner.count if scanner is not None else 0
    check = {
        "mentions": mentions,
        "mention_count": count,
        "mentions_more": count - len(mentions),
        # The names the texts were scanned for: the import stores these mentions instead of
        # scanning again when they are all here and the study's systems are these.
        "systems": sorted(scanner.systems) if scanner is not None else [],
    }
    return parsed, check


def case_upload_kept_mentions(*, study: Study, upload) -> tuple[list[Mention], list[str]] | None:
    """Every mention the upload's check found, with the systems it looked for, while the
    study is as it was then and none was left out of the kept preview; else None."""
    kept = cache.get(case_upload_preview_key(study=study, upload=upload))
    if kept is None:
        return None
    _, check = kept
    if check["mentions_more"] or "systems" not in check:
        return None
    return check["mentions"], check["systems"]


def case_upload_preview_key(*, study: Study, upload) -> str:
    """Where an upload's checked preview is kept: it holds while the study's cases and
    systems are as they were when the file was checked (any import or removal since, and
    the key changes: the file is checked again)."""
    cases = study.test_cases.aggregate(count=Count("pk"), last=Max("pk"))
    systems = ",".join(sorted(study.systems.values_list("name", flat=True)))
    state = hashlib.sha256(f"{cases['count']}:{cases['last']}:{systems}".encode()).hexdigest()
    return f"case-upload-preview:{upload.uuid}:{state[:32]}"


def case_upload_preview(*, study: Study, upload) -> tuple[ParsedCases, dict]:
    """The preview of a kept upload: as checked when it was uploaded, if the study has not
    changed since, else the file checked again (``test_cases_check``)."""
    kept = cache.get(case_upload_preview_key(study=study, upload=upload))
    if kept is not None:
        return kept
    return test_cases_check(study=study, filename=upload.filename, data=Path(upload.file.path))


def test_cases_preview_blinding_check(*, study: Study, parsed: ParsedCases) -> dict:
    """The blinding check of a file not yet imported, shown in its preview as
    ``study_blinding_check`` shows it after import: by case, then system name."""
    systems = sorted(set(parsed.systems) | set(study.systems.values_list("name", flat=True)))
    responses = (
        (case["id"], name, case["responses"][name])
        for case in parsed.cases
        for name in sorted(case["responses"])
    )
    found = find_identity_mentions(responses=responses, systems=systems)
    shown = found[:MENTIONS_SHOWN]
    more = len(found) - len(shown)
    return {"mentions": shown, "mention_count": len(found), "mentions_more": more}

"""Test cases: adding them with their blinding, importing a file, removing them."""

import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.files.base import ContentFile, File
from django.db import transaction
from django.utils import timezone

from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import (
    JobFailed,
    job_active,
    job_create,
    job_discard,
    job_execute,
    job_status,
)
from studies import selectors
from studies.blinding import LABELS, blinded_order
from studies.bulk_rows import rows_insert, tables_analyze_on_commit
from studies.errors import ApplicationError, CaseImportError, StudySetupError
from studies.events import study_event_record
from studies.importing import tabular
from studies.importing.cases import ParsedCases
from studies.importing.identity_check import find_identity_mentions
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
from studies.upload_files import case_upload_storage

from .guards import locked_study, refuse_if_frozen
from .welfare import consent_renew_if_sheet_changed

logger = logging.getLogger(__name__)

# Cases per batch: a file's cases are written in statements of this many cases (and their
# responses and labels), so that no statement, and no list of model instances, holds a
# whole file's text again.
WRITE_BATCH = 1000
# From this many cases written, the tables they went to are analysed once the import
# commits (PostgreSQL's planner statistics; a smaller import changes them too little).
ANALYZE_AFTER_CASES = 5000


class CaseWriter:
    """Writes checked cases in batches, blinded, with the blinding check stored.

    Used inside the caller's transaction: what it wrote is undone with it. ``add`` takes a
    case as ``test_cases_add`` does; ``finish`` writes the last batch and returns the count.
    Past the draft, raters may have consented: a first case with a warning of its own changes
    the information sheet, and ``finish`` then asks them to consent again.
    """

    def __init__(self, *, study: Study, progress=None, scanned=None):
        self.sheet_before = None
        if not study.is_draft:  # the consent version, in ``finish``
            study = locked_study(study)
            self.sheet_before = selectors.information_sheet_additions(study=study)
        self.study = study
        self.system_pks = dict(study.systems.values_list("name", "pk"))
        self.start = study.test_cases.count()
        self.count = 0
        self.batch: list[dict] = []
        self.progress = progress
        # The systems each batch was scanned for; a name first seen later is looked for
        # again in the texts already written, once, at the end.
        self.scanned_for: set[str] | None = None
        # ``scanned``: (mentions, systems) of the same file's check, made before (the
        # upload's, ``selectors.test_cases_check``): stored as they are, not scanned again.
        self.known: dict[str, list] | None = None
        if scanned is not None:
            mentions, systems = scanned
            self.known = {}
            for mention in mentions:
                self.known.setdefault(mention.case_id, []).append(mention)
            self.scanned_for = set(systems)

    def add(self, case: dict) -> None:
        self.batch.append(case)
        if len(self.batch) >= WRITE_BATCH:
            self._flush()

    def finish(self) -> int:
        self._flush()
        names = set(self.system_pks)
        if self.scanned_for is not None and names != self.scanned_for:
            IdentityMention.objects.filter(
                response__test_case__study=self.study,
                response__test_case__position__gte=self.start,
            ).delete()
            rows = Response.objects.filter(
                test_case__study=self.study, test_case__position__gte=self.start
            ).values_list("pk", "test_case__case_id", "system__name", "text")
            _identity_mentions_store(rows=rows.iterator(chunk_size=2000), systems=sorted(names))
        if self.count:
            analysis_inputs_announce(study_id=self.study.pk, reason="cases")
        if self.count >= ANALYZE_AFTER_CASES:
            tables_analyze_on_commit([TestCase, Response, BlindedLabel, IdentityMention])
        if self.sheet_before is not None:
            consent_renew_if_sheet_changed(study=self.study, sheet_before=self.sheet_before)
        return self.count

    def _system_pk(self, name: str) -> int:
        if name not in self.system_pks:
            self.system_pks[name] = System.objects.get_or_create(study=self.study, name=name)[0].pk
        return self.system_pks[name]

    def _flush(self) -> None:
        cases, self.batch = self.batch, []
        if not cases:
            return
        study = self.study
        case_pks = rows_insert(
            TestCase,
            [
                {
                    "study_id": study.pk,
                    "case_id": case["id"],
                    "position": self.start + self.count + offset,
                    "prompt": case["prompt"],
                    "context": case.get("context", ""),
                    "stratum": case.get("stratum", ""),
                    "content_warning": case.get("content_warning", ""),
                }
                for offset, case in enumerate(cases)
            ],
        )
        responses, scan, labels = [], [], []
        for case_pk, case in zip(case_pks, cases, strict=True):
            order = blinded_order(
                seed=study.blinding_seed,
                secret=study.blinding_secret,
                case_id=case["id"],
                systems=sorted(case["responses"]),
            )
            for label, name in zip(LABELS, order, strict=False):
                text = case["responses"][name]
                responses.append(
                    {"test_case_id": case_pk, "system_id": self._system_pk(name), "text": text}
                )
                scan.append((case["id"], name, text))
                labels.append({"test_case_id": case_pk, "label": label})
        response_pks = rows_insert(Response, responses)
        if self.known is None:
            self.scanned_for = set(self.system_pks)
            _identity_mentions_store(
                rows=((pk, *entry) for pk, entry in zip(response_pks, scan, strict=True)),
                systems=sorted(self.scanned_for),
            )
        else:
            self._known_mentions_store(cases, response_pks, scan)
        for label, pk in zip(labels, response_pks, strict=True):
            label["response_id"] = pk
        rows_insert(BlindedLabel, labels)
        self.count += len(cases)
        if self.progress is not None:
            self.progress(self.count)

    def _known_mentions_store(self, cases: list[dict], response_pks: list[int], scan) -> None:
        """The batch's mentions from the earlier check, in its order (case, system name)."""
        assert self.known is not None
        keys = {
            (case_id, system): pk
            for pk, (case_id, system, _) in zip(response_pks, scan, strict=True)
        }
        rows_insert(
            IdentityMention,
            [
                {
                    "response_id": keys[mention.case_id, mention.system],
                    "reason": mention.reason,
                    "matched": mention.matched,
                    "snippet": mention.snippet,
                }
                for case in cases
                for mention in self.known.get(case["id"], ())
            ],
        )


@transaction.atomic
def test_cases_add(*, study: Study, systems: Sequence[str], cases: Iterable[dict]) -> int:
    """Add test cases with one response per system, blinded from the study seed.

    Each case is ``{"id", "prompt", "context", "stratum", "content_warning", "responses":
    {system: text}}`` (``content_warning`` optional);
    its responses are its systems (every system, or a few of them in an arena-style study);
    ``systems`` is their union. Input is assumed validated (the importer reports problems
    before calling this). Returns the number of cases added.
    """
    existing = set(study.systems.values_list("name", flat=True))
    if existing and not set(systems) <= existing:
        raise StudySetupError(
            f"The study's systems are {', '.join(sorted(existing))}; a later file can only "
            "use those."
        )
    writer = CaseWriter(study=study)
    for name in systems:
        writer._system_pk(name)
    for case in cases:
        writer.add(case)
    return writer.finish()


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
    rows_insert(
        IdentityMention,
        [
            {
                "response_id": keys[mention.case_id, mention.system],
                "reason": mention.reason,
                "matched": mention.matched,
                "snippet": mention.snippet,
            }
            for mention in mentions
        ],
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
    *,
    study: Study,
    actor: User | None,
    filename: str,
    data: bytes | File,
    cases: int = 0,
) -> CaseUpload:
    """Keep a checked file until the coordinator confirms its import (one pending per study).

    ``data`` is the file's bytes or an uploaded file, copied to the upload store a chunk at
    a time.
    """
    study = locked_study(study)
    refuse_if_frozen(study, "Test cases can no longer be added.")
    running = job_active(kind=Job.Kind.CASE_IMPORT, study_id=study.pk)
    subject = running.subject if running is not None else None
    pending = study.case_uploads.filter(uuid=subject).first() if subject else None
    if pending:
        raise StudySetupError(
            f"The import of {pending.filename} is running; upload another file once it "
            "has finished."
        )
    _pending_uploads_delete(study)
    content = ContentFile(data) if isinstance(data, bytes) else data
    digest, size = hashlib.sha256(), 0
    for chunk in content.chunks():
        digest.update(chunk)
        size += len(chunk)
    upload = CaseUpload(
        study=study,
        uploaded_by=actor,
        filename=filename[:255],
        size=size,
        sha256=digest.hexdigest(),
        cases=cases,
    )
    content.seek(0)
    upload.file.save("", content, save=False)
    try:
        upload.save()
    except BaseException:
        upload.file.delete(save=False)  # no row, no file
        raise
    return upload


# How long an upload's checked preview is kept; past it, the preview checks the file again.
PREVIEW_KEPT_SECONDS = 24 * 60 * 60


def case_upload_preview_keep(
    *, study: Study, upload: CaseUpload, parsed: ParsedCases, check: dict
) -> None:
    """Keep what the upload's check found (``selectors.test_cases_check``), so that its
    preview page shows it without reading the file again: the import checks it anyway."""
    key = selectors.case_upload_preview_key(study=study, upload=upload)
    cache.set(key, (parsed, check), PREVIEW_KEPT_SECONDS)


def _pending_uploads_delete(study: Study) -> None:
    """Delete the study's uploads not imported yet, and their files once that is committed."""
    pending = study.case_uploads.filter(imported_at__isnull=True)
    names = list(pending.values_list("file", flat=True))
    pending.delete()
    storage = case_upload_storage()

    def files_delete() -> None:
        for name in names:
            if name:
                storage.delete(name)

    transaction.on_commit(files_delete)


def file_sha256(data: tabular.Source) -> str:
    digest = hashlib.sha256()
    with tabular.source_open(data) as stream:
        while chunk := stream.read(tabular.CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


@transaction.atomic
def test_cases_import(
    *,
    study: Study,
    actor: User | None,
    filename: str,
    data: tabular.Source,
    upload: CaseUpload | None = None,
    progress: Callable[[int], None] | None = None,
    scanned: tuple[list, list[str]] | None = None,
) -> ParsedCases:
    """Import a whole file in one transaction, or nothing if it has any problem.

    The file (its bytes, or its path: read as a stream) is checked and written in one pass:
    each checked case is written in a batch as it is read, and should any problem turn up,
    everything written is undone with the transaction. ``progress`` is told the number of
    cases written after each batch. ``scanned``: the blinding check's mentions of this very
    file, with the systems looked for (``selectors.case_upload_kept_mentions``): stored
    instead of scanning the texts again (a system not among them: the texts are scanned).
    """
    study = locked_study(study)
    refuse_if_frozen(study, "Test cases can no longer be added.")
    writer = CaseWriter(study=study, progress=progress, scanned=scanned)
    # Read and checked in a thread of its own while this one waits for the database.
    parsed = selectors.test_cases_preview(
        study=study, filename=filename, data=data, sink=writer.add, ahead=True
    )
    if not parsed.ok:
        raise CaseImportError(parsed.problem_lines())
    writer.finish()
    if upload is not None:
        upload.imported_at = timezone.now()
        upload.save(update_fields=["imported_at"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.CASES_IMPORTED,
        filename=filename,
        sha256=upload.sha256 if upload is not None else file_sha256(data),
        file_type=parsed.file_type,
        cases=parsed.case_count,
        systems=parsed.systems,
    )
    return parsed


@transaction.atomic
def test_cases_remove_all(*, study: Study, actor: User | None) -> int:
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


# --- The import as a job, with its progress ------------------------------------------------


def _import_job(upload: CaseUpload) -> Job | None:
    """The upload's latest import job, if it was ever started."""
    return Job.objects.filter(kind=Job.Kind.CASE_IMPORT, subject=upload.uuid).first()


def case_upload_import_start(
    *, study: Study, upload: CaseUpload, actor: User | None = None
) -> bool:
    """Start the upload's import as a job; False if it runs already or was imported.

    An import that failed, or stopped (its process died: nothing of it was kept), may be
    started again. The study has at most one running import (the job runner's constraint),
    so of two requests at once only one starts it.
    """
    refuse_if_frozen(study, "Test cases can no longer be added.")
    upload.refresh_from_db()
    if case_upload_import_status(upload=upload)["state"] not in ("ready", "failed", "stopped"):
        return False
    job = job_create(
        kind=Job.Kind.CASE_IMPORT, study_id=study.pk, subject=upload.uuid, requested_by=actor
    )
    return job is not None


def case_upload_import_schedule(*, upload: CaseUpload, actor_id: int | None) -> None:
    """Run the started import where ``JOBS_RUN`` says; refuses when the broker is down."""
    from studies.tasks import import_case_upload  # the task module imports this one

    job = _import_job(upload)

    def unreachable() -> None:
        if job is not None:
            job_discard(job=job)  # nothing was started: keep nothing

    if not job_schedule(import_case_upload, args=[upload.pk, actor_id], on_unreachable=unreachable):
        raise StudySetupError(
            "The import could not be started (the task queue is unreachable); nothing "
            "was imported. Try again in a moment."
        )


def case_upload_import_run(*, upload_id: int, actor_id: int | None) -> None:
    """The job: import the upload (all or nothing) and record how it ended."""
    upload = CaseUpload.objects.select_related("study").filter(pk=upload_id).first()
    if upload is None or upload.imported_at is not None:
        return  # imported already, or removed since
    job = _import_job(upload)
    if job is None or job.state != Job.State.RUNNING:
        return  # not asked for, ended already, or recorded as stopped

    def work(job: Job, report) -> dict:
        total = upload.cases
        # Read before the import locks the study; checked against its systems as it writes.
        scanned = selectors.case_upload_kept_mentions(study=upload.study, upload=upload)
        try:
            test_cases_import(
                study=upload.study,
                actor=(
                    get_user_model().objects.filter(pk=actor_id).first()
                    if actor_id is not None
                    else None
                ),
                filename=upload.filename,
                data=Path(upload.file.path),
                upload=upload,
                scanned=scanned,
                progress=lambda written: report(
                    "writing", written, total, f"{written} of {total} test cases written"
                ),
            )
        except CaseImportError as error:
            raise JobFailed(str(error), result={"problems": error.problems}) from error
        except ApplicationError as error:
            raise JobFailed(str(error), result={"problems": [str(error)]}) from error
        return {"cases": total}

    job_execute(job_id=job.pk, work=work)


def case_upload_import_status(*, upload: CaseUpload) -> dict:
    """Where the upload's import is: ready, running (cases written of all), done, failed
    (with its problems), or stopped (it was running but is heard from no more: nothing of
    it was kept); JSON for the page's poller."""
    job = _import_job(upload)
    status = {"state": "ready", "done": 0, "total": upload.cases, "message": "", "problems": []}
    if upload.imported_at is not None:
        return {**status, "state": "done", "done": upload.cases}
    if job is None:
        return status
    current = job_status(job=job)
    problems = current["result"].get("problems") or ([current["error"]] if current["error"] else [])
    return {
        **status,
        "state": "ready" if current["state"] == Job.State.DONE else current["state"],
        "done": current["done"],
        "message": f"{current['done']} of {upload.cases} test cases written",
        "problems": problems if current["state"] != Job.State.RUNNING else [],
    }

"""The import of ratings by system (and its check) as jobs of the job runner (``jobs``), by
the mechanism of ``file_import_jobs`` (shared with the worksheet import, whose job kind these
jobs share under names of their own). ``annotation.ratings_by_system`` is the rule, all or
nothing: a job that fails or stops has recorded nothing.
"""

from jobs.models import Job
from jobs.services import SERVER_ERROR, STOPPED
from studies.models import Study

from .file_import_jobs import KIND, FileImportJobs
from .ratings_by_system import ImportSummary, ratings_file_import

CHECK, IMPORT = "ratings-check", "ratings-import"
# The kind's words are the worksheet's: these say what stopped.
ENDED = {
    STOPPED[KIND]: "The import stopped before it finished; nothing was imported. Choose the "
    "file again.",
    SERVER_ERROR[KIND]: "The import stopped on an error of the server; nothing was imported.",
}


def _perform(*, study: Study, job: Job, kept: dict, dry_run: bool, progress) -> dict:
    summary = ratings_file_import(
        study=study,
        filename=kept["filename"],
        data=kept["data"],
        actor=job.requested_by,
        dry_run=dry_run,
        progress=progress,
    )
    return dict(summary.__dict__)


RATINGS = FileImportJobs(
    check=CHECK,
    import_=IMPORT,
    key_prefix="ratings-import-job",
    busy={
        True: "A check of ratings is running; try again once it has finished.",
        False: "An import of ratings is running; try again once it has finished.",
    },
    task="import_ratings",
    perform=_perform,
    ended=ENDED,
)


def ratings_import_job_start(
    *,
    study: Study,
    actor,
    filename: str,
    data: bytes,
    dry_run: bool,
    checked_by: Job | None = None,
) -> Job:
    """Start checking (``dry_run``) or importing a file of ratings by system, as a job."""
    return RATINGS.start(
        study=study,
        actor=actor,
        filename=filename,
        data=data,
        dry_run=dry_run,
        checked_by=checked_by,
    )


def ratings_checked_import_start(*, study: Study, actor, token: str) -> Job:
    """ "Import now": import the file a check job of this person passed, checked again."""
    return RATINGS.checked_import_start(study=study, actor=actor, token=token)


def ratings_import_job_of(*, study: Study, job_uuid) -> Job | None:
    """The study's ratings import job with this UUID; None for another's, or no UUID."""
    return RATINGS.job_of(study=study, job_uuid=job_uuid)


def ratings_import_job_run(*, job_id: int) -> None:
    """The job: check the file, and record it unless it is a check."""
    RATINGS.run(job_id=job_id)


def ratings_import_job_status(*, job: Job) -> dict:
    """Where the job is (JSON for the page's poller and the API), and whether it checks."""
    return {**RATINGS.status(job=job), "dry_run": job.name == CHECK}


def _summary(done: dict) -> ImportSummary:
    fields = ImportSummary.__dataclass_fields__
    return ImportSummary(**{k: v for k, v in done.items() if k in fields})


def ratings_import_job_outcome(*, job: Job) -> tuple[dict, ImportSummary | None, list]:
    """(status, the summary once done, the problems once failed) for the page."""
    status, summary, problems = RATINGS.outcome(job=job, done=_summary)
    return {**status, "dry_run": job.name == CHECK}, summary, problems  # type: ignore[return-value]

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


# The names the task, the pages and the API call.
ratings_import_job_start = RATINGS.start
ratings_checked_import_start = RATINGS.checked_import_start
ratings_import_job_of = RATINGS.job_of
ratings_import_job_run = RATINGS.run


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

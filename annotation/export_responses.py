"""An export as an HTTP response: the one answer of the results page and the API alike.

The caller has checked who may download (a coordinator of the study); what may be
downloaded (a known format, a worksheet for a rater of the study, the key only after
unblinding) is checked here, so a file from the API is byte for byte the file from the page.
"""

import tempfile

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header

from core.errors import ApplicationError
from jobs.models import Job
from studies.models import Membership, Study

from . import exports
from .selectors.progress import study_submitted_count

KEY_BLINDED = (
    "The key is released once the study is unblinded: before that it would tell which "
    "system wrote each response, and break the blinding. The lead unblinds the study after "
    "closing it."
)
XLSX_BY_JOB = (
    "This study has {count:,} submitted ratings or more: its Excel worksheet would take too "
    "long to write while you wait, so it is prepared as a file. Press Prepare beside the "
    "worksheet's Excel on the Results page, then download it once it is ready (in the API: POST "
    "/api/v1/studies/{slug}/exports/worksheet-xlsx/job/). One rater's worksheet, and the "
    "CSV exports, still download directly."
)


class ExportByJob(ApplicationError):
    """A large study's whole Excel worksheet is written by an export job, not in a request."""


def export_by_job(*, study: Study) -> bool:
    """Whether the study's heavy exports are prepared as jobs (``export_jobs``): from
    ``EXPORT_JOB_FROM`` submitted ratings on, the Results page offers them so, and the whole
    Excel worksheet is not written in a request any more. One count."""
    return study_submitted_count(study_id=study.pk) >= settings.EXPORT_JOB_FROM


CONTENT_TYPES = {
    exports.WORKSHEET_CSV: "text/csv; charset=utf-8",
    exports.LONG_CSV: "text/csv; charset=utf-8",
    exports.KEY_CSV: "text/csv; charset=utf-8",
    exports.GOLD_CSV: "text/csv; charset=utf-8",
    exports.PROFILES_CSV: "text/csv; charset=utf-8",
    exports.SKIPS_CSV: "text/csv; charset=utf-8",
    exports.DICTIONARY_MD: "text/markdown; charset=utf-8",
    exports.WORKSHEET_XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def export_response(*, study: Study, fmt: str, rater: str | None) -> HttpResponse:
    """The export ``fmt`` of the study (a worksheet limited to ``rater`` if given), streamed
    and never cached; 404 for an unknown format or rater, 403 for the key while blinded."""
    if fmt not in exports.FORMATS:
        raise Http404
    if rater is not None and (
        fmt not in (exports.WORKSHEET_CSV, exports.WORKSHEET_XLSX)
        or not study.memberships.filter(role=Membership.Role.RATER, pseudonym=rater).exists()
    ):
        raise Http404
    if fmt == exports.KEY_CSV and not study.is_unblinded:
        # The refusal says why: the blinding, not the asker's role (the lead asks too).
        raise PermissionDenied(KEY_BLINDED)
    # The whole Excel worksheet is written before its first byte (a zip): at 50,000 ratings
    # half a minute of a web worker. From the size at which the Results page offers the job,
    # only the job writes it.
    if fmt == exports.WORKSHEET_XLSX and rater is None and export_by_job(study=study):
        raise ExportByJob(XLSX_BY_JOB.format(count=settings.EXPORT_JOB_FROM, slug=study.slug))
    filename = exports.export_filename(study=study, fmt=fmt, rater=rater)
    if fmt == exports.WORKSHEET_XLSX:
        # Written to a temporary file in openpyxl's write-only mode, then streamed from disk.
        from .export_xlsx import xlsx_write

        file = tempfile.TemporaryFile()  # noqa: SIM115 - FileResponse closes it
        xlsx_write(exports.worksheet_rows(study=study, rater=rater), file)
        file.seek(0)
        response = FileResponse(
            file, as_attachment=True, filename=filename, content_type=CONTENT_TYPES[fmt]
        )
    elif fmt == exports.DICTIONARY_MD:
        response = HttpResponse(
            exports.data_dictionary(study=study), content_type=CONTENT_TYPES[fmt]
        )
    else:
        response = StreamingHttpResponse(
            exports.export_text(study=study, fmt=fmt, rater=rater), content_type=CONTENT_TYPES[fmt]
        )
    response["Content-Disposition"] = content_disposition_header(True, filename)
    response["Cache-Control"] = "no-store"
    return response


def export_job_response(*, job: Job) -> FileResponse:
    """An export job's file as a download, under the direct export's name: the one answer
    of the results page and the API alike; 404 once it has gone (expired, replaced). The
    caller has checked who may download it and that the job is the study's."""
    from .export_jobs import EXPIRED, export_job_file  # that module imports this one

    opened = export_job_file(job=job)
    if opened is None:
        raise Http404(EXPIRED)
    file, name, content_type = opened
    response = FileResponse(file, as_attachment=True, filename=name, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response

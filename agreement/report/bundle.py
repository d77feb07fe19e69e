"""The report bundle: one zip with the exports, the data dictionary, the study's
configuration (seeds, fingerprint), the report as HTML and every number as results.json."""

import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from django.contrib.staticfiles import finders
from django.http import StreamingHttpResponse
from django.template.loader import render_to_string
from django.utils.http import content_disposition_header

from agreement.report.figures import report_charts
from agreement.report.sections import study_report
from agreement.services.plan import primary_measure_get
from annotation import exports
from studies.models import Study
from studies.selectors import profile_questions_of, study_protocol_chunks

README = """Concord report bundle for {name}

report.html          the study report as shown in Concord (open it in a browser)
results.json         every number on the report
configuration.json   the study's settings, blinding seed and protocol fingerprint, and the
                     primary question's measure ("" = none named: every question
                     is corrected with Holm's method)
{files}
The data dictionary explains every column of the exports. After unblinding, the protocol
file is the frozen protocol document: its SHA-256 (sha256sum) is the protocol fingerprint.
"""


class _Pipe:
    """A file the zip is written into and its bytes taken from as they come: the bundle
    streams out while it is written (``zipfile`` writes to a file it cannot seek)."""

    def __init__(self):
        self._parts: list[bytes] = []

    def write(self, data) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data, self._parts = b"".join(self._parts), []
        return data


def report_bundle_chunks(*, study: Study, report: dict, report_html: str) -> Iterator[bytes]:
    """The bundle as a zip, a chunk at a time while it is written (the exports in it grow
    with the study; the download starts at once and memory stays flat). The unblinding key
    goes in only once the study is unblinded."""
    unblinded = study.is_unblinded
    # Skips apart from the ratings, in a file of their own.
    formats = [exports.WORKSHEET_CSV, exports.LONG_CSV, exports.SKIPS_CSV, exports.DICTIONARY_MD]
    if unblinded:
        formats.append(exports.KEY_CSV)
    if profile_questions_of(study=study):
        # Only the profiles their raters agreed to have exported beside their pseudonym.
        formats.append(exports.PROFILES_CSV)
    configuration = {
        "study": report["study"],
        "blinding": report["blinding"],
        "design": report["design"],
        # "" = none named: no primary question, every question corrected (Holm).
        "primary_measure": primary_measure_get(study=study),
        # Each question's aggregation rule and the minimum of valid ratings per item.
        "aggregation": report["aggregation"],
        # The frozen protocol holds the key: only its fingerprint until unblinding. After
        # it, the document is a file of its own (its SHA-256 is the fingerprint).
        "protocol": f"{study.slug}-protocol.json" if unblinded else None,
    }
    names = [exports.export_filename(study=study, fmt=fmt) for fmt in formats]
    pipe = _Pipe()
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("report.html", report_html)
        bundle.writestr("results.json", json.dumps(report, indent=2, default=str))
        bundle.writestr("configuration.json", json.dumps(configuration, indent=2, default=str))
        yield pipe.take()
        for fmt, name in zip(formats, names, strict=True):
            with bundle.open(name, "w") as member:
                for text in exports.export_text(study=study, fmt=fmt):
                    member.write(text.encode("utf-8"))
                    if chunk := pipe.take():
                        yield chunk
        if unblinded:
            with bundle.open(configuration["protocol"], "w") as member:
                for piece in study_protocol_chunks(study=study):
                    member.write(piece)
                    if chunk := pipe.take():
                        yield chunk
            names.append(configuration["protocol"])
        listing = "".join(f"{name}\n" for name in names)
        bundle.writestr("README.txt", README.format(name=study.name, files=listing))
    yield pipe.take()


def report_bundle_filename(study: Study) -> str:
    return f"{study.slug}-report.zip"


def _report_bundle(study: Study) -> Iterator[bytes]:
    """The bundle of the study's report as it is now, a chunk at a time."""
    report = study_report(study=study)
    css = Path(finders.find("css/report.css")).read_text(encoding="utf-8")
    html = render_to_string(
        "agreement/report_file.html",
        {"study": study, "report": report, "charts": report_charts(report), "css": css},
    )
    return report_bundle_chunks(study=study, report=report, report_html=html)


def report_bundle_write(study: Study, file: IO[bytes], written: Callable[[int], None]) -> None:
    """The bundle written to a file, as a job prepares it (``annotation.export_jobs``),
    calling ``written(bytes so far)`` after each chunk."""
    size = 0
    for chunk in _report_bundle(study):
        file.write(chunk)
        size += len(chunk)
        written(size)


def report_bundle_response(*, study: Study) -> StreamingHttpResponse:
    """The bundle as an HTTP response: the one answer of the report page and the API alike.
    The caller has checked who may download it (a coordinator of the study)."""
    # Streamed while it is written: the exports in it grow with the study.
    response = StreamingHttpResponse(_report_bundle(study), content_type="application/zip")
    response["Content-Disposition"] = content_disposition_header(
        True, report_bundle_filename(study)
    )
    response["Cache-Control"] = "no-store"  # ratings, and after unblinding the key
    return response

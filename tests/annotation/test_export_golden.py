"""The exports, byte for byte, against copies written before their writers were made faster.

A small study with every kind of cell the exports write (counted items at half-weight,
checklists, a flag and its note, flipped screens, a skip, an adjudication, notes that
would run as formulas, quotes, commas, line breaks and non-ASCII text) is exported blinded
and unblinded, and each file is compared with its copy in ``golden_exports/``. Times are
fixed first, so the files do not depend on when the test runs. To write the copies again
(only when an export is meant to change): ``CONCORD_WRITE_GOLDEN=1 pytest <this file>``.
"""

import io
import os
import re
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agreement.report.bundle import report_bundle_chunks
from annotation import export_xlsx, exports
from annotation.models import Adjudication, Assignment, Rating
from annotation.services import assignments_create_all
from annotation.services.skipping import case_skip
from studies.models import Study
from studies.services import membership_add
from tests.payloads import SYSTEMS, close_and_unblind, payload_for, submit

from ..factories import UserFactory, adjudication_make, make_study

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).parent / "golden_exports"
NOTES = [
    "",
    '=HYPERLINK("http://x"), then "quoted"',
    "line one\nline two; -2+3 | @SUM(A1)",
    "Ünïcödé ½ — naïve, 日本語",
    "+1",
]
OPENED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def golden_study() -> Study:
    """Three raters on five cases, balanced sides, fixed times; R-03 skips its last case."""
    study = make_study(slug="golden", cases=5, raters=[], systems=SYSTEMS, secret="golden-key")
    Study.objects.filter(pk=study.pk).update(side_mode="balanced", name='Golden, "export"')
    study.refresh_from_db()
    for _ in range(3):
        membership = membership_add(study=study, user=UserFactory(), role="rater")
        assignments_create_all(study=study, rater=membership)
    raters = study.memberships.filter(role="rater").order_by("pseudonym")
    for r, rater in enumerate(raters):
        for n, assignment in enumerate(rater.assignments.order_by("position")):
            if r == 2 and n == 4:
                case_skip(assignment=assignment, reason="", note="=not mine, sorry")
            elif (r, n) != (1, 3):  # R-02 leaves one case open
                payload = payload_for(n + 2 * r, notes=NOTES[(n + r) % len(NOTES)])
                payload["confidence"] = ("low", "medium", "high")[(n + r) % 3]
                submit(assignment, payload, active_seconds=30 + n)
    first = study.test_cases.order_by("position").first()
    adjudication_make(
        test_case=first,
        triggers={"depth": [Adjudication.Trigger.DISAGREEMENT]},
        status=Adjudication.Status.DONE,
        answers={
            "responses": {"A": {"depth": {"items": [{"text": "f", "half": False}] * 3}}},
            "case": {},
        },
    )
    Adjudication.objects.filter(test_case=first).update(reason="Two of three, =checked")
    # Fixed times: the study opened before every rating, one rating is a pilot's.
    Study.objects.filter(pk=study.pk).update(opened_at=OPENED)
    for i, rating in enumerate(Rating.objects.filter(assignment__test_case__study=study).order_by(
        "assignment__rater__pseudonym", "assignment__test_case__position", "label"
    )):  # fmt: skip
        moment = OPENED + timedelta(minutes=7 * i, microseconds=1000 * i) - timedelta(hours=1)
        Rating.objects.filter(pk=rating.pk).update(submitted_at=moment)
    Assignment.objects.filter(test_case__study=study).update(
        submitted_at=OPENED + timedelta(days=1), skipped_at=OPENED + timedelta(days=2)
    )
    study.refresh_from_db()
    return study


def xlsx_parts(data: bytes) -> bytes:
    """An .xlsx's parts, but for its creation time (docProps/core.xml)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return b"".join(
            name.encode() + b"\n" + archive.read(name)
            for name in archive.namelist()
            if name != "docProps/core.xml"
        )


def files_of(study: Study) -> dict[str, bytes]:
    """Every export of the study, and the export members of its report bundle."""
    formats = [exports.WORKSHEET_CSV, exports.LONG_CSV, exports.SKIPS_CSV, exports.GOLD_CSV]
    formats += [exports.DICTIONARY_MD, exports.WORKSHEET_XLSX]
    if study.is_unblinded:
        formats.append(exports.KEY_CSV)
    files = {}
    for fmt, rater in [(fmt, None) for fmt in formats] + [
        (exports.WORKSHEET_CSV, "R-02"),
        (exports.WORKSHEET_XLSX, "R-03"),
    ]:
        file = io.BytesIO()
        exports.export_write(study=study, fmt=fmt, file=file, rater=rater)
        name = exports.export_filename(study=study, fmt=fmt, rater=rater)
        files[name] = file.getvalue()
    for name in [name for name in files if name.endswith(".xlsx")]:
        files[name] = xlsx_parts(files[name])
    report = {"study": {}, "blinding": {}, "design": {}, "aggregation": {}}
    bundle = b"".join(report_bundle_chunks(study=study, report=report, report_html=""))
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        for name in archive.namelist():
            if name.endswith((".csv", ".md", ".txt")):
                files[f"bundle-{name}"] = archive.read(name)
    # The dictionary says when it was exported.
    stamp = re.compile(rb"exported \d{4}-\d\d-\d\dT[0-9:.]+Z")
    return {name: stamp.sub(b"exported <now>", data) for name, data in files.items()}


@pytest.mark.parametrize("unblinded", [False, True], ids=["blinded", "unblinded"])
def test_every_export_is_byte_for_byte_its_golden_copy(unblinded, settings):
    settings.TIME_ZONE = "UTC"
    study = golden_study()
    if unblinded:
        study = close_and_unblind(study)
        Study.objects.filter(pk=study.pk).update(unblinded_at=OPENED + timedelta(days=9))
        study.refresh_from_db()
    folder = GOLDEN / ("unblinded" if unblinded else "blinded")
    files = files_of(study)
    if os.environ.get("CONCORD_WRITE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
    expected = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert sorted(files) == sorted(expected)
    for name, data in files.items():
        assert data == expected[name], name


TRICKY = [
    "plain", " leading space", "trailing space ", "   ", "a & b < c > d", "=1+1", "+1", "-2",
    "@SUM(A1)", "\tTAB", "\rCR", "bell\x07 inside", "\x01", "x" * 40_000, "quote ' \" ",
    "Ünïcödé 日本語 ½", "line\nbreak", 0, 7, -3, 2.5, 1e17, 1 / 3, True, False,
    float("nan"), None, "",
]  # fmt: skip


@pytest.mark.parametrize("formulas", [True, False])
def test_the_excel_rows_are_written_as_openpyxl_writes_them(formulas):
    """Every kind of cell value, in rows of different lengths, against openpyxl itself."""
    values = [v for v in TRICKY if formulas or not (isinstance(v, str) and v[:1] in "=+-@\t\r")]
    rows = [["TC-ID", "Response", "Notes", "Rater"]]
    rows += [values[i : i + 1 + i % 5] for i in range(len(values))]
    rows += [[], [None, "", 3]]
    fast, plain = io.BytesIO(), io.BytesIO()
    export_xlsx.xlsx_write(iter(rows), fast)
    export_xlsx._openpyxl_write(iter(rows), plain, title="Worksheet")
    assert xlsx_parts(fast.getvalue()) == xlsx_parts(plain.getvalue())

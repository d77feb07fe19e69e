"""Everything a study's analysis yields, read as its coordinators and auditors read it: for
comparing a study before and after an identity erasure."""

import difflib
import io
import json
import re
import zipfile
from datetime import datetime

from django.db.models import F
from django.test import Client
from django.urls import reverse
from openpyxl import load_workbook

from agreement.models import StudyAgreement
from agreement.services.recompute import agreement_recompute
from annotation import exports
from studies.models import Membership, Study
from studies.selectors import study_protocol_fingerprint

MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def _masked(value, since: datetime):
    """``value`` with what changes on every reading masked: the moment a file was written
    or the statistics computed (any time after ``since``) and the pages' CSRF tokens."""
    if isinstance(value, bytes):
        try:
            return _masked(value.decode("utf-8"), since).encode("utf-8")
        except UnicodeDecodeError:
            return value
    if isinstance(value, dict):
        return {key: _masked(item, since) for key, item in value.items()}
    if not isinstance(value, str):
        return value

    def moment(match):
        written = datetime.fromisoformat(match.group().replace("Z", "+00:00"))
        return "<now>" if written >= since else match.group()

    return CSRF.sub('name="csrfmiddlewaretoken" value=""', MOMENT.sub(moment, value))


def _export(study: Study, fmt: str, rater: str | None = None):
    file = io.BytesIO()
    exports.export_write(study=study, fmt=fmt, file=file, rater=rater)
    if fmt == exports.WORKSHEET_XLSX:
        # The workbook's own metadata carries the time it was written: compare the cells.
        sheet = load_workbook(io.BytesIO(file.getvalue())).active
        return [list(row) for row in sheet.iter_rows(values_only=True)]
    return file.getvalue()


def _bundle(client: Client, study: Study) -> dict[str, bytes]:
    response = client.get(reverse("agreement:report_bundle", args=[study.slug]))
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        return {name: archive.read(name) for name in sorted(archive.namelist())}


def study_outputs(study: Study, *, since: datetime) -> dict:
    """The statistics (recomputed), the report page and bundle, every export file (each
    rater's worksheet too) and the protocol fingerprint; moments after ``since`` masked."""
    study.refresh_from_db()
    # A fresh run each time, as if something had asked for one (the request is counted).
    StudyAgreement.objects.get_or_create(study=study)
    StudyAgreement.objects.filter(study=study).update(requested=F("requested") + 1)
    assert agreement_recompute(study_id=study.pk)
    agreement = StudyAgreement.objects.get(study=study)
    client = Client()
    client.force_login(study.lead)
    report = client.get(reverse("agreement:report", args=[study.slug]))
    assert report.status_code == 200
    pseudonyms = study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym")
    outputs = {
        "statistics": json.dumps(agreement.result, sort_keys=True),
        "report": report.content.decode(),
        "bundle": _bundle(client, study),
        "fingerprint": study_protocol_fingerprint(study=study),
    }
    for fmt in exports.FORMATS:
        outputs[f"export {fmt}"] = _export(study, fmt)
    for pseudonym in pseudonyms.values_list("pseudonym", flat=True):
        for fmt in (exports.WORKSHEET_CSV, exports.WORKSHEET_XLSX):
            outputs[f"export {fmt} {pseudonym}"] = _export(study, fmt, rater=pseudonym)
    return _masked(outputs, since)


def differences(before: dict, after: dict) -> list[str]:
    return [
        key for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)
    ]


def explain(before: dict, after: dict) -> str:
    """The first lines that differ in each output that differs (for a failing assertion)."""

    lines = []
    for key in differences(before, after):
        old, new = before.get(key), after.get(key)
        if isinstance(old, dict):
            lines += [f"{key}/{name}" for name in differences(old, new or {})]
            old = {k: v for k, v in old.items() if (new or {}).get(k) != v}
            new = {k: v for k, v in (new or {}).items() if k in old}
        text = [str(old)[i : i + 100] for i in range(0, len(str(old)), 100)]
        text2 = [str(new)[i : i + 100] for i in range(0, len(str(new)), 100)]
        lines += [key, *list(difflib.unified_diff(text, text2, lineterm="", n=0))[:12]]
    return "\n".join(lines)

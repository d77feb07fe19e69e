"""``Concord``: one method per step of a study's lifecycle over the HTTP API (docs/api.md).

Names are ``<thing>_<action>``, as the server's services are. Every method returns the
API's JSON answer (typed in ``types.py``), a list with every page followed, or a pandas
DataFrame where the answer is a table (``*_table``). A refusal raises an ``ApiError``
subclass carrying the API's error (code, message, problems by field).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, cast
from urllib.parse import quote

import pandas as pd

from . import tables
from .errors import ConcordError, JobFailed, JobTimeout
from .transport import RetryPolicy, Transport, job_of
from .types import (
    Agreement,
    AnalysisPlan,
    CasesImported,
    ExportFormat,
    ExportJobFormat,
    Invitation,
    Job,
    Progress,
    Rater,
    Rubric,
    Study,
    StudyAction,
    TestCase,
    Unblinded,
)

FileLike = str | os.PathLike[str] | bytes | IO[bytes]


def _seg(value: str) -> str:
    """A path segment (a slug, a token, a uuid) as sent: nothing in it can leave its place."""
    return quote(str(value), safe="")


def _upload(file: FileLike, filename: str | None) -> tuple[str, Any]:
    """``(name, content)`` for a multipart upload from a path, bytes or an open binary file;
    the server tells the format by the name's extension."""
    if isinstance(file, bytes):
        if not filename:
            raise ConcordError("Give filename= with bytes: the server reads the format from it.")
        return filename, file
    if isinstance(file, str | os.PathLike):
        path = Path(file)
        return filename or path.name, path.read_bytes()
    name = filename or os.path.basename(getattr(file, "name", "") or "")
    if not name:
        raise ConcordError("Give filename= with an unnamed file: the server reads the format.")
    return name, file


class Concord:
    """A client for one Concord server and one token.

    ``Concord("https://concord.example.org", token="concord_...")``; both default to the
    ``CONCORD_URL`` and ``CONCORD_TOKEN`` environment variables.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        job_timeout: float = 600.0,
        job_poll: float = 1.0,
    ):
        url = url or os.environ.get("CONCORD_URL")
        token = token or os.environ.get("CONCORD_TOKEN")
        if not url or not token:
            raise ConcordError("Give the server's url and a token (or CONCORD_URL, CONCORD_TOKEN).")
        self.http = Transport(url, token, timeout=timeout, retry=retry)
        self.job_timeout, self.job_poll = job_timeout, job_poll

    def close(self) -> None:
        self.http.session.close()

    def __enter__(self) -> Concord:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _study(self, slug: str, rest: str = "") -> str:
        return f"studies/{_seg(slug)}/{rest}"

    def _started(self, response: Any, wait: bool) -> dict[str, Any]:
        """A 202's job, waited for if asked; any other answer as it is."""
        if response.status_code != 202:
            return response.json() if response.content else {}
        job = job_of(response, self.http)
        return self.job_wait(job) if wait else job

    def job_wait(self, job: Mapping[str, Any] | str, *, timeout: float | None = None) -> Any:
        """Wait for a job an answer started (its body or URL) to end; its final body."""
        return self.http.wait_job(
            dict(job) if isinstance(job, Mapping) else job,
            timeout=self.job_timeout if timeout is None else timeout,
            poll=self.job_poll,
        )

    # Studies ------------------------------------------------------------------------------

    def study_list(self) -> list[Study]:
        """The studies you coordinate."""
        return list(self.http.items("studies/"))

    def study_create(
        self,
        slug: str,
        name: str,
        *,
        description: str = "",
        rubric_preset: str = "reference",
        blinding_seed: int | None = None,
    ) -> Study:
        """A draft study you lead; ``rubric_preset`` a preset, a protocol or ``copy:<slug>``."""
        body: dict[str, Any] = {
            "slug": slug,
            "name": name,
            "description": description,
            "rubric_preset": rubric_preset,
        }
        if blinding_seed is not None:
            body["blinding_seed"] = blinding_seed
        # Not retried on a broken connection: a second create would be refused as a taken slug.
        return cast(Study, self.http.json("POST", "studies/", json=body))

    def study_get(self, slug: str) -> Study:
        return cast(Study, self.http.json("GET", self._study(slug)))

    def study_update(self, slug: str, **settings: Any) -> Study:
        """Change settings (``raters_per_item=3``, ``name=...``); protocol settings only
        until the study opens. Values are set, not added, so a retry is safe."""
        return cast(
            Study, self.http.json("PATCH", self._study(slug), json=settings, idempotent=True)
        )

    def study_status(
        self,
        slug: str,
        action: StudyAction,
        *,
        acknowledge_warnings: bool = False,
        confirm: bool = False,
    ) -> Study:
        """``pilot``, ``open``, ``close`` or ``reopen``; ``acknowledge_warnings`` opens
        although the blinding check found passages that may name a system; ``confirm``
        closes although ratings are left undone (refused with 409 and ``unfinished``
        otherwise)."""
        body: dict[str, Any] = {"action": action}
        if acknowledge_warnings:
            body["acknowledge_warnings"] = True
        if confirm:
            body["confirm"] = True
        return cast(Study, self.http.json("POST", self._study(slug, "status/"), json=body))

    def study_open(self, slug: str, *, acknowledge_warnings: bool = False) -> Study:
        return self.study_status(slug, "open", acknowledge_warnings=acknowledge_warnings)

    def study_close(self, slug: str, *, confirm: bool = False) -> Study:
        """Close; with ratings left undone the server asks for ``confirm=True``."""
        return self.study_status(slug, "close", confirm=confirm)

    # Rubric, rules, profile questions ---------------------------------------------------

    def rubric_presets(self) -> dict[str, Rubric]:
        return cast(dict[str, Rubric], self.http.json("GET", "rubric-presets/")["presets"])

    def rubric_get(self, slug: str) -> Rubric:
        return cast(Rubric, self.http.json("GET", self._study(slug, "rubric/")))

    def rubric_set(self, slug: str, definition: Rubric | Mapping[str, Any]) -> Rubric:
        """Replace the rubric (all or nothing, until the study opens; docs/rubric-format.md)."""
        return cast(
            Rubric, self.http.json("PUT", self._study(slug, "rubric/"), json=dict(definition))
        )

    def adjudication_rules_get(self, slug: str) -> dict[str, Any]:
        return self.http.json("GET", self._study(slug, "adjudication-rules/"))

    def adjudication_rules_set(self, slug: str, rules: list[Mapping[str, Any]]) -> dict[str, Any]:
        return self.http.json(
            "PUT", self._study(slug, "adjudication-rules/"), json={"rules": list(rules)}
        )

    def profile_questions_get(self, slug: str) -> dict[str, Any]:
        return self.http.json("GET", self._study(slug, "profile-questions/"))

    def profile_questions_set(
        self, slug: str, questions: list[Mapping[str, Any]]
    ) -> dict[str, Any]:
        return self.http.json(
            "PUT", self._study(slug, "profile-questions/"), json={"questions": list(questions)}
        )

    # Test cases ---------------------------------------------------------------------------

    def cases_list(self, slug: str) -> list[TestCase]:
        return list(self.http.items(self._study(slug, "cases/"), {"page_size": 500}))

    def cases_table(self, slug: str) -> pd.DataFrame:
        return tables.frame(self.cases_list(slug), index="id")

    def cases_import(
        self,
        slug: str,
        cases: Iterable[Mapping[str, Any]] | None = None,
        *,
        file: FileLike | None = None,
        filename: str | None = None,
        wait: bool = True,
    ) -> CasesImported:
        """Import test cases, all or nothing: ``cases`` as objects (JSONL lines: ``id``,
        ``prompt``, ``responses`` by system, ...) or a ``.csv``/``.jsonl``/``.xlsx`` ``file``.
        A server that runs a large import as a job answers 202: the job is waited for
        (``wait=False`` returns it) and its final body returned."""
        if (cases is None) == (file is None):
            raise ConcordError("Give either cases or file.")
        path = self._study(slug, "cases/")
        if file is not None:
            response = self.http.request("POST", path, files={"file": _upload(file, filename)})
        else:
            response = self.http.request("POST", path, json={"cases": list(cases or [])})
        return cast(CasesImported, self._started(response, wait))

    # People -------------------------------------------------------------------------------

    def raters_list(self, slug: str) -> list[Rater]:
        return list(self.http.items(self._study(slug, "raters/"), {"page_size": 500}))

    def rater_invite(self, slug: str, username: str, *, role: str = "rater") -> str:
        """Invite an existing account (it joins once the person accepts); the answer is the
        same whether or not the account exists. Repeating it is harmless."""
        body = {"username": username, "role": role}
        answer = self.http.json("POST", self._study(slug, "raters/"), json=body, idempotent=True)
        return str(answer.get("message", ""))

    def invitations_list(self, slug: str) -> list[Invitation]:
        return list(self.http.items(self._study(slug, "invitations/"), {"page_size": 500}))

    def invitation_create(
        self, slug: str, *, note: str = "", days: int | None = None, role: str | None = None
    ) -> Invitation:
        """A new invitation link; ``link`` is in this answer only."""
        body: dict[str, Any] = {"note": note}
        if days is not None:
            body["days"] = days
        if role is not None:
            body["role"] = role
        return cast(
            Invitation, self.http.json("POST", self._study(slug, "invitations/"), json=body)
        )

    def invitation_revoke(self, slug: str, token_hash: str) -> None:
        """Withdraw an unused link. The server deletes it, so a second revoke is a
        ``NotFound``: not retried on an ambiguous failure, where it would say just that."""
        path = self._study(slug, f"invitations/{_seg(token_hash)}/revoke/")
        self.http.request("POST", path)

    def invitation_accept(self, token: str) -> dict[str, Any]:
        """Accept an invitation with its token (the invitee's own client)."""
        return self.http.json("POST", f"invitations/{_seg(token)}/accept/", json={})

    def account_create(self, study: str, username: str, *, email: str) -> dict[str, Any]:
        """An administrator makes a rater's account for a study: its ``pseudonym``; the
        link to choose a password is e-mailed to ``email``, never returned."""
        body: dict[str, Any] = {"study": study, "username": username, "email": email}
        return self.http.json("POST", "accounts/", json=body)

    def onboarding(self, slug: str) -> dict[str, Any]:
        """Your own onboarding steps in a study, as a rater."""
        return self.http.json("GET", self._study(slug, "onboarding/"))

    def consent_give(
        self,
        slug: str,
        *,
        agree: bool = True,
        prior_knowledge: bool | None = None,
        disclosure: str | None = None,
    ) -> dict[str, Any]:
        """Consent to the study's information sheet, as a rater, with the disclosure answer."""
        body: dict[str, Any] = {"agree": agree, "prior_knowledge": prior_knowledge}
        if disclosure is not None:
            body["disclosure"] = disclosure
        return self.http.json("POST", self._study(slug, "consent/"), json=body)

    # Assignment, progress -----------------------------------------------------------------

    def assign(self, slug: str, *, wait: bool = True) -> Job:
        """Assign cases under the study's design (safe to repeat, so retried). A small design
        answers at once (``created`` per rater); a large one runs as a job, waited for
        unless ``wait=False``."""
        response = self.http.request("POST", self._study(slug, "assign/"), idempotent=True)
        return cast(Job, self._started(response, wait))

    def progress(self, slug: str) -> Progress:
        return cast(Progress, self.http.json("GET", self._study(slug, "progress/")))

    def progress_table(self, slug: str) -> pd.DataFrame:
        """Each rater's progress, indexed by pseudonym: ``status``, ``done``, ``skipped``,
        ``total``."""
        return tables.frame(self.progress(slug).get("raters", []), index="pseudonym")

    def welfare_get(self, slug: str) -> dict[str, Any]:
        return self.http.json("GET", self._study(slug, "welfare/"))

    def welfare_set(self, slug: str, **fields: Any) -> dict[str, Any]:
        return self.http.json("PUT", self._study(slug, "welfare/"), json=fields)

    def comments(self, slug: str, **filters: Any) -> Iterator[dict[str, Any]]:
        """The comments digest, newest first, every page (keyset) followed."""
        params = {k: v for k, v in filters.items() if v is not None}
        return self.http.items(self._study(slug, "comments/"), params)

    def comments_mark_read(self, slug: str, keys: list[str]) -> int:
        path = self._study(slug, "comments/read/")
        return int(self.http.json("POST", path, json={"keys": keys}, idempotent=True)["marked"])

    # Results ------------------------------------------------------------------------------

    def agreement(self, slug: str) -> Agreement:
        """The stored result with its freshness (``stale``, ``intervals_pending``)."""
        return cast(Agreement, self.http.json("GET", self._study(slug, "agreement/")))

    def agreement_wait(
        self, slug: str, *, intervals: bool = True, timeout: float | None = None
    ) -> Agreement:
        """The result once it is current (not ``stale``; with ``intervals``, its bootstrap
        intervals stored too), polling as a job is; ``JobTimeout`` past ``timeout`` s."""
        limit = self.job_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            result = self.agreement(slug)
            pending = result["stale"] or (intervals and result["intervals_pending"])
            if not pending and result["computed_at"]:
                return result
            if time.monotonic() >= deadline:
                raise JobTimeout(
                    {"state": "stale", "job": self.http.url(self._study(slug, "agreement/"))}, limit
                )
            time.sleep(self.job_poll)

    def agreement_table(self, slug: str, *, wait: bool = False) -> pd.DataFrame:
        """One row per dimension, indexed by its key (alpha, its interval, counts, ...);
        ``wait`` for a current result first."""
        return tables.agreement_frame(self.agreement_wait(slug) if wait else self.agreement(slug))

    def analysis_plan(self, slug: str) -> AnalysisPlan:
        return cast(AnalysisPlan, self.http.json("GET", self._study(slug, "analysis-plan/")))

    def analysis_plan_update(self, slug: str, **fields: Any) -> AnalysisPlan:
        """Change the plan: ``aggregation`` ({dimension key: rule}), ``min_ratings``, and
        the primary question and stratum shares where the server takes them."""
        path = self._study(slug, "analysis-plan/")
        return cast(AnalysisPlan, self.http.json("PATCH", path, json=fields, idempotent=True))

    def sample_size(self, slug: str, which: str | None = None, **inputs: float) -> dict[str, Any]:
        """The sample-size calculator: with no ``which``, the sample's size and each
        question's inputs; else how many cases ``which`` needs for ``inputs`` (``p1``,
        ``tie_share``, ``difference``, ``sd``, ``alpha``, ``power``). A computation only."""
        path = self._study(slug, "sample-size/")
        if which is None:
            return self.http.json("GET", path)
        body = {"which": which, **inputs}
        return self.http.json("POST", path, json=body, idempotent=True)

    def qc_flags(self, slug: str) -> dict[str, Any]:
        """QC flags per rater (by pseudonym) with the actions open, and the decisions taken."""
        return self.http.json("GET", self._study(slug, "qc/flags/"))

    def qc_flags_table(self, slug: str) -> pd.DataFrame:
        return tables.frame(self.qc_flags(slug).get("raters", []), index="rater")

    def qc_decide(self, slug: str, *, rater: str, action: str, reason: str) -> dict[str, Any]:
        """An administrator's decision about a rater (``R-03``), with the reason."""
        body = {"rater": rater, "action": action, "reason": reason}
        return self.http.json("POST", self._study(slug, "qc/decisions/"), json=body)

    def export(self, slug: str, fmt: ExportFormat, *, rater: str | None = None) -> bytes:
        """An export's bytes, as the results page gives them."""
        params = {"rater": rater} if rater else None
        path = self._study(slug, f"exports/{_seg(fmt)}/")
        return self.http.request("GET", path, params=params).content

    def export_to(
        self, slug: str, fmt: ExportFormat, path: str | os.PathLike[str], **kwargs: Any
    ) -> Path:
        """An export written to ``path``, streamed in chunks."""
        target = Path(path)
        url = self._study(slug, f"exports/{_seg(fmt)}/")
        response = self.http.request("GET", url, stream=True, **kwargs)
        with response, target.open("wb") as out:
            for chunk in response.iter_content(chunk_size=1 << 16):
                out.write(chunk)
        return target

    def export_prepare(
        self, slug: str, fmt: ExportJobFormat, *, wait: bool = True
    ) -> dict[str, Any]:
        """Prepare a large export as a job (the worksheet as CSV or Excel, the long table,
        or the report bundle); its job's body, waited for unless ``wait`` is false. Once
        done, ``file`` (name, size, SHA-256) and ``download`` (its URL). Safe to repeat:
        a request while one runs answers that one."""
        path = self._study(slug, f"exports/{_seg(fmt)}/job/")
        return self._started(self.http.request("POST", path, idempotent=True), wait)

    def export_prepared_to(
        self,
        slug: str,
        fmt: ExportJobFormat,
        path: str | os.PathLike[str],
        *,
        timeout: float | None = None,
    ) -> Path:
        """Prepare an export as a job, wait for it (``timeout`` s), and download its file to
        ``path``, streamed and checked against its SHA-256: the direct export's bytes."""
        job = self.job_wait(self.export_prepare(slug, fmt, wait=False), timeout=timeout)
        target = Path(path)
        digest = hashlib.sha256()
        response = self.http.request("GET", job["download"], stream=True)
        with response, target.open("wb") as out:
            for chunk in response.iter_content(chunk_size=1 << 16):
                out.write(chunk)
                digest.update(chunk)
        if digest.hexdigest() != job["file"]["sha256"]:
            raise ConcordError(f"{target.name}: the download does not match its SHA-256.")
        return target

    def export_table(
        self, slug: str, fmt: ExportFormat = "long-csv", *, rater: str | None = None
    ) -> pd.DataFrame:
        """A CSV export as a DataFrame (columns as text; see ``tables.csv_frame``)."""
        if not fmt.endswith("-csv"):
            raise ConcordError(f"{fmt} is not a CSV export.")
        return tables.csv_frame(self.export(slug, fmt, rater=rater))

    def unblind(self, slug: str, *, reason: str) -> Unblinded:
        """Unblind a closed study (the lead only; final, and recorded with the reason)."""
        body = {"confirm": True, "reason": reason}
        return cast(Unblinded, self.http.json("POST", self._study(slug, "unblind/"), json=body))

    # Ratings from elsewhere, judges, ranking, report --------------------------------------

    def ratings_import(
        self,
        slug: str,
        file: FileLike,
        *,
        filename: str | None = None,
        check: bool = False,
        wait: bool = True,
    ) -> dict[str, Any]:
        """Import ratings made outside Concord, by system (long format; the lead only), or
        only ``check`` the file. The server answers 202 with a job: waited for unless
        ``wait=False``; ``JobFailed`` carries its ``problems`` (row, column, message)."""
        files: dict[str, Any] = {"file": _upload(file, filename)}
        if check:
            files["check"] = (None, "true")
        response = self.http.request("POST", self._study(slug, "ratings-import/"), files=files)
        return self._started(response, wait)

    def ratings_import_checked(self, slug: str, check_job: str, *, wait: bool = True) -> Any:
        """Import the file of your own check job that passed (its uuid)."""
        path = self._study(slug, "ratings-import/")
        response = self.http.request("POST", path, json={"check_job": check_job})
        return self._started(response, wait)

    def ratings_import_job(self, slug: str, job_uuid: str) -> dict[str, Any]:
        return self.http.json("GET", self._study(slug, f"ratings-import/{_seg(job_uuid)}/"))

    def judges_list(self, slug: str) -> list[dict[str, Any]]:
        """The study's judges, each with its calibration summary."""
        return list(self.http.items(self._study(slug, "judges/")))

    def judges_import(
        self,
        slug: str,
        outputs: Iterable[Mapping[str, Any]] | None = None,
        *,
        file: FileLike | None = None,
        filename: str | None = None,
        template: str | None = None,
    ) -> dict[str, Any]:
        """Import judge outputs, all or nothing: ``outputs`` as ``{"case_id", "order",
        "judge", "output"}`` objects or a ``.jsonl``/``.csv``/``.xlsx`` ``file``; the
        ``template`` says how verdicts are read (ties allowed or not): a built-in's name
        (``reference``, ``reference-tie``) or the ``uuid`` of one of the study's own."""
        if (outputs is None) == (file is None):
            raise ConcordError("Give either outputs or file.")
        path = self._study(slug, "judges/")
        if file is not None:
            files: dict[str, Any] = {"file": _upload(file, filename)}
            if template is not None:
                files["template"] = (None, template)
            return self.http.json("POST", path, files=files)
        body: dict[str, Any] = {"outputs": list(outputs or [])}
        if template is not None:
            body["template"] = template
        return self.http.json("POST", path, json=body)

    def judge_outputs_table(self, slug: str) -> pd.DataFrame:
        """Every imported judge output (the judges page's CSV) as a DataFrame."""
        data = self.http.request("GET", self._study(slug, "judges/outputs/")).content
        return tables.csv_frame(data)

    def judge_templates(self, slug: str) -> dict[str, Any]:
        """The built-in judge prompt templates and the study's."""
        return self.http.json("GET", self._study(slug, "judges/template/"))

    def judge_template_save(
        self,
        slug: str,
        *,
        name: str,
        text: str,
        allow_tie: bool = False,
        uuid: str | None = None,
    ) -> dict[str, Any]:
        """Save a study template (replaced by ``name``, or by ``uuid``); ``allow_tie`` lets
        a judge answer ``[[C]]``, read as a tie. The answer lists every template, this one
        with its ``uuid``: the name other calls give a study's own template by."""
        body: dict[str, Any] = {"name": name, "text": text, "allow_tie": allow_tie}
        if uuid is not None:
            body["uuid"] = uuid
        return self.http.json("PUT", self._study(slug, "judges/template/"), json=body)

    def judge_prompts(self, slug: str, *, template: str | None = None) -> list[dict[str, Any]]:
        """The prompts for a judge, one ``{"case_id", "order", "prompt"}`` per JSONL line;
        ``template`` a built-in's name or the ``uuid`` of one of the study's own."""
        params = {"template": template} if template else None
        path = self._study(slug, "judges/prompts/")
        data = self.http.request("GET", path, params=params).content
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]

    def judge_calibration(
        self, slug: str, judge_uuid: str, *, compute: bool = False
    ) -> dict[str, Any]:
        """A judge's calibration as kept; ``compute=True`` computes it first (a job, waited
        for: ``JobFailed`` if it failed)."""
        path = self._study(slug, f"judges/{_seg(judge_uuid)}/calibration/")
        if not compute:
            return self.http.json("GET", path)
        response = self.http.request("POST", path, idempotent=True)
        body = response.json()
        if response.status_code == 202:
            body = self._poll(path, pending={"running"})
        if body.get("state") in ("failed", "stopped"):
            raise JobFailed(body.get("job") or body)
        return body

    def ranking(self, slug: str, *, compute: bool = False) -> dict[str, Any]:
        """The ranking (``state``: computed, not_computed, computing, unavailable with its
        ``reason``); ``compute=True`` starts its job first and waits for it."""
        path = self._study(slug, "ranking/")
        if not compute:
            return self.http.json("GET", path)
        response = self.http.request("POST", path, idempotent=True)
        body = response.json()
        if response.status_code == 202:
            body = self._poll(path, pending={"computing"})
        if body.get("state") == "failed":
            raise JobFailed({**(body.get("job") or {}), "problem": body.get("reason", "")})
        return body

    def _poll(self, path: str, *, pending: set[str]) -> dict[str, Any]:
        """GET ``path`` until its ``state`` is no longer one of ``pending``."""
        deadline = time.monotonic() + self.job_timeout
        while True:
            time.sleep(self.job_poll)
            body = self.http.json("GET", path)
            if body.get("state") not in pending:
                return body
            if time.monotonic() >= deadline:
                raise JobTimeout({**body, "job": self.http.url(path)}, self.job_timeout)

    def report(self, slug: str) -> dict[str, Any]:
        return self.http.json("GET", self._study(slug, "report/"))

    def report_bundle(self, slug: str) -> bytes:
        """The report's bundle, a zip file's bytes."""
        return self.http.request("GET", self._study(slug, "report/bundle/")).content

    # Webhooks -----------------------------------------------------------------------------

    def webhooks_list(self, slug: str) -> list[dict[str, Any]]:
        return list(self.http.items(self._study(slug, "webhooks/")))

    def webhook_create(
        self,
        slug: str,
        url: str,
        events: list[str],
        *,
        milestone_every: int | None = None,
    ) -> dict[str, Any]:
        """Register a URL for the study's ``events`` (``rating.milestone``,
        ``agreement.recomputed``, ``study.closed``, ``analysis.ready``, ``monitor.changed``;
        the lead only); the answer is ``{"webhook": {"id", ...}, "secret"}``, the signing
        secret shown this once."""
        body: dict[str, Any] = {"url": url, "events": list(events)}
        if milestone_every is not None:
            body["milestone_every"] = milestone_every
        return self.http.json("POST", self._study(slug, "webhooks/"), json=body)

    def webhook_get(self, slug: str, uuid: str) -> dict[str, Any]:
        return self.http.json("GET", self._study(slug, f"webhooks/{_seg(uuid)}/"))

    def webhook_delete(self, slug: str, uuid: str) -> None:
        """Remove a webhook with its deliveries. A second delete is a ``NotFound``, so it is
        not retried on an ambiguous failure, where it would say just that."""
        path = self._study(slug, f"webhooks/{_seg(uuid)}/")
        self.http.request("DELETE", path, idempotent=False)

    def webhook_deliveries(self, slug: str, uuid: str) -> list[dict[str, Any]]:
        """A webhook's deliveries, newest first, each with its attempts."""
        return list(self.http.items(self._study(slug, f"webhooks/{_seg(uuid)}/deliveries/")))

    def webhook_replay(self, slug: str, uuid: str, delivery_uuid: str) -> dict[str, Any]:
        """Send a delivery's event again (a new delivery with the same event id)."""
        path = self._study(slug, f"webhooks/{_seg(uuid)}/deliveries/{_seg(delivery_uuid)}/replay/")
        return self.http.json("POST", path)

    # A rater's own ------------------------------------------------------------------------

    def my_assignments(self) -> list[dict[str, Any]]:
        """Your own studies as a rater, each with its cases' status."""
        return list(self.http.json("GET", "me/assignments/")["studies"])

"""The HTTP layer: one ``requests`` session, the token, retries with backoff, pages, jobs.

What may be retried (docs/api.md says the API has no idempotency keys):
- a 429 for any request: the throttle refuses before the endpoint runs, so nothing was done;
- a request that never reached the server (the connection was refused or timed out while
  connecting), for any request;
- a 502, 503 or 504, or a connection that broke after the request was sent, only for a
  request that is safe to repeat: GET, HEAD, PUT, DELETE, and the POSTs and PATCHes the
  API documents as idempotent (the client's methods say which).
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import requests
from urllib3.exceptions import NewConnectionError

from .errors import ApiError, JobFailed, JobTimeout, TransportError, error_class

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
RETRY_STATUSES = frozenset({429, 502, 503, 504})
# A job's states while it works, and when it has ended (jobs.models.Job.State).
JOB_ENDED = frozenset({"done", "failed", "stopped"})
# Bounds on following pages, so a server answering in a loop cannot hold a pipeline forever.
MAX_PAGES = 10_000


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` tries in all; the n-th wait is ``backoff * 2**n`` seconds (at most
    ``max_wait``) with up to a quarter added at random, or the server's ``Retry-After``
    when it sends one (also at most ``max_wait``)."""

    attempts: int = 5
    backoff: float = 0.5
    max_wait: float = 30.0

    def wait(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_wait)
        base = min(self.backoff * 2**attempt, self.max_wait)
        return base + random.uniform(0, base / 4)


NO_RETRIES = RetryPolicy(attempts=1)


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def _never_sent(error: requests.RequestException) -> bool:
    """The request cannot have reached the server: refused or timed out while connecting."""
    if isinstance(error, requests.ConnectTimeout):
        return True
    if isinstance(error, requests.ConnectionError):
        reason = getattr(error.args[0], "reason", None) if error.args else None
        return isinstance(reason, NewConnectionError)
    return False


def api_base(url: str) -> str:
    """The API's base address from a site's address or the API's own (``.../api/v1/``)."""
    url = url.rstrip("/") + "/"
    return url if url.endswith("/api/v1/") else urljoin(url, "api/v1/")


class Transport:
    """Requests to one Concord API with one token."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.base = api_base(base_url)
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.session.headers.setdefault("Accept", "application/json")
        self.session.headers["User-Agent"] = "concord-client/0.1 (+python-requests)"
        self._sleep = sleep

    def url(self, path: str) -> str:
        """An absolute address: ``path`` relative to the API's base, or already absolute
        (a ``next`` page or a job's URL, as the API gives them)."""
        return urljoin(self.base, path.lstrip("/") if "://" not in path else path)

    def request(
        self,
        method: str,
        path: str,
        *,
        idempotent: bool | None = None,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        files: Mapping[str, Any] | None = None,
        stream: bool = False,
    ) -> requests.Response:
        """One request, retried as the module says; an ``ApiError`` for a refusal."""
        method = method.upper()
        safe = method in IDEMPOTENT_METHODS if idempotent is None else idempotent
        url = self.url(path)
        attempt = 0
        while True:
            attempt += 1
            last = attempt >= self.retry.attempts
            _rewind(files)
            try:
                response = self.session.request(
                    method,
                    url,
                    json=json,
                    params=params,
                    files=files,
                    timeout=self.timeout,
                    stream=stream,
                )
            except requests.RequestException as error:
                if last or not (safe or _never_sent(error)):
                    raise TransportError(f"{method} {url}: {error}") from error
                self._sleep(self.retry.wait(attempt - 1))
                continue
            status = response.status_code
            if status in RETRY_STATUSES and not last and (status == 429 or safe):
                wait = retry_after_seconds(response.headers.get("Retry-After"))
                response.close()
                self._sleep(self.retry.wait(attempt - 1, wait))
                continue
            if response.status_code >= 400:
                raise self._error(response, method, url)
            return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def _error(self, response: requests.Response, method: str, url: str) -> ApiError:
        status = response.status_code
        try:
            body = response.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict):
            # Not the API's shape (a proxy's page, say): the status and the start of the text.
            text = response.text[:300].strip() if response.content else ""
            error = {"code": "http_error", "message": text or response.reason or str(status)}
        return error_class(status)(
            status=status,
            code=str(error.get("code", "error")),
            message=str(error.get("message", "")),
            problems=[str(p) for p in error.get("problems") or []],
            method=method,
            url=url,
            body=body,
        )

    # Pages ------------------------------------------------------------------------------

    def pages(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[dict]:
        """Each page of a list: ``{"count", "next", "previous", "results"}``, or the comments
        digest's ``{"next", "results"}``; ``next`` followed until it is null."""
        url: str | None = path
        query = dict(params or {})
        for _ in range(MAX_PAGES):
            if url is None:
                return
            page = self.json("GET", url, params=query or None)
            yield page
            # The next page's address carries the query already.
            url, query = (page.get("next") if isinstance(page, dict) else None), {}
        raise TransportError(f"{path}: more than {MAX_PAGES} pages; stopped following them.")

    def items(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """Every item of a list, page after page (a plain JSON list as it is)."""
        for page in self.pages(path, params):
            if isinstance(page, list):
                yield from page
                return
            yield from page.get("results", [])

    # Jobs -------------------------------------------------------------------------------

    def wait_job(
        self,
        job: dict[str, Any] | str,
        *,
        timeout: float = 600.0,
        poll: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> dict[str, Any]:
        """Poll a job (its body with ``job``, its URL) until it has ended; its last body.
        ``JobFailed`` if it failed or was stopped, ``JobTimeout`` past ``timeout`` s."""
        body: dict[str, Any] = {"job": job} if isinstance(job, str) else dict(job)
        url = body.get("job")
        if not isinstance(url, str):
            raise TransportError(f"A job without its address: {body!r}")
        deadline = clock() + timeout
        while body.get("state") not in JOB_ENDED:
            if clock() >= deadline:
                raise JobTimeout(body, timeout)
            if "state" in body:
                self._sleep(poll)
            body = {**self.json("GET", url), "job": url}
        if body["state"] != "done":
            raise JobFailed(body)
        return body


def _rewind(files: Mapping[str, Any] | None) -> None:
    """A file sent again on a retry is sent from its start."""
    for value in (files or {}).values():
        handle = value[1] if isinstance(value, tuple) else value
        if hasattr(handle, "seek"):
            handle.seek(0)


def job_of(response: requests.Response, base: Transport) -> dict[str, Any]:
    """The job a 202 answer started: its body, with ``job`` its absolute URL (from the body's
    ``job`` or ``url``, else the ``Location`` header)."""
    body = response.json() if response.content else {}
    if not isinstance(body, dict):
        body = {}
    url = body.get("job") if isinstance(body.get("job"), str) else body.get("url")
    if not isinstance(url, str):
        url = response.headers.get("Location")
    if not isinstance(url, str):
        raise ApiError(
            status=response.status_code,
            code="no_job",
            message="The answer started a job but did not say where to follow it.",
            body=body,
        )
    return {**body, "job": base.url(url)}

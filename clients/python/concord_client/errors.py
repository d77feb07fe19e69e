"""The client's exceptions: each refusal of the API as one, carrying the API's JSON error.

Every refusal from Concord has one shape (docs/api.md, "Errors"):
``{"error": {"status", "code", "message", "problems": ["field: message", ...]}}``.
``ApiError`` keeps all of it, and splits each problem into its field and message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# "cases[2].prompt: ..." or "raters_per_item: ..." (a field's name has no spaces); a
# problem such as "Line 2, prompt: ..." or a sentence names no field.
_FIELD = re.compile(r"^(?P<field>[A-Za-z_][\w.\[\]-]*): (?P<message>.+)$", re.DOTALL)


class ConcordError(Exception):
    """Anything this client raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One line of an error's ``problems``: the field it names (or None) and what is wrong."""

    field: str | None
    message: str

    @classmethod
    def parse(cls, text: str) -> Problem:
        match = _FIELD.match(text)
        if match:
            return cls(field=match["field"], message=match["message"])
        return cls(field=None, message=text)


class ApiError(ConcordError):
    """The API refused a request. ``status`` (HTTP), ``code`` (``invalid``, ``refused``,
    ``not_found``, ...), ``message`` and ``problems`` are the API's own; ``field`` is the
    first field a problem names, ``fields`` every named field with its messages."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        problems: list[str] | None = None,
        method: str = "",
        url: str = "",
        body: Any = None,
    ):
        self.status, self.code, self.message = status, code, message
        self.problems: list[str] = list(problems or [])
        self.method, self.url, self.body = method, url, body
        super().__init__(self._text())

    @property
    def parsed(self) -> list[Problem]:
        return [Problem.parse(p) for p in self.problems]

    @property
    def fields(self) -> dict[str, list[str]]:
        named: dict[str, list[str]] = {}
        for problem in self.parsed:
            if problem.field is not None:
                named.setdefault(problem.field, []).append(problem.message)
        return named

    @property
    def field(self) -> str | None:
        return next(iter(self.fields), None)

    def _text(self) -> str:
        where = f" ({self.method} {self.url})" if self.method else ""
        lines = [f"{self.status} {self.code}: {self.message}{where}"]
        lines += [f"  - {problem}" for problem in self.problems[:20]]
        if len(self.problems) > 20:
            lines.append(f"  ... and {len(self.problems) - 20} more")
        return "\n".join(lines)


class BadRequest(ApiError):
    """400: the body cannot be read, a field is wrong (``invalid``), or a service said no
    (``refused``). Nothing was written."""


class AuthenticationFailed(ApiError):
    """401: no token, or a token that is revoked, unknown or its owner's account inactive."""


class PermissionDenied(ApiError):
    """403: a member of the study whose role does not allow this."""


class NotFound(ApiError):
    """404: no such study (or not one you take part in), object or endpoint."""


class Conflict(ApiError):
    """409: the object changed since it was read (a stale version)."""


class TooLarge(ApiError):
    """413: the body is over the API's limit."""


class Throttled(ApiError):
    """429 after every retry: too many requests for this token."""


class ServerError(ApiError):
    """5xx after every retry (for requests that may be retried): a fault of the server."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    429: Throttled,
}


def error_class(status: int) -> type[ApiError]:
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, ApiError)


class TransportError(ConcordError):
    """The server could not be reached, or the connection broke, after every retry."""


class JobFailed(ConcordError):
    """A job the API started (an Assign, an import) ended ``failed`` or ``stopped``."""

    def __init__(self, job: dict[str, Any]):
        self.job = job
        self.state = str(job.get("state"))
        self.problem = job.get("problem") or job.get("error") or ""
        # A ratings import's problems, each {"row", "column", "message"}.
        self.problems: list[Any] = list(job.get("problems") or [])
        reason = self.problem or "; ".join(_problem_text(p) for p in self.problems[:5])
        super().__init__(f"The job ended {self.state}: {reason or 'no reason given'}")


def _problem_text(problem: Any) -> str:
    if isinstance(problem, dict):
        where = ", ".join(f"{k} {problem[k]}" for k in ("row", "column") if problem.get(k))
        return f"{where}: {problem.get('message', '')}" if where else str(problem.get("message"))
    return str(problem)


class JobTimeout(ConcordError):
    """A job was still running when the client stopped waiting (it goes on on the server)."""

    def __init__(self, job: dict[str, Any], seconds: float):
        self.job = job
        super().__init__(
            f"The job was still {job.get('state')} after {seconds:g} s; "
            f"it goes on on the server: {job.get('job') or ''}"
        )

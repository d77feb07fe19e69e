"""The shapes of the API's main answers, as TypedDicts (the served schema has them all).

``total=False`` where an answer may grow fields; a client reading a field the server does
not send gets a KeyError, never a wrong value.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

StudyAction = Literal["pilot", "open", "close", "reopen"]
Role = Literal["rater", "adjudicator", "coordinator"]
ExportFormat = Literal[
    "worksheet-csv",
    "worksheet-xlsx",
    "long-csv",
    "dictionary-md",
    "key-csv",
    "gold-csv",
    "profiles-csv",
    "skips-csv",
]
# The exports a job prepares as a file (``Concord.export_prepare``).
ExportJobFormat = Literal["worksheet-csv", "worksheet-xlsx", "long-csv", "bundle"]
JobState = Literal["running", "done", "failed", "stopped"]


class Study(TypedDict, total=False):
    slug: str
    name: str
    description: str
    status: str
    lead: str
    rubric: str
    transitions: list[str]
    raters_per_item: int
    raters_per_item_max: int | None
    blinding_seed: int
    protocol_fingerprint: str
    created_at: str
    opened_at: str | None
    closed_at: str | None
    unblinded_at: str | None


class Dimension(TypedDict, total=False):
    key: str
    name: str
    kind: str
    level: str
    config: dict[str, Any]


class Rubric(TypedDict, total=False):
    name: str
    description: str
    dimensions: list[Dimension]


class TestCase(TypedDict, total=False):
    id: str
    position: int
    prompt: str
    context: str
    stratum: str
    content_warning: str
    purpose: str


class IdentityMentions(TypedDict):
    count: int
    listed: list[dict[str, str]]


class CasesImported(TypedDict, total=False):
    imported: int
    systems: list[str]
    strata: dict[str, int]
    content_warnings: int
    identity_mentions: IdentityMentions


class Rater(TypedDict):
    pseudonym: str
    status: str
    done: int
    skipped: int
    total: int


class Invitation(TypedDict, total=False):
    token_hash: str
    role: str
    note: str
    personal: bool
    state: str
    created_at: str
    expires_at: str
    link: str  # only in the answer that created it


class Job(TypedDict, total=False):
    job: str  # its URL
    state: JobState
    stage: str
    done: int
    total: int
    created: dict[str, int]
    problem: str
    design: str


class Progress(TypedDict, total=False):
    status: str
    cases: int
    systems: list[str]
    assigned: int
    started: int
    submitted: int
    skips: dict[str, Any]
    raters: list[Rater]


class Agreement(TypedDict):
    computed_at: str | None
    stale: bool
    intervals_pending: bool
    ratings: int
    result: dict[str, Any]


class AnalysisPlan(TypedDict, total=False):
    primary_measure: str
    stratum_shares: str
    aggregation: dict[str, str]
    min_ratings: int
    min_ratings_set: bool
    min_ratings_default: int
    questions: list[dict[str, Any]]


class Unblinded(TypedDict):
    status: str
    unblinded_at: str

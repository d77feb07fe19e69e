"""The API's tables as pandas DataFrames: rows of JSON objects, CSV exports, nested results."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd


def frame(rows: Iterable[Mapping[str, Any]], *, index: str | None = None) -> pd.DataFrame:
    """One row per object; nested objects spread into ``parent.child`` columns."""
    rows = list(rows)
    table = pd.json_normalize(rows) if rows else pd.DataFrame()
    if index is not None and index in table.columns:
        table = table.set_index(index)
    return table


def csv_frame(data: bytes) -> pd.DataFrame:
    """A CSV export as the API sends it (UTF-8, a byte-order mark if any), every column read
    as text so that identifiers such as ``007`` or ``R-01`` stay as written; convert the
    columns you compute on (``pd.to_numeric``)."""
    if not data:
        return pd.DataFrame()
    return pd.read_csv(
        io.BytesIO(data), encoding="utf-8-sig", dtype=str, keep_default_na=False, na_values=[""]
    )


def scalars(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A result's numbers and texts, nested objects flattened with ``.``; lists left out
    (a matrix such as Cohen's pairwise kappas is read from the result itself)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(scalars(value, f"{name}."))
        elif not isinstance(value, list):
            out[name] = value
    return out


def agreement_frame(agreement: Mapping[str, Any]) -> pd.DataFrame:
    """The agreement result's dimensions, one row each, indexed by the dimension's key:
    ``alpha`` and its interval, the counts, Fleiss' kappa, Gwet's and the ICC's figures."""
    result = agreement.get("result") or {}
    rows = [scalars(d) for d in result.get("dimensions") or [] if isinstance(d, Mapping)]
    table = pd.DataFrame(rows)
    if "key" in table.columns:
        table = table.set_index("key")
    return table

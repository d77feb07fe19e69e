"""The protocol fingerprint: a SHA-256 over everything that fixes what raters see.

When a study opens, ``studies.selectors.study_protocol_chunks`` writes the frozen protocol
as one JSON document (a piece at a time: its test cases, the bulk of it, are never held
whole) and its fingerprint is stored on the study. Anyone with
the document can check the fingerprint later (``sha256sum protocol.json`` on the file the
coordinator pages offer), so it can be proven what raters were shown. The document holds:

- ``format``: ``"concord-protocol/1"``, the version of this layout;
- ``instructions``: the study instructions raters read;
- ``rubric``: each dimension in order with ``key``, ``name``, ``kind``, ``level`` and its
  full ``config`` (bands, criteria, options and anchors, help texts and examples);
- ``test_cases``: in order, each with ``id``, ``prompt``, ``context``, ``stratum`` and
  ``responses``, the response texts by blinded label (``{"A": ..., "B": ...}``), and
  ``content_warning`` for a case that has a warning of its own (absent otherwise);
- ``blinding``: the ``seed``, the ``secret`` (the study's blinding secret), the
  ``side_mode`` and the sorted ``systems``. With the documented blinding procedure these
  fix the unblinding key. Because the document holds the key, it can be downloaded only
  after unblinding; before that the fingerprint alone is shown, a commitment that cannot be
  reversed (the 128-bit secret makes guessing the key from the fingerprint hopeless);
- ``success_criterion``: ``alpha`` (as a string, e.g. ``"0.700"``) and ``min_dimensions``;
- ``quality_control``: the study's quality rules (``QualitySettings``, the significance
  level as a string) under ``rules``, and under ``items`` each gold item and attention
  check in case order with its ``id``, ``purpose``, ``expected`` answers (by blinded label,
  as stored) and ``explanation``;
- ``adjudication``: present only when at least one dimension has an adjudication rule
  other than "never" (so that a study without rules keeps the fingerprint it had before
  adjudication existed): the rules in rubric order, each with ``dimension`` (its key),
  ``trigger`` (``"values"`` or ``"disagreement"``), ``values`` (stored values, in the
  kind's order) and ``tolerance`` (points). 7.3's switch to every disagreement, taken
  while the study runs, is not part of the plan: it is a deviation the report lists.
- ``exposure``: present only when the study limits raters' daily active time (so that a
  study without limits keeps the fingerprint it had before limits existed):
  ``daily_minutes`` (the whole study's limit, or null) and ``strata``, each stratum that
  sets a limit with ``stratum`` and ``daily_minutes``, sorted by stratum.
- ``adaptive_raters``: present only in the adaptive design (so that every other study keeps
  its fingerprint): ``k_min`` (the raters every case gets) and ``k_max`` (the most a case
  whose ratings disagree gets, one more at a time).
- ``content_warnings``: present only when a stratum sets a content warning (raters read it
  before each case of the stratum): each such stratum with ``stratum`` and
  ``content_warning``, sorted by stratum.
- ``monitoring``: present only when the analysis plan monitors the primary question with
  the anytime-valid test (``agreement.services.monitor``; registered through
  ``studies.protocol_parts``): ``method``, ``primary_measure``, ``alpha``,
  ``expected_effect`` and ``margin`` (strings, e.g. ``"0.050"``) and ``mixing`` (the
  Beta(c, c) prior's c, as a string with six decimals).

Not included, on purpose: the study's name and description, the consent text and the
disclosure question (they can be amended while the study runs; a consent change bumps
the consent version instead), the raters and their assignments.

Canonical JSON: keys sorted, no whitespace (separators ``,`` and ``:``), non-ASCII
characters written as UTF-8 rather than escaped, texts exactly as stored, encoded as
UTF-8 with no trailing newline. Nothing here touches the database.
"""

import hashlib
import json
from collections.abc import Iterable, Iterator

FORMAT = "concord-protocol/1"


def canonical_json(document: dict) -> bytes:
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def protocol_fingerprint(document: dict) -> str:
    return hashlib.sha256(canonical_json(document)).hexdigest()


def canonical_json_chunks(document: dict, *, last: str, items: Iterable) -> Iterator[bytes]:
    """``canonical_json`` of ``document`` with the list ``items`` under the key ``last``,
    a piece at a time: the same bytes, without the list in memory. ``last`` sorts after
    every key of ``document``, as canonical JSON puts it last."""
    if any(key >= last for key in document):
        raise ValueError(f"{last!r} must sort after every other key.")
    head = canonical_json(document)
    yield head[:-1] + (b"," if document else b"") + canonical_json(last) + b":["
    for index, item in enumerate(items):
        yield (b"," if index else b"") + canonical_json(item)
    yield b"]}"


def chunks_fingerprint(chunks: Iterable[bytes]) -> str:
    """``protocol_fingerprint`` of the document these canonical JSON pieces make up."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()

"""Parts of the frozen protocol that the apps above ``studies`` own.

``studies`` writes the protocol document (``selectors.study_protocol_chunks``) but never
reads the tables of the apps above it. An app whose plan is frozen with the protocol (the
analysis plan's monitored collection) registers a reader here when it loads; the document
holds the part under its name only when the reader returns one, so that a study without it
keeps the document, and the fingerprint, it had before the part existed.
"""

from collections.abc import Callable

_readers: dict[str, Callable[..., dict | None]] = {}


def protocol_part_register(name: str, reader: Callable[..., dict | None]) -> None:
    """Register ``reader(study=...)`` for the part ``name``; registering again replaces it."""
    _readers[name] = reader


def protocol_parts(*, study) -> dict[str, dict]:
    """The registered parts the study has, by name."""
    parts = {}
    for name in sorted(_readers):
        part = _readers[name](study=study)
        if part is not None:
            parts[name] = part
    return parts

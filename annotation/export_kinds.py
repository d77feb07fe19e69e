"""The exports a job may prepare as a file (``export_jobs``), as a registry that imports
nothing: ``agreement`` registers its report bundle here when the apps are ready, and
Django's start-up must not load the exports' modules (tests/config/test_setup_imports.py).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

# ``write(study, file, written)``: writes the export to a binary file, and calls
# ``written(amount so far)`` now and then.
Writer = Callable[[Any, IO[bytes], Callable[[int], None]], None]


@dataclass(frozen=True)
class ExportKind:
    """An export that may be prepared as a job: what it is called, its download name and
    media type, and its writer."""

    key: str
    label: str
    filename: Callable[[Any], str]
    content_type: str
    write: Writer


EXPORT_KINDS: dict[str, ExportKind] = {}


def export_kind_register(kind: ExportKind) -> None:
    """Offer an export as a job."""
    EXPORT_KINDS[kind.key] = kind

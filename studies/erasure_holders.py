"""The person's own free text that the apps above ``studies`` hold, for an identity erasure.

``studies`` never reads ``annotation``'s tables, yet a rater may have typed their own
e-mail or username into a rating's notes, a counted item or a comment. So each app that
holds such text registers a scrubber here when it loads, and the erasure calls every one
(``studies.services.erasure``).
"""

from collections.abc import Callable
from typing import Any

# ``scrubber(user=..., redact=...)``: rewrite, through ``redact(value)`` (text, or JSON of
# dicts, lists and text, with every mention of the person replaced), the free text ``user``
# wrote; returns how many rows it changed, by what they are ("rating notes": 2).
Scrubber = Callable[..., dict[str, int]]

_scrubbers: list[Scrubber] = []


def erasure_scrubber_register(scrubber: Scrubber) -> None:
    """Register ``scrubber``; registering the same one twice is harmless."""
    if scrubber not in _scrubbers:
        _scrubbers.append(scrubber)


def own_text_scrub(*, user, redact: Callable[[Any], Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for scrubber in _scrubbers:
        for kind, count in scrubber(user=user, redact=redact).items():
            counts[kind] = counts.get(kind, 0) + count
    return counts

import hashlib
import logging
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from django import template
from django.core.cache import cache
from django.utils.safestring import mark_safe

from studies import rendering
from studies.rendering import render_markdown

register = template.Library()
logger = logging.getLogger(__name__)

# Rendering is pure Python (about 3 ms per KB of text) and a case's texts are shown to every
# rater who has the case: a text this long is kept in the shared cache, where a round trip
# costs a fraction of that. Shorter ones render faster than the round trip.
SHARED_FROM_CHARS = 1000
SHARED_SECONDS = 7 * 24 * 60 * 60
# The renderer's own fingerprint is part of the key, so that a change to the rules of
# studies/rendering.py (or to the libraries it uses) never serves HTML rendered by the old ones.
_RENDERER = hashlib.sha256(
    Path(rendering.__file__).read_bytes()
    + version("markdown-it-py").encode()
    + version("nh3").encode()
).hexdigest()[:16]


@lru_cache(maxsize=256)
def markdown_html(text: str) -> str:
    """``render_markdown(text)``, kept per process (the study's instructions are on every
    page) and, for long texts, in the shared cache (each response is shown to several
    raters, on whichever web worker)."""
    if len(text) < SHARED_FROM_CHARS:
        return render_markdown(text)
    key = f"markdown:{_RENDERER}:{hashlib.sha256(text.encode()).hexdigest()}"
    try:
        html = cache.get(key)
    except Exception:  # noqa: BLE001 - the page renders the text itself when the cache is down
        logger.warning("The cache could not be read; rendering the text instead.")
        html = None
    if html is None:
        html = render_markdown(text)
        try:
            cache.set(key, html, SHARED_SECONDS)
        except Exception:  # noqa: BLE001
            logger.warning("The cache could not be written.")
    return html


@register.filter
def markdown(text: str) -> str:
    # render_markdown escapes raw HTML and sanitises the result, so marking it safe is sound.
    return mark_safe(markdown_html(text or ""))  # noqa: S308

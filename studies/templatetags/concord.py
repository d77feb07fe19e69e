from functools import lru_cache

from django import template
from django.utils.safestring import mark_safe

from studies.rendering import render_markdown

register = template.Library()

# Rendering is pure Python (about 3 ms per KB of text), and the same texts come back on
# every page (the study's instructions, a case's responses on each rater's visit): each
# process keeps the HTML of recent texts. Only texts up to KEPT_CHARS are kept, so the
# cache holds at most about KEPT_TEXTS * KEPT_CHARS * 3 characters (text and HTML) per
# process, whatever the studies hold; longer texts are rendered each time.
KEPT_TEXTS = 256
KEPT_CHARS = 20_000


@lru_cache(maxsize=KEPT_TEXTS)
def _markdown_kept(text: str) -> str:
    return render_markdown(text)


def markdown_html(text: str) -> str:
    """``render_markdown(text)``, kept per process for texts up to ``KEPT_CHARS``."""
    if len(text) > KEPT_CHARS:
        return render_markdown(text)
    return _markdown_kept(text)


@register.filter
def markdown(text: str) -> str:
    # render_markdown escapes raw HTML and sanitises the result, so marking it safe is sound.
    return mark_safe(markdown_html(text or ""))  # noqa: S308

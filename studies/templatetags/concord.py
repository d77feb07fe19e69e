from django import template
from django.utils.safestring import mark_safe

from studies.rendering import render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> str:
    # render_markdown escapes raw HTML and sanitises the result, so marking it safe is sound.
    return mark_safe(render_markdown(text))  # noqa: S308

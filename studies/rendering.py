"""Safe rendering of response and instruction text.

Markdown is parsed with raw HTML disabled, so tags in the text are shown as text, and
the output is then passed through an allow-list sanitiser as a second line of defence.
"""

from functools import cache

_ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code", "pre",
    "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


@cache
def _markdown():
    """The parser, built on first use: a process that renders no text never loads it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> str:
    import nh3  # here, not at the top, with the parser: on the first text rendered

    html = _markdown().render(text or "")
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def reasoning_steps(context: str) -> list[str]:
    """The partial reasoning steps of a next-step case: one per non-empty line of its context.

    The rating screen numbers them and the judge prompts do too, from this one reading.
    """
    return [line.strip() for line in context.splitlines() if line.strip()]

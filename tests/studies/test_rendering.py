import pytest

from studies.rendering import render_markdown


def test_markdown_is_rendered():
    html = render_markdown("# Plan\n\n- **one**\n- two")
    assert "<strong>one</strong>" in html
    assert "<li>two</li>" in html


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '<a href="#" onclick="alert(1)">x</a>',
        "<iframe src=https://example.org></iframe>",
    ],
)
def test_html_in_the_text_is_shown_as_text_never_as_markup(text):
    html = render_markdown(text)
    assert "<script" not in html
    assert "<img" not in html
    assert "<iframe" not in html
    assert "<a " not in html
    assert "&lt;" in html


def test_script_in_a_code_span_stays_visible_as_code():
    html = render_markdown("Sanitise `<script>alert(1)</script>` first.")
    assert "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>" in html


def test_javascript_links_are_dropped():
    html = render_markdown("[click](javascript:alert(1))")
    assert 'href="javascript' not in html


def test_links_open_without_referrer():
    html = render_markdown("[docs](https://example.org/a)")
    assert 'href="https://example.org/a"' in html
    assert "noopener" in html


@pytest.mark.parametrize("size", [40, 5000, 30_000])
def test_the_template_filter_renders_as_render_markdown_and_keeps_texts_up_to_a_size(
    size, monkeypatch
):
    from studies.templatetags import concord

    text = "A **bold** claim <script>alert(1)</script> and a [link](javascript:x).\n\n" * 500
    text = text[:size]
    concord._markdown_kept.cache_clear()
    html = str(concord.markdown(text))
    assert html == render_markdown(text) and "<script>" not in html
    # Shown again in the same process: a text up to the size is not rendered again; a
    # longer one is (the kept HTML stays bounded whatever the texts).
    rendered = []
    monkeypatch.setattr(concord, "render_markdown", lambda t: rendered.append(t) or "fresh")
    again = str(concord.markdown(text))
    kept = size <= concord.KEPT_CHARS
    assert (again, rendered) == ((html, []) if kept else ("fresh", [text]))

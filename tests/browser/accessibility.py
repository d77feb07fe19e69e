"""An axe-core check in the page (the copy bundled with axe-playwright-python, no network)."""

from axe_playwright_python.sync_playwright import Axe

_axe = Axe()

# Every violation fails a test, whatever its impact (0 over every page state); a test that
# passes every_impact=False lets minor and moderate ones through.
BLOCKING = {"serious", "critical"}


def assert_accessible(page, *, name: str = "", every_impact: bool = True):
    """No axe violation; ``every_impact=False`` lets minor and moderate ones pass."""
    # Colours are read as they end up: a transition still running (a button a script has
    # just checked fades to its colour) would otherwise be measured half-way. An endless
    # one (a spinner) cannot finish and is left as it is.
    page.evaluate("document.getAnimations().forEach((a) => { try { a.finish(); } catch (e) {} })")
    results = _axe.run(page, options={"resultTypes": ["violations"]})
    violations = results.response["violations"]
    blocking = [v for v in violations if every_impact or v.get("impact") in BLOCKING]
    detail = "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(f"{node['target']} {node['html'][:120]}" for node in v["nodes"][:5])
        for v in blocking
    )
    assert not blocking, f"axe found violations on {name or page.url}:\n{detail}"


def assert_fits(page, width: int = 375):
    """Nothing forces the page itself to scroll sideways."""
    wide = page.evaluate(
        """(width) => Array.from(document.querySelectorAll('body *'))
            .filter((el) => el.getBoundingClientRect().right > width + 1 && !el.closest('.table-responsive, .response-text'))
            .slice(0, 5).map((el) => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right))""",
        width,
    )
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url}: {scroll} {wide}"

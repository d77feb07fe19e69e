"""The alpha chart's two layouts: every mark inside the drawing, names placed to be read."""

import pytest

from agreement.report.charts import LAYOUTS, alpha_chart

RESULT = {
    "dimensions": [
        {"name": "Depth of Analysis", "alpha": 0.85, "low": 0.58, "high": 0.97},
        {"name": "Alternative Consideration", "alpha": -0.2, "low": -0.5, "high": 0.1},
        {"name": "Actionability", "alpha": None},
    ]
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_mark_is_inside_the_drawing(layout):
    chart = alpha_chart(RESULT, layout=layout)
    xs = [t["x"] for t in chart["ticks"] + chart["thresholds"]]
    xs += [row[key] for row in chart["rows"] for key in ("x", "x_low", "x_high") if row[key]]
    assert all(chart["left"] <= x <= chart["width"] for x in xs)
    ys = [row["y"] for row in chart["rows"]] + [row["name_y"] for row in chart["rows"]]
    assert all(16 < y < chart["axis_y"] for y in ys)


def test_the_narrow_layout_puts_each_name_above_its_row_at_full_size():
    chart = alpha_chart(RESULT, layout="narrow")
    # Drawn at about a phone's width, so 12-unit text stays about 12 px.
    assert chart["width"] <= 360
    assert chart["name_anchor"] == "start"
    for row in chart["rows"]:
        assert row["name_x"] == chart["left"] and row["name_y"] < row["y"]
    wide = alpha_chart(RESULT)
    assert [r["name"] for r in wide["rows"]] == [r["name"] for r in chart["rows"]]

"""Coordinates for the alpha-per-dimension chart, drawn as inline SVG by the template.

Two layouts: "wide" puts each dimension's name left of its row; "narrow" (phones) puts it
above the row, so the chart can be drawn at the screen's width with its text at full size.
"""

import math

LAYOUTS = {
    # width, left margin of the plot, right margin, row height, name offset (x, y), anchor
    "wide": {"width": 640, "left": 200, "right": 20, "row": 34, "name": (-8, 4), "anchor": "end"},
    "narrow": {
        "width": 340,
        "left": 14,
        "right": 18,
        "row": 46,
        "name": (0, -9),
        "anchor": "start",
    },
}
TOP = 28


def alpha_chart(result: dict, *, layout: str = "wide") -> dict:
    shape = LAYOUTS[layout]
    width, left, right, row = shape["width"], shape["left"], shape["right"], shape["row"]
    # The narrow layout's first name sits above its row: room for it under the labels on top.
    shift = 8 if layout == "narrow" else 0
    dimensions = result.get("dimensions", [])
    values = [
        value
        for d in dimensions
        for value in (d.get("alpha"), d.get("low"), d.get("high"))
        if value is not None
    ]
    low_end = max(-1.0, min([0.0, *values]))
    low_end = math.floor(low_end * 10) / 10
    span = 1.0 - low_end
    plot_width = width - left - right

    def x(value: float) -> float:
        return round(left + (value - low_end) / span * plot_width, 1)

    height = TOP + shift + row * max(len(dimensions), 1) + 24
    rows = []
    for index, d in enumerate(dimensions):
        y = TOP + shift + row * index + row / 2
        rows.append(
            {
                "name": d["name"],
                "name_x": left + shape["name"][0],
                "name_y": y + shape["name"][1],
                "y": y,
                "alpha": d.get("alpha"),
                "x": x(d["alpha"]) if d.get("alpha") is not None else None,
                "x_low": x(d["low"]) if d.get("low") is not None else None,
                "x_high": x(d["high"]) if d.get("high") is not None else None,
            }
        )
    ticks = [round(low_end + step / 10, 1) for step in range(int(round(span * 10)) + 1)][::2]
    return {
        "width": width,
        "height": height,
        "left": left,
        "name_anchor": shape["anchor"],
        "axis_y": height - 20,
        "rows": rows,
        # Labels of the two close lines (0.667 and 0.70) lean away from each other.
        "thresholds": [
            {"value": t, "x": x(t), "anchor": ("end", "start", "start")[min(i, 2)]}
            for i, t in enumerate(result.get("thresholds", [0.667, 0.70, 0.80]))
        ],
        "ticks": [{"value": t, "x": x(t)} for t in ticks],
    }

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


SPARK_WIDTH = 220
SPARK_HEIGHT = 60
SPARK_PAD = 6


def accuracy_chart(series: list, *, threshold: float) -> dict | None:
    """A rater's running gold accuracy after each gold item, with the pass line, as
    coordinates for a small inline SVG (0% at the bottom, 100% at the top)."""
    points = [value for value in series if value is not None]
    if not points:
        return None
    inner_w, inner_h = SPARK_WIDTH - 2 * SPARK_PAD, SPARK_HEIGHT - 2 * SPARK_PAD
    step = inner_w / max(len(points) - 1, 1)

    def y(value: float) -> float:
        return round(SPARK_PAD + (1 - value) * inner_h, 1)

    coords = [(round(SPARK_PAD + i * step, 1), y(v)) for i, v in enumerate(points)]
    return {
        "width": SPARK_WIDTH,
        "height": SPARK_HEIGHT,
        "points": " ".join(f"{px},{py}" for px, py in coords),
        "dots": [
            {"x": px, "y": py, "value": v} for (px, py), v in zip(coords, points, strict=True)
        ],
        "threshold_y": y(threshold),
        "left": SPARK_PAD,
        "right": SPARK_WIDTH - SPARK_PAD,
        "last": points[-1],
    }


def time_chart(bins: list[int], *, edges, threshold: float) -> dict | None:
    """Bars of a rater's timed cases per band of seconds (the last band open-ended), the
    bands under the time threshold marked, for a small inline SVG."""
    if not bins or not sum(bins):
        return None
    inner_h = SPARK_HEIGHT - 2 * SPARK_PAD - 12
    width = (SPARK_WIDTH - 2 * SPARK_PAD) / len(bins)
    tallest = max(bins)
    bars = []
    for index, count in enumerate(bins):
        height = round(inner_h * count / tallest, 1)
        bars.append(
            {
                "x": round(SPARK_PAD + index * width + 1, 1),
                "y": round(SPARK_PAD + inner_h - height, 1),
                "width": round(width - 2, 1),
                "height": height,
                "count": count,
                "label": f"{edges[index]}+" if index == len(bins) - 1 else f"{edges[index]}",
                "label_x": round(SPARK_PAD + index * width + width / 2, 1),
                "fast": edges[index] < threshold,
            }
        )
    return {"width": SPARK_WIDTH, "height": SPARK_HEIGHT, "bars": bars, "label_y": SPARK_HEIGHT - 2}

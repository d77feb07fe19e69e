"""The charts of the agreement pages and the report, drawn on the server (no script, no CDN,
prints as is). Pure Python.

Most are SVG markup, every text escaped here (the page marks it safe); the alpha chart and
the quality page's small charts are coordinates that a template draws.
"""

import math
from html import escape

PALETTE = ("#1f5fa8", "#d9822b", "#2f8f5b", "#8e44ad", "#c0392b", "#7f8c8d")
WIDTH = 640
ROW = 30
LEFT = 260
RIGHT = 30
TOP = 24
BOTTOM = 34


def _svg(height: int, label: str, body: list[str], *, kind: str = "") -> str:
    css = f"report-chart report-{kind}" if kind else "report-chart"
    return (
        f'<svg class="{css}" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg" font-size="12" '
        f'font-family="system-ui, sans-serif"><title>{escape(label)}</title>{"".join(body)}</svg>'
    )


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def _fmt(value: float) -> str:
    return f"{value:g}" if abs(value) >= 0.01 or value == 0 else f"{value:.2g}"


def forest(
    rows: list[dict], *, label: str, low: float, high: float, lines: tuple = (), unit: str = ""
) -> str:
    """Point estimates with interval whiskers, one row each: [{"name", "value", "low",
    "high"}]; ``lines`` are reference values (thresholds, 0.5, 0) drawn dashed."""
    values = [
        v for r in rows for v in (r.get("value"), r.get("low"), r.get("high")) if v is not None
    ]
    low, high = min([low, *values]), max([high, *values])
    if high <= low:
        high = low + 1
    plot = WIDTH - LEFT - RIGHT
    height = TOP + ROW * max(len(rows), 1) + BOTTOM

    def x(v: float) -> float:
        return round(LEFT + (v - low) / (high - low) * plot, 1)

    body = []
    axis = height - BOTTOM + 6
    for tick in _ticks(low, high):
        body.append(
            f'<line x1="{x(tick)}" x2="{x(tick)}" y1="{TOP - 6}" y2="{axis}" stroke="#e3e3e3"/>'
            f'<text x="{x(tick)}" y="{axis + 14}" text-anchor="middle">'
            f"{_fmt(tick)}{escape(unit)}</text>"
        )
    for value in lines:
        body.append(
            f'<line x1="{x(value)}" x2="{x(value)}" y1="{TOP - 10}" y2="{axis}" '
            f'stroke="#b03a2e" stroke-dasharray="4 3"/>'
            f'<text x="{x(value)}" y="{TOP - 12}" text-anchor="middle" fill="#b03a2e">'
            f"{_fmt(value)}</text>"
        )
    for index, row in enumerate(rows):
        y = TOP + ROW * index + ROW / 2
        color = row.get("color") or PALETTE[0]
        body.append(
            f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end">'
            f"{escape(str(row['name'])[:42])}</text>"
        )
        if row.get("low") is not None and row.get("high") is not None:
            body.append(
                f'<line x1="{x(row["low"])}" x2="{x(row["high"])}" y1="{y}" y2="{y}" '
                f'stroke="{color}" stroke-width="2"/>'
            )
        if row.get("value") is not None:
            body.append(f'<circle cx="{x(row["value"])}" cy="{y}" r="5" fill="{color}"/>')
        else:
            body.append(f'<text x="{LEFT + 4}" y="{y + 4}" fill="#666">undefined</text>')
    return _svg(height, label, body)


def grouped_bars(groups: list[str], series: list[dict], *, label: str) -> str:
    """Counts per group (x) and series (one bar each, coloured), with a legend:
    series = [{"name", "counts": [one per group]}]."""
    peak = max([1, *(c for s in series for c in s["counts"])])
    left, plot_height = 50, 150
    height = TOP + plot_height + BOTTOM + 18 * math.ceil(len(series) / 3)
    plot = WIDTH - left - RIGHT
    slot = plot / max(len(groups), 1)
    bar = max(2.0, (slot * 0.8) / max(len(series), 1))
    base = TOP + plot_height
    body = [f'<line x1="{left}" x2="{WIDTH - RIGHT}" y1="{base}" y2="{base}" stroke="#999"/>']
    for tick in _ticks(0, peak, 4):
        y = round(base - tick / peak * plot_height, 1)
        body.append(
            f'<line x1="{left}" x2="{WIDTH - RIGHT}" y1="{y}" y2="{y}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">{_fmt(tick)}</text>'
        )
    for g, group in enumerate(groups):
        x0 = left + slot * g + slot * 0.1
        for s, item in enumerate(series):
            count = item["counts"][g]
            h = round(count / peak * plot_height, 1)
            body.append(
                f'<rect x="{round(x0 + bar * s, 1)}" y="{base - h}" width="{round(bar - 1, 1)}" '
                f'height="{h}" fill="{PALETTE[s % len(PALETTE)]}"><title>{escape(item["name"])} '
                f"{escape(str(group))}: {count}</title></rect>"
            )
        body.append(
            f'<text x="{round(left + slot * (g + 0.5), 1)}" y="{base + 14}" text-anchor="middle">'
            f"{escape(str(group))}</text>"
        )
    for s, item in enumerate(series):
        lx, ly = left + (s % 3) * 190, base + 30 + 18 * (s // 3)
        body.append(
            f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" '
            f'fill="{PALETTE[s % len(PALETTE)]}"/>'
            f'<text x="{lx + 14}" y="{ly}">{escape(item["name"][:28])}</text>'
        )
    return _svg(height, label, body)


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least ``raw``."""
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw - 1e-12)


def histogram_bins(values: list[float], *, max_bins: int = 15) -> dict:
    """Bins of round width over the values' own range: the edges are multiples of the width,
    the axis starts near the smallest value (not at 0 unless 0 is in range), and a value on
    an edge falls in the bin that starts there. Bins are never finer than the values' own
    resolution (whole or half points), so no empty bin sits between two possible values."""
    low, high = min(values), max(values)
    step = _nice_step((high - low) / max_bins) if high > low else 1.0
    for resolution in (1.0, 0.5):
        if all(float(v / resolution).is_integer() for v in values):
            step = max(step, resolution)
            break
    first = math.floor(low / step + 1e-9) * step
    count = max(1, math.floor((high - first) / step + 1e-9) + 1)
    edges = [round(first + i * step, 10) for i in range(count + 1)]
    counts = [0] * count
    for v in values:
        counts[min(max(math.floor((v - first) / step + 1e-9), 0), count - 1)] += 1
    return {"edges": edges, "counts": counts, "step": step}


def histogram(values: list[float], *, label: str, x_label: str = "") -> str:
    """A histogram of per-case values over their own range, the bin edges labelled with
    round numbers, a count axis, and a dashed line at 0 when 0 is within the range.

    On a phone the chart is drawn at about half its size, so report.css enlarges its text
    and hides the edge labels marked ``tick-wide``: those left are far enough apart to be
    read at that size."""
    values = [v for v in values if v is not None]
    if not values:
        return _svg(60, label, ['<text x="10" y="30">No paired cases yet.</text>'])
    bins = histogram_bins(values)
    edges, counts = bins["edges"], bins["counts"]
    left, plot_height = 50, 150
    height = TOP + plot_height + BOTTOM + (16 if x_label else 0)
    plot = WIDTH - left - RIGHT
    base = TOP + plot_height
    low, high = edges[0], edges[-1]
    peak = max(counts)

    def x(v: float) -> float:
        return round(left + (v - low) / (high - low) * plot, 1)

    body = [f'<line x1="{left}" x2="{WIDTH - RIGHT}" y1="{base}" y2="{base}" stroke="#999"/>']
    for tick in _ticks(0, peak, 4):
        if tick != int(tick):
            continue
        y = round(base - tick / peak * plot_height, 1)
        body.append(
            f'<line x1="{left}" x2="{WIDTH - RIGHT}" y1="{y}" y2="{y}" stroke="#eee"/>'
            # 0 sits on the axis (above it), clear of the first edge's label below.
            f'<text x="{left - 6}" y="{y}" text-anchor="end" '
            f'dominant-baseline="{"auto" if tick == 0 else "middle"}">{_fmt(tick)}</text>'
        )
    for index, count in enumerate(counts):
        h = round(count / peak * plot_height, 1)
        a, b = edges[index], edges[index + 1]
        body.append(
            f'<rect x="{x(a) + 1}" y="{round(base - h, 1)}" width="{round(x(b) - x(a) - 2, 1)}" '
            f'height="{h}" fill="{PALETTE[0]}"><title>[{_fmt(a)}, {_fmt(b)}): '
            f"{count} case{'' if count == 1 else 's'}</title></rect>"
        )
    # Every edge labelled while they fit (about 36 units apart), else every other one; on a
    # phone (text about twice as large) only those at least 100 units apart.
    gap = plot / max(len(counts), 1)
    every = 1 if gap >= 36 else 2
    narrow = every * math.ceil(100 / (gap * every))
    for index, edge in enumerate(edges):
        if index % every == 0 or index == len(edges) - 1:
            css = ' class="tick-wide"' if index % narrow else ""
            body.append(
                f'<text x="{x(edge)}" y="{base + 4}" text-anchor="middle" '
                f'dominant-baseline="hanging"{css}>{_fmt(edge)}</text>'
            )
    if low <= 0 <= high:
        body.append(
            f'<line x1="{x(0)}" x2="{x(0)}" y1="{TOP - 6}" y2="{base}" stroke="#b03a2e" '
            f'stroke-dasharray="4 3" data-zero/>'
            f'<text x="{x(0)}" y="{TOP - 9}" text-anchor="middle" fill="#b03a2e">0</text>'
        )
    if x_label:
        body.append(
            f'<text x="{left + plot / 2}" y="{base + 28}" text-anchor="middle" '
            f'dominant-baseline="hanging" class="axis-title">{escape(x_label)}</text>'
        )
    return _svg(height, label, body, kind="histogram")


def scatter(
    points: list[tuple[float, float]],
    *,
    label: str,
    x_label: str,
    y_label: str,
    line: tuple[float, float] | None = None,
    curve=None,
) -> str:
    """Points with an optional fitted line (intercept, slope) or curve (a function of x)."""
    points = [(x, y) for x, y in points if x is not None and y is not None]
    left, plot_height = 60, 220
    height = TOP + plot_height + BOTTOM + 14
    if not points:
        return _svg(60, label, ['<text x="10" y="30">No points yet.</text>'])
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x_low, x_high = min(xs), max(xs)
    y_low, y_high = min(ys + [0.0]), max(ys + [1.0])
    x_high = x_high if x_high > x_low else x_low + 1
    plot = WIDTH - left - RIGHT
    base = TOP + plot_height

    def px(v):
        return round(left + (v - x_low) / (x_high - x_low) * plot, 1)

    def py(v):
        return round(base - (v - y_low) / (y_high - y_low) * plot_height, 1)

    body = [
        f'<line x1="{left}" x2="{WIDTH - RIGHT}" y1="{base}" y2="{base}" stroke="#999"/>',
        f'<line x1="{left}" x2="{left}" y1="{TOP}" y2="{base}" stroke="#999"/>',
    ]
    for tick in _ticks(x_low, x_high):
        body.append(
            f'<text x="{px(tick)}" y="{base + 14}" text-anchor="middle">{_fmt(tick)}</text>'
        )
    for tick in _ticks(y_low, y_high, 4):
        body.append(
            f'<text x="{left - 6}" y="{py(tick) + 4}" text-anchor="end">{_fmt(tick)}</text>'
        )
    body.append(
        f'<text x="{left + plot / 2}" y="{base + 30}" text-anchor="middle">{escape(x_label)}</text>'
        f'<text x="12" y="{TOP + plot_height / 2}" text-anchor="middle" '
        f'transform="rotate(-90 12 {TOP + plot_height / 2})">{escape(y_label)}</text>'
    )
    for x, y in points:
        body.append(
            f'<circle cx="{px(x)}" cy="{py(y)}" r="3" fill="{PALETTE[0]}" fill-opacity="0.55"/>'
        )
    if line is not None:
        intercept, slope = line
        body.append(
            f'<line x1="{px(x_low)}" x2="{px(x_high)}" y1="{py(intercept + slope * x_low)}" '
            f'y2="{py(intercept + slope * x_high)}" stroke="{PALETTE[1]}" stroke-width="2"/>'
        )
    if curve is not None:
        steps = [x_low + (x_high - x_low) * i / 40 for i in range(41)]
        path = " ".join(f"{px(x)},{py(curve(x))}" for x in steps)
        body.append(
            f'<polyline points="{path}" fill="none" stroke="{PALETTE[1]}" stroke-width="2"/>'
        )
    return _svg(height, label, body)


# The alpha chart (coordinates) -------------------------------------------------------------------

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
ALPHA_TOP = 28


def alpha_chart(result: dict, *, layout: str = "wide") -> dict:
    """Coordinates of the alpha-per-dimension chart, drawn as inline SVG by the template
    ``agreement/_alpha_chart.html`` on the agreement page and in the report.

    Two layouts: "wide" puts each dimension's name left of its row; "narrow" (phones) puts it
    above the row, so the chart can be drawn at the screen's width with its text at full size.
    """
    from agreement.stats.krippendorff import ALPHA_THRESHOLDS  # the statistics load numpy

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

    height = ALPHA_TOP + shift + row * max(len(dimensions), 1) + 24
    rows = []
    for index, d in enumerate(dimensions):
        y = ALPHA_TOP + shift + row * index + row / 2
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
            for i, t in enumerate(result.get("thresholds", ALPHA_THRESHOLDS))
        ],
        "ticks": [{"value": t, "x": x(t)} for t in ticks],
    }


SPARK_WIDTH = 260
SPARK_HEIGHT = 140
SPARK_PAD = 8
# Room for the y-axis labels on the left and the x-axis labels underneath.
SPARK_AXIS = 34
SPARK_FOOT = 18


def accuracy_chart(series: list, *, threshold: float) -> dict | None:
    """A rater's running gold accuracy after each gold item, with the pass line, as
    coordinates for a small inline SVG: a y-axis from 0% at the bottom to 100% at the top,
    labelled, and the gold items numbered along the x-axis."""
    points = [value for value in series if value is not None]
    if not points:
        return None
    left, right = SPARK_AXIS, SPARK_WIDTH - SPARK_PAD
    top, bottom = SPARK_PAD, SPARK_HEIGHT - SPARK_FOOT
    step = (right - left) / max(len(points) - 1, 1)

    def y(value: float) -> float:
        return round(top + (1 - value) * (bottom - top), 1)

    coords = [(round(left + i * step, 1), y(v)) for i, v in enumerate(points)]
    # The first and the last gold item numbered, and a few between when there is room.
    every = max(1, math.ceil(len(points) / 6))
    numbered = sorted({*range(0, len(points), every), len(points) - 1})
    return {
        "width": SPARK_WIDTH,
        "height": SPARK_HEIGHT,
        "points": " ".join(f"{px},{py}" for px, py in coords),
        "dots": [
            {"x": px, "y": py, "value": v} for (px, py), v in zip(coords, points, strict=True)
        ],
        "threshold_y": y(threshold),
        "left": left,
        "right": right,
        "top": top,
        "bottom": bottom,
        "y_ticks": [{"label": f"{share}%", "y": y(share / 100)} for share in (0, 50, 100)],
        "x_ticks": [{"label": i + 1, "x": coords[i][0]} for i in numbered],
        "label_x": left - 4,
        "label_y": SPARK_HEIGHT - 4,
        "last": points[-1],
    }


def time_chart(bins: list[int], *, edges, threshold: float) -> dict | None:
    """Bars of a rater's timed cases per band of seconds (the last band open-ended), the
    bands under the time threshold marked, each bar with its count, for a small inline SVG
    with a y-axis of cases."""
    if not bins or not sum(bins):
        return None
    left, right = SPARK_AXIS, SPARK_WIDTH - SPARK_PAD
    # Room above the tallest bar for its count.
    top, bottom = SPARK_PAD + 12, SPARK_HEIGHT - SPARK_FOOT
    width = (right - left) / len(bins)
    tallest = max(bins)
    bars = []
    for index, count in enumerate(bins):
        height = round((bottom - top) * count / tallest, 1)
        bars.append(
            {
                "x": round(left + index * width + 1, 1),
                "y": round(bottom - height, 1),
                "width": round(width - 2, 1),
                "height": height,
                "count": count,
                "count_y": round(bottom - height - 3, 1),
                "label": f"{edges[index]}+" if index == len(bins) - 1 else f"{edges[index]}",
                "label_x": round(left + index * width + width / 2, 1),
                "fast": edges[index] < threshold,
            }
        )
    return {
        "width": SPARK_WIDTH,
        "height": SPARK_HEIGHT,
        "bars": bars,
        "left": left,
        "right": right,
        "top": top,
        "bottom": bottom,
        "y_ticks": [
            {"label": value, "y": round(bottom - (bottom - top) * value / tallest, 1)}
            for value in sorted({0, tallest})
        ],
        "label_x": left - 4,
        "label_y": SPARK_HEIGHT - 4,
    }

"""A lookup table keyed by kind names, and a method reached by a kind's name (issue 37)."""

TEMPLATES = {  # flagged: kinds-name-outside-the-kinds
    "counted": "counted.html",
    "scale": "scale.html",
}
WIDTHS = dict(scale=1, pairwise=2)  # flagged: kinds-name-outside-the-kinds


def render(self, dimension, module):
    method = getattr(self, f"render_{dimension.kind}")  # flagged: kinds-name-outside-the-kinds
    points = getattr(module, "scale_points")  # flagged: kinds-name-outside-the-kinds
    return method, points, TEMPLATES[dimension.kind]

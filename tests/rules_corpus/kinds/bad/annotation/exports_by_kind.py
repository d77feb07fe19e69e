"""A kind's name compared, in every operand order and collection."""


def cell(dimension, kind, answer):
    if dimension.kind == "counted":  # flagged: kinds-name-outside-the-kinds
        return 1
    if "pairwise" != kind:  # flagged: kinds-name-outside-the-kinds
        return 2
    if kind in ("scale", "categorical"):  # flagged: kinds-name-outside-the-kinds
        return 3
    if kind not in ["checklist"]:  # flagged: kinds-name-outside-the-kinds
        return 4
    match kind:
        case "scale":  # flagged: kinds-name-outside-the-kinds
            return 5
    return 0

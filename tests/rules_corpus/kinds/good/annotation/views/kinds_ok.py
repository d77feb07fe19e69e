"""The kinds asked through KINDS; words that only look like kinds' names."""
from studies.rubric import KINDS

CONTEXT = {"checklist": []}  # the set-up checklist, one key


def view(dimension, value, name, presets):
    kind_class = KINDS[dimension.kind]
    same = dimension.kind == value
    method = getattr(kind_class, name)
    preset = presets["pairwise"]
    label = "scale"
    return kind_class, same, method, preset, label

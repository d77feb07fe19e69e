"""The outcomes (pure) reaching the database, the app registry and an impure sibling."""
import numpy as np
from django.apps import apps  # flagged: layers-pure

from studies.rendering import reasoning_steps  # flagged: layers-pure
from .jobs import ranking_unavailable  # flagged: layers-pure
from .. import selectors  # flagged: layers-pure


def outcome(study_id):
    Rating = apps.get_model("annotation", "Rating")  # flagged: layers-pure
    return np, Rating, reasoning_steps, ranking_unavailable, selectors

"""studies reaches up to annotation and agreement, in every spelling of an import."""
import importlib

import agreement.tasks  # flagged: layers-studies
from annotation.models import Rating  # flagged: layers-studies
from django.apps import apps
import django.apps


def counts():
    from agreement import services  # flagged: layers-studies

    rating = apps.get_model("annotation", "Rating")  # flagged: layers-studies
    result = django.apps.apps.get_model("agreement.AgreementResult")  # flagged: layers-studies
    tasks = importlib.import_module("agreement.tasks")  # flagged: layers-studies
    views = __import__("annotation.views")  # flagged: layers-studies
    return Rating, services, rating, result, tasks, views

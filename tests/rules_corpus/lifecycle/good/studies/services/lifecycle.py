"""The owner: the transitions table compares statuses."""
from studies.models import Study

TRANSITIONS = {"open": (Study.Status.PILOT, Study.Status.OPEN)}


def study_open(study):
    if study.status != Study.Status.PILOT:
        raise ValueError
    return Study.objects.filter(status="pilot")

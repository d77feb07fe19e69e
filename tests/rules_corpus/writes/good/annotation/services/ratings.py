"""The owner: services write."""
from annotation.models import Rating


def rating_submit(*, assignment, payload):
    Rating.objects.create(assignment=assignment)
    assignment.save(update_fields=["status"])
    Rating.objects.filter(assignment=assignment).update(version=2)

"""A selector that writes while it reads (issue 37)."""
from annotation.models import Assignment


def rater_progress(*, rater):
    rows = Assignment.objects.filter(rater=rater)
    rows.filter(status="todo").update(position=0)  # flagged: writes-outside-services
    qs = rows.all()
    qs.update(version=1)  # flagged: writes-outside-services
    Assignment.objects.update(version=2)  # flagged: writes-outside-services
    return rows.count()

"""A status compared in a query: the filter spellings the ORM has."""
from django.db.models import Case, Q, Value, When

from studies.models import Study


def running(user):
    a = Study.objects.filter(status="open")  # flagged: lifecycle-status-compared
    b = Study.objects.exclude(status__in=["draft", "pilot"])  # flagged: lifecycle-status-compared
    c = user.memberships.filter(study__status=Study.Status.OPEN)  # flagged: lifecycle-status-compared
    d = Study.objects.get(Q(status="closed") | Q(slug="x"))  # flagged: lifecycle-status-compared
    e = Study.objects.annotate(
        live=Case(When(status="open", then=Value(True)), default=Value(False))  # flagged: lifecycle-status-compared
    )
    f = Study.objects.filter(**{"study__status__in": ("open", "pilot")})  # flagged: lifecycle-status-compared
    return a, b, c, d, e, f

"""Django and the ORM in the QC checks, which the README calls pure (issue 37)."""
import math

from django.db.models import Avg  # flagged: layers-pure
from agreement.models import QualityFlag  # flagged: layers-pure


def check(values):
    from django.conf import settings  # flagged: layers-pure

    return math.fsum(values), Avg, QualityFlag, settings

"""The statistics import nothing from Django."""
import django.db.models as models  # flagged: layers-pure
import numpy as np

"""core is neutral: no app, no jobs, no config."""
import jobs.runner  # flagged: layers-core
from studies.models import Study  # flagged: layers-core
from config import celery  # flagged: layers-core

"""No app imports config."""
from config.celery import app  # flagged: layers-agreement

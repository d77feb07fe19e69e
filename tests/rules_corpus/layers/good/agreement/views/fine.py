"""agreement may import everything below it."""
from django.apps import apps

from annotation.models import Rating
from core.errors import ApplicationError
from jobs.services import job_create
from studies.models import Study

Result = apps.get_model("agreement", "AgreementResult")
Also = apps.get_model("studies", "Study")

"""annotation may import studies, jobs and core."""
import importlib

import studies.models
from jobs.runner import job_schedule
from studies.selectors import study_get

services = importlib.import_module("studies.services")

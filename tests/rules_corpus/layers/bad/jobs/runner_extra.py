"""jobs imports no app."""
from annotation import tasks  # flagged: layers-jobs
import studies.models as models  # flagged: layers-jobs

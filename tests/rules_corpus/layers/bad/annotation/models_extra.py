"""annotation names an agreement model lazily, and reads config."""
from django.db import models

from config.settings import base  # flagged: layers-annotation


class Note(models.Model):
    result = models.ForeignKey("agreement.AgreementResult", on_delete=models.CASCADE)  # flagged: layers-annotation
    app = base

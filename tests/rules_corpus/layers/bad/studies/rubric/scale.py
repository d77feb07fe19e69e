"""The kinds touch no database."""
from django.db import transaction  # flagged: layers-pure
from ..models import Study  # flagged: layers-pure
from core.user_input import quoted

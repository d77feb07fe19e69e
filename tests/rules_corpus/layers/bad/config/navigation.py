"""Only the URLconfs of config import the apps."""
from studies import access  # flagged: layers-config
import jobs.models  # flagged: layers-config
from core import throttle

"""Pure: takes the steps, imports no app."""
import re
from collections.abc import Sequence

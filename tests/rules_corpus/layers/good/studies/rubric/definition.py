"""The rubric reaches its pure neighbours only."""
from core.user_input import UserInputError
from ..errors import StudySetupError
from ..presets import PRESETS
from .base import RubricValueError

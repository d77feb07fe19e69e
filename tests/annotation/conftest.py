import pytest

from .support import consent_all


@pytest.fixture
def study(study):
    """The shared study, with both raters past the information sheet and disclosure."""
    consent_all(study)
    return study

"""Test data for the steps around rating, built through the services the app uses."""

from annotation.services import training
from annotation.services.participation import consent_record
from studies.models import Membership


def consent_all(study):
    """Take every rater of the study past the consent step, as they would on the first visit."""
    for rater in study.memberships.filter(role=Membership.Role.RATER):
        consent_record(rater=rater, agreed=True, prior_knowledge=False)


def make_item(study, kind="training", key=None, title="Worked example"):
    item = training.training_item_save(
        study=study,
        kind=kind,
        title=title,
        prompt="Should the lab release the model?",
        responses=["Release in stages.", "Delay a year."],
        explanation="Staged release counts as **one** recommendation.",
    )
    if key is not None:
        training.training_item_key_save(item=item, payload=key)
    return item

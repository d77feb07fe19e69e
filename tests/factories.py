"""Test data built through the same services the app uses."""

import factory
from django.contrib.auth import get_user_model

from annotation.models import Adjudication
from annotation.services import assignments_create_all
from annotation.services.participation import consent_record
from studies.models import Membership, Study
from studies.services import membership_add, study_create, test_cases_add

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def save_password(obj, create, extracted, **kwargs):
        if create:
            obj.save()


def make_cases(count: int, systems=("baseline", "improved")) -> list[dict]:
    return [
        {
            "id": f"TC-{n:03d}",
            "prompt": f"Prompt number {n}: should the lab do X?",
            "context": "",
            "stratum": "policy" if n % 2 else "operations",
            # The text must not name the system: pages are checked for system names.
            "responses": {s: f"Answer number {i} to case {n}." for i, s in enumerate(systems)},
        }
        for n in range(1, count + 1)
    ]


def make_study(
    *, lead=None, slug=None, cases=4, raters=(), status=Study.Status.OPEN, seed=42,
    systems=("baseline", "improved"), consented=False, secret=None,
) -> Study:  # fmt: skip
    lead = lead or UserFactory()
    slug = slug or f"study-{lead.username}"
    study = study_create(slug=slug, name=f"Study {slug}", lead=lead, blinding_seed=seed)
    if secret is not None:
        study.blinding_secret = secret
        study.save(update_fields=["blinding_secret"])
    test_cases_add(study=study, systems=list(systems), cases=make_cases(cases, systems))
    for user in raters:
        rater = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=rater)
        if consented:
            consent_record(rater=rater, agreed=True, prior_knowledge=False)
    study.status = status
    study.save(update_fields=["status"])
    return study


class AdjudicationFactory(factory.django.DjangoModelFactory):
    """A case sent to adjudication, as the queue computation would create it."""

    class Meta:
        model = Adjudication

    triggers = factory.LazyFunction(lambda: {"depth": [Adjudication.Trigger.DISAGREEMENT]})


def adjudication_make(*, test_case, triggers: dict, status=None, answers=None) -> Adjudication:
    """An adjudication of a case in the given state, made directly."""
    return AdjudicationFactory(
        test_case=test_case,
        triggers=triggers,
        status=status or Adjudication.Status.WAITING,
        answers=answers or {},
    )

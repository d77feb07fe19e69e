"""A study whose first sample case three raters rated differently, sent to adjudication."""

from dataclasses import dataclass

from annotation.models import Adjudication, Assignment
from studies.models import Membership, Study, TestCase
from studies.services import membership_add

from ..factories import AdjudicationFactory, UserFactory, make_study
from ..payloads import payload_for, submit


@dataclass
class AdjudicationWorld:
    study: Study
    case: TestCase
    adjudication: Adjudication
    adjudicator: Membership
    raters: list


def adjudication_world(*, slug="adj", status=Study.Status.OPEN, systems=("baseline", "improved"), triggers=None) -> AdjudicationWorld:  # fmt: skip
    raters = [UserFactory(username=f"{slug}-rater-{n}") for n in range(3)]
    study = make_study(
        slug=slug, cases=2, raters=raters, consented=True, status=Study.Status.OPEN,
        systems=systems,
    )  # fmt: skip
    case = study.test_cases.order_by("position").first()
    for n, assignment in enumerate(
        Assignment.objects.filter(test_case=case).order_by("rater__pseudonym")
    ):
        submit(assignment, payload_for(n + 1, notes=f"note of rater {n}"))
    Study.objects.filter(pk=study.pk).update(status=status)
    study.refresh_from_db()
    adjudication = AdjudicationFactory(
        test_case=case, **({"triggers": triggers} if triggers is not None else {})
    )
    adjudicator = membership_add(
        study=study, user=UserFactory(username=f"{slug}-adjudicator"),
        role=Membership.Role.ADJUDICATOR,
    )  # fmt: skip
    return AdjudicationWorld(study, case, adjudication, adjudicator, raters)


def resolved_payload(*, depth=4, reason="Factors 1-4 are distinct; the rest repeat them."):
    """A decision on Depth for both responses of the reference rubric."""
    items = [{"text": f"factor {i}", "half": False} for i in range(depth)]
    return {
        "responses": {"A": {"depth": {"items": items}}, "B": {"depth": {"items": items[:2]}}},
        "notes": reason,
    }

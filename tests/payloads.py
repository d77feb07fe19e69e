"""Answers on the reference rubric for tests, and the studies, ratings and people around them.

Every test builds its rating payloads here, so the shape of a payload is written once."""

from datetime import timedelta

from django.utils import timezone

from annotation.models import Assignment
from annotation.services import rating_submit
from studies.models import Membership, Study
from studies.services import membership_add

from .factories import UserFactory, make_study

# Names that cannot turn up in an export by accident, so their absence means something.
SYSTEMS = ("Zephyr-Alpha-7", "Quokka-Omega-3")


def response_scores(depth=6, evidence=(True, True, True), alternatives=3, actions=3, half=0):
    """One response's answers on the reference rubric; ``half`` factors count at half-weight."""
    return {
        "depth": {
            "items": [{"text": f"factor {i}", "half": i < half} for i in range(depth)],
            "flagged": depth == 2,
            "flag_note": "Hard to separate factors." if depth == 2 else "",
        },
        "evidence": {"checked": list(evidence)},
        "alternatives": {"items": [{"text": f"alt {i}", "half": False} for i in range(alternatives)]},
        "structure": {"checked": [True, False, True]},
        "actionability": {"items": [{"text": f"rec {i}", "half": False} for i in range(actions)]},
    }  # fmt: skip


def payload_for(n: int, *, notes: str = "", confidence: str = "medium") -> dict:
    """Different answers for different n, so that round trips compare something."""
    return {
        "responses": {
            "A": response_scores(depth=n % 7, alternatives=n % 4, actions=n % 4, half=n % 2),
            "B": response_scores(
                depth=(n + 3) % 7,
                evidence=(n % 2 == 0, True, False),
                alternatives=(n + 1) % 4,
                actions=(n + 2) % 4,
            ),
        },
        "confidence": confidence,
        "notes": notes,
    }


def worked(assignment: Assignment, seconds: int) -> None:
    """Let ``seconds`` pass since the case was last saved, so that a save may claim them."""
    since = timezone.now() - timedelta(seconds=seconds + 1)
    Assignment.objects.filter(pk=assignment.pk).update(last_saved_at=since)


def submit(assignment: Assignment, payload: dict, active_seconds: int = 0) -> Assignment:
    if active_seconds:
        worked(assignment, active_seconds)
    assignment.refresh_from_db()
    return rating_submit(
        assignment=assignment,
        payload=payload,
        expected_version=assignment.version,
        active_seconds=active_seconds,
    )


def submit_all(study: Study, *, limit: int | None = None) -> None:
    """Every rater submits (the first ``limit`` of) their cases with varied answers."""
    for rater in study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym"):
        for n, assignment in enumerate(rater.assignments.order_by("position")[:limit]):
            submit(assignment, payload_for(n + int(rater.pseudonym[2:])), active_seconds=30 + n)


def coordinator_of(study: Study, username: str | None = None):
    user = UserFactory(**({"username": username} if username else {}))
    membership_add(study=study, user=user, role=Membership.Role.COORDINATOR)
    return user


def study_with_systems(**kwargs) -> Study:
    raters = kwargs.pop("raters", None) or [UserFactory(), UserFactory()]
    return make_study(systems=SYSTEMS, raters=raters, **kwargs)


def close_and_unblind(study: Study) -> Study:
    from studies.services.unblinding import study_unblind

    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    return study_unblind(study=study, actor=study.lead)


def full_marks_payload(labels=("A", "B"), confidence="high") -> dict:
    """A payload with six factors, three alternatives and three recommendations, all ticked."""

    def one():
        return {
            "depth": {"items": [{"text": f"factor {i}", "half": False} for i in range(6)]},
            "evidence": {"checked": [True, True, True]},
            "alternatives": {"items": [{"text": f"alt {i}", "half": False} for i in range(3)]},
            "structure": {"checked": [True, True, True]},
            "actionability": {"items": [{"text": f"rec {i}", "half": False} for i in range(3)]},
        }

    return {"responses": {label: one() for label in labels}, "confidence": confidence, "notes": ""}


def zero_payload():
    empty = {"items": []}
    unticked = {"checked": [False, False, False]}
    one = {"depth": empty, "evidence": unticked, "alternatives": empty, "structure": unticked,
           "actionability": empty}  # fmt: skip
    return {"responses": {"A": one, "B": dict(one)}}

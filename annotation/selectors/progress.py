"""Reads of rating progress: each rater's and each case's counts, a rater's studies and
queue, and why a rater cannot rate now. Nothing here joins the system of a response."""

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Count, Q

from annotation.models import Assignment
from studies.activity import RatingActivity
from studies.models import Membership, Study, StudyEvent

from .exposure import exposure_today, servable

# A case is done for its rater once submitted or skipped: it has left their queue.
HANDLED = (Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED)


# A skip the rater chose, not a case released when a crowd participant was screened out,
# returned or timed out (stored as skipped, with ``released_at``): a participant screened
# out before their first case skipped nothing.
RATER_SKIPPED = Q(assignments__status=Assignment.Status.SKIPPED, assignments__released_at=None)
RELEASED = Q(assignments__status=Assignment.Status.SKIPPED, assignments__released_at__isnull=False)


def rater_progress_table(*, study: Study):
    """Per rater pseudonym: cases submitted, skipped, released and assigned. No real names."""
    return (
        study.memberships.filter(role=Membership.Role.RATER)
        .annotate(
            total=Count("assignments"),
            done=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
            skipped=Count("assignments", filter=RATER_SKIPPED),
            released=Count("assignments", filter=RELEASED),
        )
        .order_by("pseudonym")
    )


CASES_PER_PAGE = 50


def case_progress_table(*, study: Study):
    return study.test_cases.annotate(
        assigned=Count("assignments"),
        done=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
        skipped=Count("assignments", filter=Q(assignments__status=Assignment.Status.SKIPPED)),
    ).order_by("position")


def case_progress_page(*, study: Study, number, per_page: int = CASES_PER_PAGE) -> Page:
    """One page of ``case_progress_table``: three queries, whatever the number of cases.

    The page is cut from the plain cases and only its rows are counted: counting through
    the annotated table would make the database group every case of the study.
    """
    ids = study.test_cases.order_by("position").values_list("pk", flat=True)
    page = Paginator(ids, per_page).get_page(number)
    page.object_list = list(case_progress_table(study=study).filter(pk__in=list(page.object_list)))
    return page


def study_rating_activity(*, study: Study) -> RatingActivity:
    """Registered with ``studies.activity``: what the set-up rules need to know, asked on
    every set-up page. Two existence queries: the started one reads the partial index of
    started assignments (``assignment_started``), empty until rating begins."""
    assignments = Assignment.objects.filter(test_case__study=study)
    started = assignments.exclude(status=Assignment.Status.TODO).exists()
    return RatingActivity(assigned=started or assignments.exists(), started=started)


def study_rating_counts(*, study: Study) -> dict[str, int]:
    """Test cases given to raters, and of those started (a draft saved) or submitted."""
    return Assignment.objects.filter(test_case__study=study).aggregate(
        assigned=Count("pk"), started=Count("pk", filter=~Q(status=Assignment.Status.TODO))
    )


def study_submitted_count(*, study_id: int) -> int:
    """Registered with ``studies.webhooks``: the study's submitted ratings, one per rater
    and case, for the webhooks' rating milestones."""
    return Assignment.objects.filter(
        test_case__study_id=study_id, status=Assignment.Status.SUBMITTED
    ).count()


@dataclass(frozen=True)
class Progress:
    done: int  # submitted or skipped
    total: int
    skipped: int = 0

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def rater_memberships(*, user) -> list[tuple[Membership, Progress, str | None]]:
    """Each study the user rates, with their progress and why they cannot rate now (or None)."""
    memberships = (
        Membership.objects.filter(user=user, role=Membership.Role.RATER)
        .select_related("study")
        .annotate(
            total=Count("assignments"),
            done=Count("assignments", filter=Q(assignments__status__in=HANDLED)),
            skipped=Count("assignments", filter=RATER_SKIPPED),
        )
        .order_by("study__name")
    )
    return [
        (m, Progress(done=m.done, total=m.total, skipped=m.skipped), rating_hold(rater=m))
        for m in memberships
    ]


def rater_progress(*, rater: Membership) -> Progress:
    counts = rater.assignments.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status__in=HANDLED)),
        skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED, released_at=None)),
    )
    return Progress(done=counts["done"], total=counts["total"], skipped=counts["skipped"])


def rating_hold(*, rater: Membership) -> str | None:
    """Why this rater cannot rate now, or None: "withdrawn", "excluded", "paused" (their
    participation), or "not_started", "closed", "on_hold" (the study's status)."""
    if rater.status != Membership.Status.ACTIVE:
        return rater.status
    study = rater.study
    if study.accepts_ratings:
        return None
    if study.is_draft:
        return "not_started"
    return "closed" if study.is_closed else "on_hold"


def pause_kind(*, rater: Membership) -> str:
    """Why a paused rater is paused, as their pages tell it: "automatic" (a quality rule
    paused them), "retraining" or "administrator"; "" when they are not paused."""
    if rater.status != Membership.Status.PAUSED:
        return ""
    event = (
        StudyEvent.objects.filter(
            membership=rater,
            kind__in=(StudyEvent.Kind.RATER_PAUSED, StudyEvent.Kind.RATER_SENT_TO_RETRAINING),
        )
        .order_by("-created_at", "-pk")
        .values_list("kind", "detail")
        .first()
    )
    if event is None:
        return "administrator"
    kind, detail = event
    if kind == StudyEvent.Kind.RATER_SENT_TO_RETRAINING:
        return "retraining"
    return "automatic" if (detail or {}).get("automatic") else "administrator"


def pending_cases(*, rater: Membership):
    """The rater's cases neither submitted nor skipped: still in their queue."""
    return rater.assignments.exclude(status__in=HANDLED)


def rater_assignments(*, rater: Membership):
    return rater.assignments.select_related("test_case").order_by("position")


def next_unrated(*, rater: Membership, after: Assignment | None = None) -> Assignment | None:
    """The next case neither submitted nor skipped in the rater's own order, wrapping around,
    that the daily exposure limits allow serving now (``exposure.servable``)."""
    pending = servable(pending=pending_cases(rater=rater), exposure=exposure_today(rater=rater))
    pending = pending.order_by("position")
    if after is not None:
        later = pending.filter(position__gt=after.position).first()
        if later is not None:
            return later
    return pending.first()


def rater_pseudonyms(*, study: Study) -> list[str]:
    """The study's raters' pseudonyms, in order (whose worksheet a file is)."""
    return list(
        study.memberships.filter(role=Membership.Role.RATER)
        .order_by("pseudonym")
        .values_list("pseudonym", flat=True)
    )

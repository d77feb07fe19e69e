"""Reads for coordinators."""

from django.db.models import Count, Q

from annotation.models import Assignment

from .models import Membership, Study


def coordinated_studies(*, user):
    if not user.is_authenticated:
        return Study.objects.none()
    scope = Q(lead=user) | Q(memberships__user=user, memberships__role=Membership.Role.COORDINATOR)
    if user.is_staff:
        scope = Q()
    return Study.objects.filter(scope).distinct().order_by("name")


def rater_progress_table(*, study: Study):
    """Per rater pseudonym: cases submitted and assigned. No real names."""
    return (
        study.memberships.filter(role=Membership.Role.RATER)
        .annotate(
            total=Count("assignments"),
            done=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
        )
        .order_by("pseudonym")
    )


def case_progress_table(*, study: Study):
    return study.test_cases.annotate(
        assigned=Count("assignments"),
        done=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
    ).order_by("position")


def rubric_for_display(*, rubric) -> list[dict]:
    """Everything the rating form and its help need about each dimension."""
    dimensions = []
    for dimension in rubric.dimensions.all():
        scoring = dimension.scoring()
        config = dimension.config
        dimensions.append(
            {
                "key": dimension.key,
                "name": dimension.name,
                "kind": dimension.kind,
                "scope": scoring.scope,
                "max": scoring.max_points,
                "unit": config.get("unit", "items"),
                "item": config.get("item", "item"),
                "measure": config.get("measure", ""),
                "example": config.get("example", ""),
                "edge_cases": config.get("edge_cases", ""),
                "half_weight_hint": config.get("half_weight_hint", ""),
                "bands": [[str(b.minimum), b.points] for b in getattr(scoring, "bands", ())],
                "band_labels": scoring.band_labels() if hasattr(scoring, "band_labels") else [],
                "criteria": config.get("criteria", []),
            }
        )
    return dimensions

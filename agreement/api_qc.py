"""The HTTP API's quality control: each rater's flags, and administrators' decisions.

The QC page's reads (``agreement.selectors``) and its one write
(``studies.services.rater_status_change``): coordinators read the flags; only
administrators pause, retrain, exclude, reinstate or dismiss, each with its reason.
"""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, scalar_fields
from studies import access
from studies.models import Membership
from studies.services import RATER_ACTIONS, rater_actions_available, rater_status_change

from .selectors import (
    agreement_is_stale,
    dismissed_flags,
    dismissed_flags_by_rater,
    qc_checks,
    qc_raters,
    rater_decisions,
    study_agreement,
)

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
# The administrators' decisions, as the QC page lists them.
DECISION_KINDS = [kind for _, kind in RATER_ACTIONS.values()]


class QcRaterSerializer(serializers.Serializer):
    """One rater's row of the QC page."""

    rater = serializers.CharField(help_text="the pseudonym")
    status = serializers.CharField()
    flags = serializers.ListField(
        child=serializers.CharField(), help_text="open flags: not dismissed"
    )
    dismissed = serializers.ListField(child=serializers.CharField())
    actions = serializers.ListField(
        child=serializers.ChoiceField(choices=list(RATER_ACTIONS)),
        help_text="the decisions that would change something for this rater",
    )
    check = serializers.DictField(
        allow_null=True,
        help_text="the stored checks (time per case, position bias, peer gaps, straight "
        "lines, gold items and attention checks); null before a first submitted case",
    )


QcFlagsSerializer = inline_serializer(
    "QcFlags",
    {
        "computed_at": serializers.DateTimeField(allow_null=True),
        "stale": serializers.BooleanField(),
        "raters": QcRaterSerializer(many=True),
        "decisions": inline_serializer(
            "QcDecision",
            {
                "created_at": serializers.DateTimeField(),
                "rater": serializers.CharField(),
                "label": serializers.CharField(),
                "reason": serializers.CharField(allow_blank=True),
                "automatic": serializers.BooleanField(),
            },
            many=True,
        ),
    },
)


def _open(check: dict | None, dismissed: set[str]) -> list[str]:
    """A rater's flags not yet dismissed; a flag whose evidence changes is a new flag."""
    return [flag for flag in (check or {}).get("flags", []) if flag not in dismissed]


def _row(membership: Membership, check: dict | None, dismissed: set[str]) -> dict:
    flags = _open(check, dismissed)
    return {
        "rater": membership.pseudonym,
        "status": membership.status,
        "flags": flags,
        "dismissed": [flag for flag in (check or {}).get("flags", []) if flag in dismissed],
        "actions": rater_actions_available(status=membership.status, has_open_flags=bool(flags)),
        "check": check,
    }


@extend_schema(
    summary="Quality-control flags per rater (by pseudonym) and the decisions taken",
    description=(
        "The QC page as data: per rater, the open and dismissed flags, the decisions "
        "open to an administrator, and the stored checks; then the decisions taken, "
        "newest first (the last 200). The checks are computed with the agreement: "
        "`stale` is true while they wait for a recompute."
    ),
    responses={200: QcFlagsSerializer, **ERRORS},
)
@api_view(["GET"])
def qc_flags(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    checks = qc_checks(agreement=agreement)
    dismissed = dismissed_flags_by_rater(study=study)
    return Response(
        {
            "computed_at": agreement.computed_at,
            "stale": agreement_is_stale(study=study, agreement=agreement),
            "raters": [
                _row(m, checks.get(m.pseudonym), dismissed.get(m.pk, set()))
                for m in qc_raters(study=study)
            ],
            "decisions": rater_decisions(study=study, kinds=DECISION_KINDS),
        }
    )


@extend_schema(
    summary="An administrator's decision about a rater, with the reason (administrators only)",
    description=(
        "`action`: pause, retrain, exclude, reinstate, or dismiss (the rater's open flags, "
        "as listed now). The reason is required and kept in the study's history. An "
        "excluded rater's ratings are kept but left out of the statistics."
    ),
    request=inline_serializer(
        "QcDecisionIn",
        {
            "rater": serializers.CharField(help_text="the pseudonym, e.g. R-03"),
            "action": serializers.ChoiceField(choices=list(RATER_ACTIONS)),
            "reason": serializers.CharField(max_length=2000),
        },
    ),
    responses={200: QcRaterSerializer, **ERRORS},
)
@api_view(["POST"])
def qc_decisions(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    if not request.user.is_staff:
        raise exceptions.PermissionDenied("Only administrators decide about raters.")
    fields = ("rater", "action", "reason")
    data = scalar_fields(body_object(request, fields=fields), fields)
    problems = [
        f"{name}: give a text."
        for name in ("rater", "action", "reason")
        if not isinstance(data.get(name), str)
    ]
    if problems:
        raise exceptions.ValidationError(problems)
    membership = (
        qc_raters(study=study).filter(pseudonym=data["rater"].replace("\x00", "")[:20]).first()
    )
    if membership is None:
        raise exceptions.NotFound("The study has no rater with that pseudonym.")
    check = qc_checks(agreement=study_agreement(study=study)).get(membership.pseudonym)
    changed = rater_status_change(
        membership=membership,
        action=data["action"],
        reason=data["reason"],
        actor=request.user,
        flags=_open(check, dismissed_flags(study=study, membership=membership)),
    )
    dismissed = dismissed_flags(study=study, membership=changed)
    return Response(_row(changed, check, dismissed))


urlpatterns = [
    path("studies/<slug:slug>/qc/flags/", qc_flags, name="qc_flags"),
    path("studies/<slug:slug>/qc/decisions/", qc_decisions, name="qc_decisions"),
]

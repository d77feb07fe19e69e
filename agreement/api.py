"""The HTTP API's agreement: the stored result of a study, with its freshness."""

from django.db import transaction
from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object
from studies import access
from studies.locks import study_lock

from .selectors import agreement_is_stale, study_agreement
from .services.plan import (
    AnalysisPlanError,
    aggregation_choices,
    aggregation_get,
    aggregation_set,
    primary_measure_choices,
    primary_measure_get,
    primary_measure_set,
    stratum_shares_set,
    stratum_shares_text,
)

# 400: the analysis plan's PATCH refuses a wrong body or rule (AnalysisPlanError).
ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


@extend_schema(
    summary="The stored agreement result, and whether it is current",
    description=(
        "`stale` is true while ratings or settings changed since the result was computed "
        "(the change requested a recompute; reading the result never does); "
        "`intervals_pending` while the bootstrap intervals are still being computed. "
        "`result` is empty until a first computation."
    ),
    responses={
        200: inline_serializer(
            "Agreement",
            {
                "computed_at": serializers.DateTimeField(allow_null=True),
                "stale": serializers.BooleanField(),
                "intervals_pending": serializers.BooleanField(),
                "ratings": serializers.IntegerField(
                    help_text="the ratings counted: one per rater and response rated, or, in "
                    "a rubric of preferences only, one per rater and case (a verdict)"
                ),
                "result": serializers.DictField(),
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def study_agreement_result(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    stale = agreement_is_stale(study=study, agreement=agreement)
    result = agreement.result or {}
    return Response(
        {
            "computed_at": agreement.computed_at,
            "stale": stale,
            "intervals_pending": bool(result.get("intervals_pending")),
            "ratings": agreement.n_ratings,
            "result": result,
        }
    )


AnalysisPlanSerializer = inline_serializer(
    "AnalysisPlan",
    {
        "primary_measure": serializers.CharField(allow_blank=True),
        "primary_measures": serializers.DictField(
            child=serializers.CharField(),
            help_text="the measures a primary question can name: {measure: its question}",
        ),
        "stratum_shares": serializers.CharField(allow_blank=True),
        "aggregation": serializers.DictField(child=serializers.CharField()),
        "min_ratings": serializers.IntegerField(),
        "min_ratings_set": serializers.BooleanField(),
        "min_ratings_default": serializers.IntegerField(),
        "questions": serializers.ListField(child=serializers.DictField()),
    },
)


def _plan(study) -> dict:
    aggregation = aggregation_get(study=study)
    return {
        "primary_measure": primary_measure_get(study=study),
        "primary_measures": dict(primary_measure_choices(study=study)),
        "stratum_shares": stratum_shares_text(study=study),
        "aggregation": aggregation["rules"],
        "min_ratings": aggregation["min_ratings"],
        "min_ratings_set": aggregation["min_ratings_set"],
        "min_ratings_default": aggregation["min_ratings_default"],
        "questions": [
            {
                "key": row["key"],
                "name": row["name"],
                "rules": [rule for rule, _ in row["rules"]],
                "default": row["default"],
                "analysed_apart": row["apart"],
            }
            for row in aggregation_choices(study=study)
        ],
    }


# The fields a PATCH of the analysis plan may send.
PLAN_FIELDS = ("primary_measure", "stratum_shares", "aggregation", "min_ratings")


@extend_schema(
    methods=["GET"],
    summary="The analysis plan: primary question, stratum shares, aggregation per item",
    responses={200: AnalysisPlanSerializer, **ERRORS},
)
@extend_schema(
    methods=["PATCH"],
    summary="Change the analysis plan: primary question, stratum shares, aggregation",
    description=(
        'Each field left out stays. `primary_measure`: one of `primary_measures`, or "" '
        "for none (no primary question: every question is corrected with Holm's method), "
        'until unblinding; `stratum_shares`: "stratum: share" per line as on the report '
        'page (every stratum of the sample, adding up to 100%; "" removes them); '
        "`aggregation`: {dimension key: rule} (a question left out of it takes its "
        "default); `min_ratings`: a whole number, or null for the default. Any other field "
        "is refused. All or nothing; a change after opening is recorded as a deviation."
    ),
    request=inline_serializer(
        "AnalysisPlanIn",
        {
            "primary_measure": serializers.CharField(allow_blank=True, required=False),
            "stratum_shares": serializers.CharField(allow_blank=True, required=False),
            "aggregation": serializers.DictField(child=serializers.CharField(), required=False),
            "min_ratings": serializers.IntegerField(allow_null=True, required=False),
        },
    ),
    responses={200: AnalysisPlanSerializer, 400: ErrorResponseSerializer, **ERRORS},
)
@api_view(["GET", "PATCH"])
def study_analysis_plan(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    if request.method == "PATCH":
        body = body_object(request, fields=PLAN_FIELDS, what="part of the analysis plan")
        for name in ("primary_measure", "stratum_shares"):
            if name in body and not isinstance(body[name], str):
                raise exceptions.ValidationError([f"{name}: send a text."])
        # One transaction, the study locked first (the project's lock order, as each
        # service below locks it): the plan changes in full or not at all.
        with transaction.atomic():
            study_lock(study.pk)
            if "primary_measure" in body:
                primary_measure_set(
                    study=study, actor=request.user, measure=body["primary_measure"][:64]
                )
            if "aggregation" in body or "min_ratings" in body:
                # What the body leaves out stays as it is.
                current = aggregation_get(study=study)
                rules = body.get("aggregation", current["rules"])
                if not isinstance(rules, dict) or not all(
                    isinstance(v, str) for v in rules.values()
                ):
                    raise AnalysisPlanError(
                        "`aggregation` maps each dimension key to a rule's name."
                    )
                kept = current["min_ratings"] if current["min_ratings_set"] else None
                aggregation_set(
                    study=study,
                    actor=request.user,
                    rules=rules,
                    min_ratings=body.get("min_ratings", kept),
                )
            if "stratum_shares" in body:
                stratum_shares_set(study=study, actor=request.user, text=body["stratum_shares"])
    return Response(_plan(study))


urlpatterns = [
    path("studies/<slug:slug>/agreement/", study_agreement_result, name="agreement"),
    path("studies/<slug:slug>/analysis-plan/", study_analysis_plan, name="analysis_plan"),
]

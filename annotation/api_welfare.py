"""The HTTP API's rater welfare: the study's pay and time settings, and the check of the
pay they work out to, as the welfare page shows them.

The same access helpers, selectors and services as the pages, never their views."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, row_fields_refuse, scalar_fields
from studies import access, selectors
from studies.services import welfare as welfare_service

from .selectors.pay import PHASES, pay_check

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


def _study(request, slug, role=access.COORDINATOR):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    return study


STRATUM_FIELDS = ("stratum", "content_warning", "daily_minutes")


def _stratum_rows(**kwargs):
    """The strata's rows: one per stratum of the study's cases."""
    return inline_serializer(
        "WelfareStratum",
        {
            "stratum": serializers.CharField(allow_blank=True),
            "content_warning": serializers.CharField(allow_blank=True),
            "daily_minutes": serializers.IntegerField(allow_null=True),
        },
        many=True,
        **kwargs,
    )


def _welfare_fields(*, required: bool) -> dict:
    """The settings as the API reads and writes them (the service checks every bound)."""

    def money() -> serializers.DecimalField:
        return serializers.DecimalField(
            max_digits=9, decimal_places=2, allow_null=True, required=required
        )

    return {
        "daily_minutes": serializers.IntegerField(
            allow_null=True, min_value=1, max_value=1440, required=required
        ),
        "pay_basis": serializers.ChoiceField(
            choices=["none", "hour", "case", "unpaid"], required=required
        ),
        "pay_amount": money(),
        "pay_currency": serializers.CharField(
            allow_blank=True, help_text="ISO 4217, e.g. EUR", required=required
        ),
        "minimum_hourly": money(),
        "recruitment": serializers.CharField(allow_blank=True, required=required),
        "retention_days": serializers.IntegerField(
            allow_null=True, min_value=0, max_value=3650, required=required
        ),
        "profile_min_cell": serializers.IntegerField(min_value=3, max_value=100, required=required),
    }


WelfareInSerializer = inline_serializer(
    "WelfareSettingsIn",
    {
        **_welfare_fields(required=False),
        "strata": _stratum_rows(required=False),
    },
)
PayRowSerializer = inline_serializer(
    "PayCheckRow",
    many=True,
    fields={
        "phase": serializers.ChoiceField(choices=[key for key, _ in PHASES]),
        "stratum": serializers.CharField(allow_null=True),
        "n": serializers.IntegerField(),
        "median_seconds": serializers.FloatField(),
        "p90_seconds": serializers.FloatField(),
        "hourly_at_median": serializers.CharField(allow_null=True),
        "hourly_at_p90": serializers.CharField(allow_null=True),
        "below_minimum": serializers.BooleanField(),
    },
)
WelfareOutSerializer = inline_serializer(
    "WelfareSettings",
    {
        **_welfare_fields(required=True),
        "strata": _stratum_rows(),
        "frozen": serializers.BooleanField(),
        "pay_check": inline_serializer(
            "PayCheck",
            {
                "rows": PayRowSerializer,
                "untimed": serializers.IntegerField(),
                "warnings": serializers.ListField(child=serializers.CharField()),
            },
        ),
    },
)


def _money(value) -> str | None:
    return None if value is None else str(value)


def _welfare_out(study) -> dict:
    settings = selectors.welfare_settings_for(study=study)
    check = pay_check(study=study)
    out = {name: getattr(settings, name) for name in welfare_service.WELFARE_FIELDS}
    out["pay_amount"], out["minimum_hourly"] = (
        _money(out["pay_amount"]),
        _money(out["minimum_hourly"]),
    )
    out["strata"] = [
        {key: row[key] for key in ("stratum", "content_warning", "daily_minutes")}
        for row in selectors.welfare_strata_table(study=study)
    ]
    out["frozen"] = study.is_frozen
    out["pay_check"] = {
        "rows": [
            {
                "phase": row.phase,
                "stratum": row.stratum,
                "n": row.n,
                "median_seconds": row.median_seconds,
                "p90_seconds": row.p90_seconds,
                "hourly_at_median": _money(row.hourly_at_median),
                "hourly_at_p90": _money(row.hourly_at_p90),
                "below_minimum": row.below,
            }
            for row in check.rows
        ],
        "untimed": check.untimed,
        "warnings": [w for key, _ in PHASES for w in check.warnings(key)],
    }
    return out


@extend_schema(
    methods=["GET"],
    summary="The study's rater-welfare settings, per-stratum warnings and limits, pay check",
    responses={200: WelfareOutSerializer, **ERRORS},
)
@extend_schema(
    methods=["PUT"],
    summary="Change the rater-welfare settings (all or nothing)",
    description=(
        "Fields left out keep their value, and so do strata left out of `strata`. Exposure "
        "limits and content warnings freeze when the study opens; pay, recruitment and "
        "retention can change at any time. Every change is recorded in the audit trail."
    ),
    request=WelfareInSerializer,
    responses={200: WelfareOutSerializer, **ERRORS},
)
@api_view(["GET", "PUT"])
def study_welfare(request, slug):
    study = _study(request, slug)
    if request.method == "PUT":
        fields = (*welfare_service.WELFARE_FIELDS, "strata")
        body = dict(body_object(request, fields=fields, what="a welfare setting"))
        strata = body.pop("strata", [])
        row_fields_refuse(strata, STRATUM_FIELDS, where="strata", what="a field of a stratum")
        if not isinstance(strata, list):
            raise exceptions.ValidationError(
                ['strata: send a list of {"stratum", "content_warning", "daily_minutes"}.']
            )
        values = scalar_fields(body, list(body))
        welfare_service.welfare_settings_update(
            study=study, actor=request.user, values=values, strata=strata
        )
    return Response(_welfare_out(study))


urlpatterns = [
    path("studies/<slug:slug>/welfare/", study_welfare, name="welfare"),
]

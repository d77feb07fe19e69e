"""The HTTP API's monitored collection of the primary question: its state (what the
report's section shows), the lead's choice of monitoring before the study opens, and the
lead's early stop once the monitor has decided.

Each calls what its page calls, under the same access rule: the state is the study's
coordinators' to read and, before unblinding, symmetric in the two systems (no direction,
estimate, interval or statistic); the choice and the stop are the study lead's.
"""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, scalar_fields
from studies import access

from .models import PrimaryMonitor
from .selectors.monitor import monitor_report, monitoring_settings
from .selectors.results import study_agreement
from .services.monitor import monitoring_set, study_stop_early

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}

MonitorSerializer = inline_serializer(
    "PrimaryMonitor",
    {
        "settings": inline_serializer(
            "MonitoringSettings",
            {
                "monitoring": serializers.BooleanField(),
                "alpha": serializers.CharField(help_text='two-sided, e.g. "0.050"'),
                "expected_effect": serializers.CharField(help_text="|p1 - 0.5|, e.g. 0.080"),
                "margin": serializers.CharField(help_text="half-width around 0.5"),
                "mixing": serializers.FloatField(help_text="c of the Beta(c, c) mixture"),
                "editable": serializers.BooleanField(help_text="until the study opens"),
            },
        ),
        "monitor": serializers.JSONField(
            help_text="the report's monitor section: monitoring (false: nothing else); "
            f"state ({', '.join(PrimaryMonitor.State.values)}), state_label, n (non-tied "
            "comparisons), threshold, current, evaluated, evaluated_at, alpha, "
            "expected_effect, margin, may_stop, stopped_early (at, state, n, threshold); "
            "after unblinding also statistic, primary (the anytime-valid interval), fixed "
            "and valid"
        ),
    },
)


def _answer(study) -> dict:
    unblinded = study.is_unblinded
    result = study_agreement(study=study).result or {}
    return {
        "settings": monitoring_settings(study=study),
        "monitor": monitor_report(
            study=study, comparison=result.get("comparison") if unblinded else None
        ),
    }


@extend_schema(
    methods=["GET"],
    summary="The monitored primary question: settings and state (symmetric until unblinding)",
    responses={200: MonitorSerializer, **ERRORS},
)
@extend_schema(
    methods=["PUT"],
    summary="Choose monitored collection of the primary question (the study lead, before opening)",
    description=(
        "`monitoring` (true or false), `alpha`, `expected_effect` and `margin` (numbers or "
        "strings); each field left out keeps its current value. Monitoring needs a win rate "
        "as the primary question; it is frozen with the protocol when the study opens."
    ),
    request=inline_serializer(
        "MonitoringIn",
        {
            "monitoring": serializers.BooleanField(required=False),
            "alpha": serializers.CharField(required=False),
            "expected_effect": serializers.CharField(required=False),
            "margin": serializers.CharField(required=False),
        },
    ),
    responses={200: MonitorSerializer, **ERRORS},
)
@api_view(["GET", "PUT"])
def study_monitor(request, slug):
    if request.method == "GET":
        study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
        return Response(_answer(study))
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    fields = ("monitoring", "alpha", "expected_effect", "margin")
    body = scalar_fields(body_object(request, fields=fields), fields)
    current = monitoring_settings(study=study)
    enabled = body.get("monitoring", current["monitoring"])
    if not isinstance(enabled, bool):
        raise exceptions.ValidationError(["monitoring: true or false."])
    monitoring_set(
        study=study,
        actor=request.user,
        enabled=enabled,
        **{name: str(body.get(name, current[name]))[:20] for name in fields[1:]},
    )
    return Response(_answer(study))


@extend_schema(
    summary="Stop collection under the plan: close the study once the monitor has decided",
    description=(
        "The study lead's: refused (400) unless the plan monitors, the study is open, the "
        "monitor has decided (or found no difference larger than the margin) and its state "
        "reflects every rating so far. Records the non-tied comparisons and the monitor's "
        "value with the closing."
    ),
    request=None,
    responses={200: MonitorSerializer, **ERRORS},
)
@api_view(["POST"])
def study_monitor_stop(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    body_object(request, fields=())
    study = study_stop_early(study=study, actor=request.user)
    return Response(_answer(study))


urlpatterns = [
    path("studies/<slug:slug>/monitor/", study_monitor, name="monitor"),
    path("studies/<slug:slug>/monitor/stop/", study_monitor_stop, name="monitor_stop"),
]

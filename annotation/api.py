"""The HTTP API's people and results: raters, invitations, assignment, progress, exports,
unblinding, and a rater's own assignments.

The same access helpers, forms, selectors and services as the pages, never their views; an
export is ``export_response``, the results page's own answer, so a file from the API is
byte for byte the file from the page.
"""

from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from annotation.services import assignment
from core.api import (
    ErrorResponseSerializer,
    Pagination,
    body_object,
    file_download,
    form_errors,
    paginated,
    row_fields_refuse,
    scalar_fields,
)
from core.api_jobs import job_accepted, job_url
from jobs.models import Job
from studies import access, selectors
from studies.forms import UnblindForm
from studies.models import Invitation, Membership
from studies.services import invitations, unblinding
from studies.services import welfare as welfare_service

from . import assignment_jobs, export_jobs, exports
from .export_responses import CONTENT_TYPES as EXPORT_CONTENT_TYPES
from .export_responses import export_job_response, export_response
from .forms import AddAccountForm, CommentDigestForm, InvitationForm
from .selectors import (
    exposure_today,
    held_back,
    pending_cases,
    rater_assignments,
    rater_memberships,
    rater_progress_table,
    study_rating_counts,
    study_skip_summary,
)
from .selectors.comments import (
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    CommentSource,
    comments_digest,
    comments_unread_count,
)
from .selectors.pay import PHASES, pay_check
from .services.comment_reads import MAX_KEYS, comments_mark_read

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
# The exports' media types without their parameters (a schema's content is keyed by type).
EXPORT_MEDIA_TYPES = sorted({media.split(";")[0] for media in EXPORT_CONTENT_TYPES.values()})
# The exports prepared as jobs, the report bundle among them (agreement registers it once
# the apps are ready, before the URLs, and so this module, are loaded).
EXPORT_JOB_KEYS = list(export_jobs.EXPORT_KINDS)
EXPORT_JOB_MEDIA_TYPES = sorted(
    {kind.content_type.split(";")[0] for kind in export_jobs.EXPORT_KINDS.values()}
)


def _study(request, slug, role=access.COORDINATOR):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    return study


class RaterSerializer(serializers.ModelSerializer):
    """A rater as coordinators see them: by pseudonym only."""

    done = serializers.IntegerField(help_text="Cases submitted.")
    skipped = serializers.IntegerField(help_text="Cases skipped: counted apart, never a rating.")
    total = serializers.IntegerField()

    class Meta:
        model = Membership
        fields = ["pseudonym", "status", "done", "skipped", "total"]


class InvitationSerializer(serializers.ModelSerializer):
    state = serializers.SerializerMethodField()
    personal = serializers.BooleanField(source="is_personal")

    class Meta:
        model = Invitation
        fields = ["token_hash", "role", "note", "personal", "state", "created_at", "expires_at"]

    def get_state(self, invitation) -> str:
        return selectors.invitation_state(invitation)


class InvitationCreatedSerializer(InvitationSerializer):
    link = serializers.CharField(help_text="Shown once: the token is not stored.")

    class Meta(InvitationSerializer.Meta):
        fields = [*InvitationSerializer.Meta.fields, "link"]


@extend_schema(
    methods=["GET"],
    summary="The study's raters, by pseudonym, with their progress",
    operation_id="studies_raters_list",  # the id it had before its pages were described
    responses={200: paginated("PaginatedRaterList", RaterSerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Invite an existing account to rate, or (the lead only) to adjudicate; it joins "
    "once the person accepts",
    request=inline_serializer(
        "RaterInvite",
        {
            "username": serializers.CharField(),
            # Text, not a choice: another enum named "role" would collide in the schema.
            "role": serializers.CharField(
                required=False,
                default=Membership.Role.RATER,
                help_text="rater, or adjudicator (the study lead only)",
            ),
        },
    ),
    responses={
        202: inline_serializer("RaterInvited", {"message": serializers.CharField()}),
        **ERRORS,
    },
)
@api_view(["GET", "POST"])
def study_raters(request, slug):
    study = _study(request, slug)
    if request.method == "GET":
        paginator = Pagination()
        page: list | None = paginator.paginate_queryset(rater_progress_table(study=study), request)
        return paginator.get_paginated_response(RaterSerializer(page, many=True).data)
    fields = ("username", "role")
    body = scalar_fields(body_object(request, fields=fields), fields)
    role = body.get("role") or Membership.Role.RATER
    if role not in invitations.ACCOUNT_ROLES:
        raise exceptions.ValidationError(["role: use rater or adjudicator."])
    if role == Membership.Role.ADJUDICATOR and request.user.pk != study.lead_id:
        raise exceptions.PermissionDenied("Only the study lead invites adjudicators.")
    form = AddAccountForm(body)
    if not form.is_valid():
        raise form_errors(form)
    invitations.rater_invite_account(
        study=study, username=form.cleaned_data["username"], actor=request.user, role=role
    )
    # The same answer whether or not the account exists, as on the page.
    return Response({"message": invitations.ACCOUNT_INVITED}, status=status.HTTP_202_ACCEPTED)


INVITATION_FIELDS = ("note", "days", "role")


@extend_schema(
    methods=["GET"],
    summary="The study's invitations",
    operation_id="studies_invitations_list",  # the id it had before its pages were described
    responses={200: paginated("PaginatedInvitationList", InvitationSerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Create an invitation link (only the lead may invite coordinators and adjudicators)",
    request=inline_serializer(
        "InvitationCreate",
        {
            "note": serializers.CharField(required=False),
            "days": serializers.IntegerField(required=False, default=invitations.DEFAULT_DAYS),
            "role": serializers.ChoiceField(choices=Membership.Role.choices, required=False),
        },
    ),
    responses={201: InvitationCreatedSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def study_invitations(request, slug):
    study = _study(request, slug)
    if request.method == "GET":
        paginator = Pagination()
        page: list | None = paginator.paginate_queryset(
            study.invitations.order_by("-created_at"), request
        )
        return paginator.get_paginated_response(InvitationSerializer(page, many=True).data)
    # A misspelt "days" would otherwise give the link the default life, unseen.
    body = body_object(request, fields=INVITATION_FIELDS, what="a field of an invitation")
    data = scalar_fields(body, INVITATION_FIELDS)
    data.setdefault("days", invitations.DEFAULT_DAYS)
    form = InvitationForm(data, study=study, user=request.user)
    asks_coordinator = data.get("role") not in (None, "", Membership.Role.RATER)
    if asks_coordinator and "role" not in form.fields:
        raise exceptions.PermissionDenied(
            "Only the study lead invites other coordinators and adjudicators."
        )
    if not form.is_valid():
        raise form_errors(form)
    invitation, token = invitations.invitation_create(
        study=study,
        created_by=request.user,
        role=form.cleaned_data.get("role") or Membership.Role.RATER,
        note=form.cleaned_data["note"],
        days=form.cleaned_data["days"],
    )
    link = request.build_absolute_uri(reverse("studies:invitation", args=[token]))
    response = Response({**InvitationSerializer(invitation).data, "link": link}, status=201)
    response["Cache-Control"] = "no-store"
    return response


@extend_schema(summary="Revoke an invitation", request=None, responses={204: None, **ERRORS})
@api_view(["POST"])
def invitation_revoke(request, slug, token_hash):
    study = _study(request, slug)
    body_object(request, fields=())
    invitation = study.invitations.filter(token_hash=token_hash).first()
    if invitation is None:
        raise exceptions.NotFound("The study has no such invitation.")
    invitations.invitation_revoke(invitation=invitation, actor=request.user)
    return Response(status=status.HTTP_204_NO_CONTENT)


AssignJobSerializer = inline_serializer(
    "AssignJob",
    {
        "job": serializers.CharField(help_text="this job's URL: GET it for its progress"),
        "state": serializers.ChoiceField(choices=Job.State.values),
        "stage": serializers.CharField(help_text="planning or writing, while it runs"),
        "done": serializers.IntegerField(),
        "total": serializers.IntegerField(),
        "created": serializers.DictField(child=serializers.IntegerField()),
        "problem": serializers.CharField(),
        "design": serializers.CharField(),
    },
)


@extend_schema(
    summary="Assign test cases to the raters under the study's design (idempotent)",
    description=(
        "A small design (fewer than ASSIGN_JOB_FROM assignments) is assigned inside the "
        "request: 200 with the new cases per rater. A larger one runs as a job: 202 with "
        "the job's URL (also in Location), to GET until its state is done, failed or "
        "stopped. A press while a job runs answers that job."
    ),
    request=None,
    responses={
        200: inline_serializer(
            "Assigned", {"created": serializers.DictField(child=serializers.IntegerField())}
        ),
        202: AssignJobSerializer,
        **ERRORS,
    },
)
@api_view(["POST"])
def study_assign(request, slug):
    study = _study(request, slug)
    body_object(request, fields=())
    job = assignment_jobs.assignment_job_start(study=study, actor=request.user)
    if job.is_active:
        body = _assign_job_body(request, study, job)
        return job_accepted(body, body["job"])
    if job.state != Job.State.DONE:
        raise assignment.AssignmentDesignError(job.error)
    created = job.result.get("created", {})
    return Response({"created": created, "design": assignment.design_summary(study=study)})


@extend_schema(
    summary="An Assign job: its progress, then how it ended",
    responses={200: AssignJobSerializer, **ERRORS},
)
@api_view(["GET"])
def study_assign_job(request, slug, job_uuid):
    study = _study(request, slug)
    job = assignment_jobs.assignment_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise exceptions.NotFound("The study has no such assignment job.")
    return Response(_assign_job_body(request, study, job))


def _assign_job_body(request, study, job) -> dict:
    status_ = assignment_jobs.assignment_job_status(job=job)
    return {
        "job": job_url(request, "api:assign_job", study.slug, job.uuid),
        **{key: status_[key] for key in ("state", "stage", "done", "total", "created", "problem")},
        "design": assignment.design_summary(study=study),
    }


@extend_schema(
    summary="Progress: cases, assignments, and each rater's (by pseudonym)",
    responses={
        200: inline_serializer(
            "Progress",
            {
                "status": serializers.CharField(),
                "cases": serializers.IntegerField(),
                "systems": serializers.ListField(child=serializers.CharField()),
                "assigned": serializers.IntegerField(),
                "started": serializers.IntegerField(),
                "submitted": serializers.IntegerField(),
                "skips": inline_serializer(
                    "SkipCounts",
                    {
                        "total": serializers.IntegerField(),
                        "k_unmet": serializers.IntegerField(
                            help_text="Sample cases left short of the design's raters by skips."
                        ),
                        "per_stratum": serializers.DictField(child=serializers.IntegerField()),
                        "per_rater": serializers.DictField(child=serializers.IntegerField()),
                        "per_case": serializers.DictField(
                            child=serializers.IntegerField(), help_text="By case id."
                        ),
                        "handed_on": serializers.BooleanField(
                            help_text="Whether the design gives a skipped case to another "
                            "rater (k raters per case); false where every rater rates every "
                            "case."
                        ),
                    },
                ),
                "raters": RaterSerializer(many=True),
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def study_progress(request, slug):
    study = _study(request, slug)
    summary = selectors.study_case_summary(study=study)
    counts = study_rating_counts(study=study)
    raters = list(rater_progress_table(study=study))
    skips = study_skip_summary(study=study)
    return Response(
        {
            "status": study.status,
            "cases": summary["cases"],
            "systems": summary["systems"],
            "assigned": counts["assigned"],
            "started": counts["started"],
            "submitted": sum(r.done for r in raters),
            "skips": {
                "total": skips.total,
                "k_unmet": skips.k_unmet,
                "per_stratum": dict(skips.per_stratum),
                "per_rater": dict(skips.per_rater),
                "per_case": {case_id: count for case_id, _, count in skips.per_case},
                "handed_on": skips.handed_on,
            },
            "raters": RaterSerializer(raters, many=True).data,
        }
    )


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


ExportJobSerializer = inline_serializer(
    "ExportJob",
    {
        "job": serializers.CharField(help_text="this job's URL: GET it for its progress"),
        "export": serializers.CharField(help_text="which export: " + ", ".join(EXPORT_JOB_KEYS)),
        "state": serializers.ChoiceField(choices=Job.State.values),
        "stage": serializers.CharField(help_text="writing, while it runs"),
        "done": serializers.IntegerField(help_text="bytes (rows for Excel) written so far"),
        "total": serializers.IntegerField(),
        "message": serializers.CharField(),
        "problem": serializers.CharField(
            help_text="why it failed or stopped, or why its file is gone (expired, replaced)"
        ),
        "file": inline_serializer(
            "ExportJobFile",
            {
                "name": serializers.CharField(help_text="the direct export's file name"),
                "size": serializers.IntegerField(help_text="bytes"),
                "content_type": serializers.CharField(),
                "sha256": serializers.CharField(),
                "expires_at": serializers.DateTimeField(),
            },
            allow_null=True,
        ),
        "download": serializers.CharField(
            allow_null=True, help_text="the file's URL once it is ready, else null"
        ),
    },
)


def _export_job_body(request, study, job) -> dict:
    status_ = export_jobs.export_job_status(job=job)
    return {
        "job": job_url(request, "api:export_job", study.slug, job.uuid),
        **{
            key: status_[key]
            for key in ("export", "state", "stage", "done", "total", "message", "problem", "file")
        },
        "download": (
            job_url(request, "api:export_job_download", study.slug, job.uuid)
            if status_["file"]
            else None
        ),
    }


@extend_schema(
    summary="Prepare a large export as a job: the worksheet, Excel worksheet, long table, bundle",
    description=(
        "fmt is one of " + ", ".join(EXPORT_JOB_KEYS) + ". 202 with the job's URL (also in "
        "Location), to GET until its state is done, failed or stopped; once done, its "
        "`download` is the file, byte for byte the direct export. A request while a job of "
        "the same export runs answers that job."
    ),
    parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=EXPORT_JOB_KEYS)],
    request=None,
    responses={202: ExportJobSerializer, **ERRORS},
)
@api_view(["POST"])
def study_export_job_start(request, slug, fmt):
    study = _study(request, slug)
    if fmt not in export_jobs.EXPORT_KINDS:
        raise exceptions.NotFound("No such export is prepared as a job.")
    body_object(request, fields=())
    job = export_jobs.export_job_start(study=study, key=fmt, actor=request.user)
    body = _export_job_body(request, study, job)
    return job_accepted(body, body["job"])


def _export_job(request, slug, job_uuid):
    study = _study(request, slug)
    job = export_jobs.export_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise exceptions.NotFound("The study has no such export job.")
    return study, job


@extend_schema(
    summary="An export job: its progress, then its file",
    responses={200: ExportJobSerializer, **ERRORS},
)
@api_view(["GET"])
def study_export_job(request, slug, job_uuid):
    study, job = _export_job(request, slug, job_uuid)
    return Response(_export_job_body(request, study, job))


@extend_schema(
    summary="An export job's file (404 once it has expired or been replaced)",
    responses={
        **{(200, media): OpenApiTypes.BINARY for media in EXPORT_JOB_MEDIA_TYPES},
        **ERRORS,
    },
)
@api_view(["GET"])
@file_download
def study_export_job_download(request, slug, job_uuid):
    _, job = _export_job(request, slug, job_uuid)
    return export_job_response(job=job)


@extend_schema(
    summary="An export, streamed: worksheet (CSV/xlsx), long CSV, data dictionary, key",
    description=(
        "fmt is one of " + ", ".join(exports.FORMATS) + ". The key only once the study is "
        "unblinded. `?rater=R-01` limits a worksheet to one rater."
    ),
    parameters=[
        OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(exports.FORMATS)),
        OpenApiParameter("rater", str, OpenApiParameter.QUERY, required=False),
    ],
    # Each format's own media type (``export_responses.CONTENT_TYPES``), as a download.
    responses={
        **{(200, media): OpenApiTypes.BINARY for media in EXPORT_MEDIA_TYPES},
        **ERRORS,
    },
)
@api_view(["GET"])
@file_download
def study_export(request, slug, fmt):
    # The results page's own response: its rules, file names and streaming.
    study = _study(request, slug)
    return export_response(study=study, fmt=fmt, rater=request.query_params.get("rater") or None)


@extend_schema(
    summary="Unblind a closed study (the study lead only; recorded in the audit trail)",
    request=inline_serializer(
        "Unblind",
        {
            "confirm": serializers.BooleanField(help_text="Must be true: unblinding is final."),
            "reason": serializers.CharField(required=False),
        },
    ),
    responses={
        200: inline_serializer(
            "Unblinded",
            {"status": serializers.CharField(), "unblinded_at": serializers.DateTimeField()},
        ),
        **ERRORS,
    },
)
@api_view(["POST"])
def study_unblind(request, slug):
    study = _study(request, slug, role=access.LEAD)
    fields = ("confirm", "reason")
    data = scalar_fields(body_object(request, fields=fields), fields)
    if data.get("confirm") is not True:
        raise exceptions.ValidationError(["confirm: send true; unblinding cannot be undone."])
    form = UnblindForm({"confirm": "on", "reason": data.get("reason") or ""})
    if not form.is_valid():
        raise form_errors(form)
    study = unblinding.study_unblind(
        study=study, actor=request.user, reason=form.cleaned_data["reason"]
    )
    return Response({"status": study.status, "unblinded_at": study.unblinded_at})


def _limit_until(rater: Membership):
    """When the daily exposure limit holding some of the rater's cases back lifts, or None:
    the rating pages' rule (``selectors.exposure``)."""
    exposure = exposure_today(rater=rater)
    return (
        exposure.resume_at
        if held_back(pending=pending_cases(rater=rater), exposure=exposure)
        else None
    )


@extend_schema(
    summary="Your own assignments as a rater (rating itself is in the browser)",
    responses={
        200: inline_serializer(
            "MyStudies",
            {
                "studies": inline_serializer(
                    "MyStudy",
                    {
                        "study": serializers.CharField(),
                        "name": serializers.CharField(),
                        "status": serializers.CharField(),
                        "hold": serializers.CharField(
                            allow_null=True,
                            help_text="Why you cannot rate now (paused, closed, ...), or null.",
                        ),
                        "done": serializers.IntegerField(help_text="Cases submitted or skipped."),
                        "skipped": serializers.IntegerField(),
                        "total": serializers.IntegerField(),
                        "limit_until": serializers.DateTimeField(
                            allow_null=True,
                            help_text="When a daily exposure limit holds some of your cases "
                            "back today, when it lifts (your next midnight, in your time zone); "
                            "else null.",
                        ),
                        "assignments": inline_serializer(
                            "MyAssignment",
                            {
                                "position": serializers.IntegerField(),
                                "status": serializers.CharField(
                                    help_text="todo, draft, submitted or skipped."
                                ),
                                "url": serializers.CharField(),
                            },
                            many=True,
                        ),
                    },
                    many=True,
                )
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def my_assignments(request):
    studies = []
    for membership, progress, hold in rater_memberships(user=request.user):
        studies.append(
            {
                "study": membership.study.slug,
                "name": membership.study.name,
                "status": membership.status,
                "hold": hold,
                "done": progress.done,
                "skipped": progress.skipped,
                "total": progress.total,
                "limit_until": _limit_until(membership) if hold is None else None,
                "assignments": [
                    {
                        "position": a.position,
                        "status": a.status,
                        "url": request.build_absolute_uri(
                            reverse("annotation:rate", args=[a.uuid])
                        ),
                    }
                    for a in rater_assignments(rater=membership)
                ],
            }
        )
    return Response({"studies": studies})


class CommentSerializer(serializers.Serializer):
    """One comment of the digest (``annotation.selectors.comments.Comment``)."""

    key = serializers.CharField(help_text="names the comment in a read mark")
    # The field's name shadows Field.source in the stubs; the API's name is the contract.
    source = serializers.ChoiceField(choices=CommentSource.choices)  # type: ignore[assignment]
    when = serializers.DateTimeField()
    rater = serializers.CharField(help_text="the rater's pseudonym")
    case = serializers.CharField(help_text="the test case id; empty for feedback")
    stratum = serializers.CharField()
    dimension = serializers.CharField(help_text="the dimension's name, where one")
    dimension_key = serializers.CharField()
    response = serializers.CharField(
        help_text='"Response B": the label the rater saw on screen, never the key\'s'
    )
    reason = serializers.CharField(help_text="a skip's reason")
    text = serializers.CharField()
    read = serializers.BooleanField(help_text="read by you since it was last written")


_DIGEST_QUERY = [
    OpenApiParameter("since", OpenApiTypes.DATE, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("dimension", str, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("stratum", str, OpenApiParameter.QUERY, required=False),
    OpenApiParameter(
        "source", str, OpenApiParameter.QUERY, required=False, enum=CommentSource.values
    ),
    OpenApiParameter("unread", bool, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("after", str, OpenApiParameter.QUERY, required=False),
    OpenApiParameter("page_size", int, OpenApiParameter.QUERY, required=False),
]


@extend_schema(
    summary="The comments digest (QC-006): the raters' free-text comments, newest first",
    description=(
        "Rating notes, flag notes, skips, end-of-study feedback and withdrawal reasons, "
        "with your own read mark on each. Pages by keyset: follow `next` (null on the last "
        f"page); `page_size` up to {MAX_PAGE_SIZE}. `unread` counts every comment you have "
        "not read, whatever the filters."
    ),
    parameters=_DIGEST_QUERY,
    responses={
        200: inline_serializer(
            "CommentDigest",
            {
                "unread": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "results": CommentSerializer(many=True),
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def study_comments(request, slug):
    study = _study(request, slug)
    form = CommentDigestForm.for_study(study, request.query_params)
    if not form.is_valid():
        raise form_errors(form)
    try:
        size = int(request.query_params.get("page_size") or PAGE_SIZE)
    except ValueError:
        raise exceptions.ValidationError(["page_size: must be a whole number."]) from None
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise exceptions.ValidationError([f"page_size: from 1 to {MAX_PAGE_SIZE}."])
    page = comments_digest(study=study, reader=request.user, filters=form.filters(), limit=size)
    following = None
    if page.next is not None:
        query = request.query_params.copy()
        query["after"] = page.next.encode()
        following = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
    return Response(
        {
            "unread": comments_unread_count(study=study, reader=request.user),
            "next": following,
            "results": CommentSerializer(page.comments, many=True).data,
        }
    )


@extend_schema(
    summary="Mark comments of the digest as read by you (idempotent)",
    request=inline_serializer(
        "CommentsRead",
        {"keys": serializers.ListField(child=serializers.CharField(), max_length=MAX_KEYS)},
    ),
    responses={
        200: inline_serializer("CommentsMarked", {"marked": serializers.IntegerField()}),
        **ERRORS,
    },
)
@api_view(["POST"])
def study_comments_read(request, slug):
    study = _study(request, slug)
    keys = body_object(request, fields=("keys",)).get("keys")
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise exceptions.ValidationError(["keys: a list of the comments' keys."])
    marked = comments_mark_read(study=study, reader=request.user, keys=keys[: MAX_KEYS + 1])
    return Response({"marked": marked})


urlpatterns = [
    path("studies/<slug:slug>/raters/", study_raters, name="raters"),
    path("studies/<slug:slug>/invitations/", study_invitations, name="invitations"),
    path(
        "studies/<slug:slug>/invitations/<str:token_hash>/revoke/",
        invitation_revoke,
        name="invitation_revoke",
    ),
    path("studies/<slug:slug>/assign/", study_assign, name="assign"),
    path("studies/<slug:slug>/assign/<uuid:job_uuid>/", study_assign_job, name="assign_job"),
    path("studies/<slug:slug>/progress/", study_progress, name="progress"),
    path("studies/<slug:slug>/welfare/", study_welfare, name="welfare"),
    path("studies/<slug:slug>/comments/", study_comments, name="comments"),
    path("studies/<slug:slug>/comments/read/", study_comments_read, name="comments_read"),
    path("studies/<slug:slug>/exports/<str:fmt>/", study_export, name="export"),
    path("studies/<slug:slug>/exports/<str:fmt>/job/", study_export_job_start, name="export_start"),
    path("studies/<slug:slug>/export-jobs/<uuid:job_uuid>/", study_export_job, name="export_job"),
    path(
        "studies/<slug:slug>/export-jobs/<uuid:job_uuid>/download/",
        study_export_job_download,
        name="export_job_download",
    ),
    path("studies/<slug:slug>/unblind/", study_unblind, name="unblind"),
    path("me/assignments/", my_assignments, name="my_assignments"),
]

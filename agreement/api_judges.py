"""The HTTP API's LLM judges: prompt templates, the prompt export, output import and export,
the judges and their calibration.

The judges page's own services and reads (``agreement.services.judges``,
``agreement.judges.prompts``, ``agreement.judges.calibration``) behind the same access rule
(coordinators of the study), so a script sees what the page shows and nothing more. Before
unblinding that is the judge on its own: no system name, and nothing that sets a judge
beside the raters (a coordinator knows which system wrote each text, so any such figure
would tell the key; see ``judge_calibration``). A calibration is computed by the analysis
job, as the page's Compute button does: GET reads it, POST starts it.
"""

import json

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import (
    ErrorResponseSerializer,
    Pagination,
    body_object,
    paginated,
    row_fields_refuse,
)
from core.api_jobs import JOB_PROGRESS_FIELDS, job_accepted, job_progress
from core.user_input import uuid_or_none
from jobs.models import Job
from studies import access
from studies.importing.table_rows import MAX_BYTES

from .analysis.jobs import (
    AnalysisPending,
    analysis_job_start,
    analysis_shown,
    judge_calibration_analysis,
)
from .judges import verdicts
from .judges.files import COLUMNS as JUDGE_COLUMNS
from .judges.files import MAX_ROWS
from .judges.prompts import (
    judge_outputs_csv,
    judge_prompts_jsonl,
    judge_template_chosen,
    pairwise_dimension,
    study_judges_counted,
)
from .models import Judge
from .services import judge_outputs_import, judge_template_save

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
TEMPLATE_CHOICE = (
    "The template the prompts were made with: `reference` (built in, strict A/B; the "
    "default), `reference-tie` (built in, [[C]] for a tie) or the `uuid` of one of the "
    "study's templates."
)

CALIBRATION_STATES = (
    "computed; not_computed (POST the calibration to compute it); or the state of the job "
    "computing it: " + ", ".join(Job.State.values)
)


def _study(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return study


def _template_chosen(study, choice) -> tuple[str, bool]:
    if not isinstance(choice, str):
        raise exceptions.ValidationError(["template: must be a text."])
    chosen = judge_template_chosen(study=study, choice=choice.strip()[:40])
    if chosen is None:
        raise exceptions.ValidationError(
            [
                f"template: the study has no template {choice[:40]!r}; use reference, "
                "reference-tie or the uuid of one of its templates."
            ]
        )
    return chosen


# Templates ----------------------------------------------------------------------------------


class JudgeTemplateSerializer(serializers.Serializer):
    name = serializers.CharField()
    uuid = serializers.UUIDField(allow_null=True, help_text="null for a built-in one")
    built_in = serializers.BooleanField()
    allow_tie = serializers.BooleanField(
        help_text='The judge may answer a tie, "[[C]]" (the text says so).'
    )
    text = serializers.CharField()
    updated_at = serializers.DateTimeField(allow_null=True)


TemplatesSerializer = inline_serializer(
    "JudgeTemplates",
    {
        "templates": JudgeTemplateSerializer(many=True),
        "placeholders": serializers.DictField(child=serializers.CharField()),
    },
)


def _templates_out(study) -> dict:
    built_in = [
        {
            "name": name,
            "uuid": None,
            "built_in": True,
            "allow_tie": allow_tie,
            "text": text,
            "updated_at": None,
        }
        for name, (text, allow_tie) in verdicts.BUILT_IN.items()
    ]
    own = [
        {
            "name": template.name,
            "uuid": template.uuid,
            "built_in": False,
            "allow_tie": template.allow_tie,
            "text": template.text,
            "updated_at": template.updated_at,
        }
        for template in study.judge_templates.all()
    ]
    return {"templates": built_in + own, "placeholders": verdicts.PLACEHOLDERS}


@extend_schema(
    methods=["GET"],
    summary="The judge prompt templates: the built-in ones and the study's",
    responses={200: TemplatesSerializer, **ERRORS},
)
@extend_schema(
    methods=["PUT"],
    summary="Save one of the study's judge prompt templates (created, or replaced by name)",
    description=(
        "`name` and `text` (with `{step_a}` and `{step_b}`; see `placeholders`), and "
        '`allow_tie` (default false): the judge may answer a tie, "[[C]]", and the text must '
        "say so; a strict template must not ask for one. The template of that name is "
        "replaced, or created; with `uuid`, that template is changed (its name too). "
        "Answers the templates as GET does."
    ),
    request=inline_serializer(
        "JudgeTemplateIn",
        {
            "name": serializers.CharField(max_length=100),
            "text": serializers.CharField(max_length=verdicts.MAX_TEMPLATE_CHARS),
            "allow_tie": serializers.BooleanField(default=False),
            "uuid": serializers.UUIDField(required=False),
        },
    ),
    responses={200: TemplatesSerializer, **ERRORS},
)
@api_view(["GET", "PUT"])
def judge_templates(request, slug):
    study = _study(request, slug)
    if request.method == "PUT":
        body = body_object(
            request, fields=("name", "text", "allow_tie", "uuid"), what="a field of a template"
        )
        problems = [
            f"{field}: must be a text."
            for field in ("name", "text")
            if not isinstance(body.get(field), str)
        ]
        allow_tie = body.get("allow_tie", False)
        if not isinstance(allow_tie, bool):
            problems.append("allow_tie: must be true or false.")
        if problems:
            raise exceptions.ValidationError(problems)
        name = body["name"].strip()[:200]
        if "uuid" in body:
            wanted = uuid_or_none(body["uuid"]) if isinstance(body["uuid"], str) else None
            template = study.judge_templates.filter(uuid=wanted).first() if wanted else None
            if template is None:
                raise exceptions.ValidationError(["uuid: the study has no such template."])
        else:
            template = study.judge_templates.filter(name=name).first()
        judge_template_save(
            study=study,
            name=name,
            text=body["text"][: verdicts.MAX_TEMPLATE_CHARS + 1],
            template=template,
            allow_tie=allow_tie,
            actor=request.user,
        )
    return Response(_templates_out(study))


# Prompts ------------------------------------------------------------------------------------


@extend_schema(
    summary="The prompts for a judge as JSONL, both orders (no system names)",
    description=(
        'One line per sample case with two responses and order: {"case_id", "order", '
        '"prompt"}. Order AB shows the case\'s responses in its prompt order (a draw from '
        "the case and its systems, never from the blinding key), BA swaps them. The same "
        "file as the judges page's."
    ),
    parameters=[
        OpenApiParameter("template", str, OpenApiParameter.QUERY, description=TEMPLATE_CHOICE)
    ],
    responses={(200, "application/jsonl"): OpenApiTypes.STR, **ERRORS},
)
@api_view(["GET"])
def judge_prompts(request, slug):
    study = _study(request, slug)
    text, _ = _template_chosen(study, request.query_params.get("template", ""))
    response = StreamingHttpResponse(
        judge_prompts_jsonl(study=study, template=text), content_type="application/jsonl"
    )
    response["Content-Disposition"] = content_disposition_header(
        True, f"{study.slug}-judge-prompts.jsonl"
    )
    response["Cache-Control"] = "no-store"
    return response


@extend_schema(
    summary="Every imported judge output as CSV (the judges page's export; no system names)",
    description=(
        "One row per output: judge, case_id, order, verdict_as_shown (A, B, tie or empty "
        "when unparseable), preferred_key_label (A, B or tie once the study is unblinded; "
        "empty before, since with the prompts it would tell the key), problem, output."
    ),
    responses={(200, "text/csv"): OpenApiTypes.STR, **ERRORS},
)
@api_view(["GET"])
def judge_outputs(request, slug):
    study = _study(request, slug)
    response = StreamingHttpResponse(
        judge_outputs_csv(study=study), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = content_disposition_header(
        True, f"{study.slug}-judge-outputs.csv"
    )
    response["Cache-Control"] = "no-store"
    return response


# Judges, output import ----------------------------------------------------------------------


class JudgeCalibrationSummarySerializer(serializers.Serializer):
    state = serializers.CharField(help_text=CALIBRATION_STATES)
    position_consistency = serializers.FloatField(allow_null=True)
    first_position_rate = serializers.FloatField(allow_null=True)
    tie_rate = serializers.FloatField(allow_null=True)
    n_judged = serializers.IntegerField(allow_null=True)
    kappa_majority = serializers.FloatField(
        allow_null=True, help_text="with the raters' majority: null until unblinded"
    )
    kappa_low = serializers.FloatField(allow_null=True)
    kappa_high = serializers.FloatField(allow_null=True)
    kappa_n = serializers.IntegerField(allow_null=True)


class JudgeSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    allow_tie = serializers.BooleanField(
        help_text="its outputs are read with [[C]] as a tie (the template of its prompts "
        "allowed one, as chosen at its latest import)"
    )
    outputs = serializers.IntegerField()
    ties = serializers.IntegerField()
    unparseable = serializers.IntegerField()
    calibration_url = serializers.URLField()
    calibration = JudgeCalibrationSummarySerializer()


ImportedSerializer = inline_serializer(
    "JudgeOutputsImported",
    {
        "rows": serializers.IntegerField(),
        "judges": serializers.ListField(child=serializers.CharField()),
        "ties": serializers.IntegerField(),
        "unparseable": serializers.IntegerField(),
        "allow_tie": serializers.BooleanField(),
    },
)


def _state(shown) -> str:
    if not isinstance(shown, AnalysisPending):
        return "computed"
    if shown.job is None:
        return "not_computed"
    return (shown.status or {}).get("state") or shown.job.state


def _summary(shown) -> dict:
    report = shown if not isinstance(shown, AnalysisPending) else {}
    majority = (report.get("humans") or {}).get("majority") or {}
    return {
        "state": _state(shown),
        "position_consistency": report.get("position_consistency"),
        "first_position_rate": report.get("first_position_rate"),
        "tie_rate": report.get("tie_rate"),
        "n_judged": report.get("n_judged"),
        "kappa_majority": majority.get("kappa"),
        "kappa_low": majority.get("low"),
        "kappa_high": majority.get("high"),
        "kappa_n": majority.get("n"),
    }


def _judge_out(request, study, judge) -> dict:
    shown = analysis_shown(analysis=judge_calibration_analysis(study=study, judge=judge))
    url = reverse("api:judge_calibration", args=[study.slug, judge.uuid])
    return {
        "uuid": judge.uuid,
        "name": judge.name,
        "created_at": judge.created_at,
        "allow_tie": judge.allow_tie,
        "outputs": judge.n_outputs,
        "ties": judge.n_ties,
        "unparseable": judge.n_unparseable,
        "calibration_url": request.build_absolute_uri(url),
        "calibration": _summary(shown),
    }


@extend_schema(
    methods=["GET"],
    summary="The study's judges, with their outputs and calibration summary",
    description=(
        "Each judge's counts and the summary of its calibration as kept for the data as "
        "they are (`state` computed), else why not (`not_computed`: POST the "
        "`calibration_url`; or its job's state). Before unblinding the kappa with the "
        "raters is null: only the judge on its own is shown."
    ),
    responses={200: paginated("PaginatedJudgeList", JudgeSerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Import judge outputs (all or nothing): a JSON body or a .jsonl/.csv/.xlsx file",
    description=(
        '`{"outputs": [{"case_id", "order", "judge", "output"}, ...], "template": ...}`, or '
        "a `file` (JSONL lines or a table with those columns) and a `template` field. "
        + TEMPLATE_CHOICE
        + " The outputs are read by its rule (ties allowed or not), which becomes each "
        "named judge's: its earlier outputs are read again by it. An output whose verdict "
        "cannot be read is kept and counted as unparseable; a row that names no case of "
        "the study, or repeats a judge, case and order, refuses the whole file."
    ),
    request={
        "application/json": inline_serializer(
            "JudgeOutputsIn",
            {
                "outputs": inline_serializer(
                    "JudgeOutput",
                    {column: serializers.CharField() for column in JUDGE_COLUMNS},
                    many=True,
                ),
                "template": serializers.CharField(required=False),
            },
        ),
        "multipart/form-data": inline_serializer(
            "JudgeOutputsFile",
            {
                "file": serializers.FileField(),
                "template": serializers.CharField(required=False),
            },
        ),
    },
    responses={201: ImportedSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def judges(request, slug):
    study = _study(request, slug)
    if request.method == "POST":
        filename, data, choice = _outputs_body(request)
        _, allow_tie = _template_chosen(study, choice)
        counts = judge_outputs_import(
            study=study, filename=filename, data=data, allow_tie=allow_tie, actor=request.user
        )
        return Response(counts, status=status.HTTP_201_CREATED)
    paginator = Pagination()
    page: list = paginator.paginate_queryset(study_judges_counted(study=study), request) or []
    return paginator.get_paginated_response([_judge_out(request, study, j) for j in page])


def _outputs_body(request) -> tuple[str, bytes, str]:
    """The file to import (an uploaded one, or a JSON body's outputs as JSONL) and the
    template chosen."""
    # Outputs as JSON, or a file as a form's "file"; either with the template chosen.
    body = body_object(request, fields=("outputs", "file", "template"))
    upload = request.FILES.get("file")
    if upload is not None:
        if not upload.name.lower().endswith((".jsonl", ".json", ".csv", ".tsv", ".txt", ".xlsx")):
            raise exceptions.ValidationError(["file: use a .jsonl, .csv or .xlsx file."])
        if upload.size > MAX_BYTES:
            raise exceptions.ValidationError(
                [f"file: larger than {MAX_BYTES // (1024 * 1024)} MB."]
            )
        template = body.get("template", "")
        return upload.name, upload.read(MAX_BYTES + 1), template
    outputs = body.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        raise exceptions.ValidationError(
            ['outputs: send a non-empty list of {"case_id", "order", "judge", "output"} '
             'objects, or upload a file as "file".']
        )  # fmt: skip
    if len(outputs) > MAX_ROWS:
        raise exceptions.ValidationError([f"outputs: at most {MAX_ROWS} in one request."])
    row_fields_refuse(outputs, JUDGE_COLUMNS, where="outputs", what="a field of an output")
    # Line n of this JSONL is output n of the list, so problems name it by its number.
    text = "\n".join(json.dumps(output, ensure_ascii=False) for output in outputs)
    return "outputs.jsonl", text.encode(), body.get("template", "")


# Calibration --------------------------------------------------------------------------------

CalibrationSerializer = inline_serializer(
    "JudgeCalibration",
    {
        "judge": inline_serializer(
            "JudgeName",
            {
                "uuid": serializers.UUIDField(),
                "name": serializers.CharField(),
                "allow_tie": serializers.BooleanField(),
            },
        ),
        "state": serializers.CharField(help_text=CALIBRATION_STATES),
        "job": inline_serializer(
            "JudgeCalibrationJob",
            {
                "uuid": serializers.UUIDField(),
                "state": serializers.CharField(help_text=", ".join(Job.State.values)),
                **JOB_PROGRESS_FIELDS,
            },
            allow_null=True,
        ),
        "pairwise_dimension": serializers.CharField(allow_null=True),
        "calibration": serializers.DictField(
            allow_null=True,
            help_text="The judges page's calibration report (docs/coordinator.md); null "
            "until computed. `humans` is null until the study is unblinded.",
        ),
    },
)


def _calibration_out(study, judge, shown) -> dict:
    job = None
    if isinstance(shown, AnalysisPending) and shown.job is not None:
        job = {"uuid": shown.job.uuid, **job_progress(shown.job, shown.status)}
    dimension = pairwise_dimension(study)
    return {
        "judge": {"uuid": judge.uuid, "name": judge.name, "allow_tie": judge.allow_tie},
        "state": _state(shown),
        "job": job,
        "pairwise_dimension": dimension.name if dimension is not None else None,
        "calibration": None if isinstance(shown, AnalysisPending) else shown,
    }


@extend_schema(
    methods=["GET"],
    summary="A judge's calibration, as kept for the data as they are (a read)",
    description=(
        "`state` computed: `calibration` is the report (position and length, ties, "
        "unparseable outputs and, once the study is unblinded, `humans`: the kappa over "
        "A / tie / B with the raters' majority and each rater, win rates, disagreements). "
        "Otherwise `calibration` is null: `not_computed` (POST to compute it), or the "
        "state of the `job` computing it (poll this GET)."
    ),
    responses={200: CalibrationSerializer, **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Compute a judge's calibration for the data as they are (a job)",
    description=(
        "202 with the running job (this URL, also in Location, to GET until `state` is "
        "computed, failed or stopped); 200 when it is computed already (or was computed "
        "within the request)."
    ),
    request=None,
    responses={200: CalibrationSerializer, 202: CalibrationSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def judge_calibration(request, slug, judge_uuid):
    study = _study(request, slug)
    judge = get_object_or_404(Judge, study=study, uuid=judge_uuid)
    if request.method == "POST":
        body_object(request, fields=())
    analysis = judge_calibration_analysis(study=study, judge=judge)
    if request.method == "POST":
        analysis_job_start(analysis=analysis, requested_by=request.user)
    body = _calibration_out(study, judge, analysis_shown(analysis=analysis))
    if request.method == "POST" and body["state"] == Job.State.RUNNING:
        return job_accepted(body, request.build_absolute_uri(request.path))
    return Response(body)


urlpatterns = [
    path("studies/<slug:slug>/judges/", judges, name="judges"),
    path("studies/<slug:slug>/judges/template/", judge_templates, name="judge_template"),
    path("studies/<slug:slug>/judges/prompts/", judge_prompts, name="judge_prompts"),
    path("studies/<slug:slug>/judges/outputs/", judge_outputs, name="judge_outputs"),
    path(
        "studies/<slug:slug>/judges/<uuid:judge_uuid>/calibration/",
        judge_calibration,
        name="judge_calibration",
    ),
]

"""The adjudicator's queue and the adjudication screen with its autosave endpoint; the
coordinators' list of decided cases, where the lead makes one a gold item."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from studies import access
from studies.errors import ApplicationError
from studies.models import Membership
from studies.rendering import reasoning_steps
from studies.selectors import case_content_warnings, rubric_for_display

from ..access import get_adjudication_for_adjudicator, get_adjudication_for_coordinator
from ..models import Adjudication
from ..selectors import adjudication as reads
from ..services import MAX_DRAFT_BYTES, StaleVersionError
from ..services import adjudication as writes
from .gate import PayloadError, parse_int, parse_payload
from .rating import SESSION_EXPIRED, rating_context


@login_required
@require_GET
def adjudication_queue(request, slug):
    study, membership = access.get_membership_for_user(request.user, slug, role=access.ADJUDICATOR)
    membership.study = study
    return render(
        request,
        "annotation/adjudication_queue.html",
        {
            "study": study,
            "membership": membership,
            **reads.adjudication_queue(adjudicator=membership),
        },
    )


def _read_only_reason(*, adjudication: Adjudication, study, membership: Membership) -> str:
    if study.is_unblinded:
        return "The study is unblinded: this adjudication can no longer change."
    if study.is_draft:
        return "The study has not started."
    if membership.status != Membership.Status.ACTIVE:
        return "Your part in this study is on hold."
    holder = reads.adjudication_holder(adjudication=adjudication, membership=membership)
    if holder is not None:
        return f"{holder.pseudonym} is adjudicating this case."
    return ""


@login_required
def adjudication_screen(request, slug, adjudication_uuid):
    adjudication, study, membership = get_adjudication_for_adjudicator(
        request.user, slug, adjudication_uuid
    )
    error, error_field, stale = None, "", False
    payload = adjudication.draft
    version = adjudication.version
    if request.method == "POST":
        try:
            payload = parse_payload(request.POST.get("payload"))
            version = parse_int(request.POST.get("version"))
            if payload.get("unresolvable"):
                adjudication = writes.adjudication_mark_unresolvable(
                    adjudication=adjudication,
                    adjudicator=membership,
                    reason=str(payload.get("notes") or ""),
                    expected_version=version,
                    actor=request.user,
                )
            else:
                adjudication = writes.adjudication_resolve(
                    adjudication=adjudication,
                    adjudicator=membership,
                    payload=payload,
                    expected_version=version,
                    actor=request.user,
                )
        except StaleVersionError as exc:
            error, stale = str(exc), True
        except ApplicationError as exc:
            error = str(exc)
            error_field = getattr(exc, "field", "")
            adjudication.refresh_from_db(fields=["version"])
            version = adjudication.version
        else:
            messages.success(
                request,
                f"Case {adjudication.test_case.case_id}: "
                f"{adjudication.get_status_display().lower()}.",
            )
            return redirect("annotation:adjudication_queue", slug=study.slug)
    every = rubric_for_display(rubric=study.rubric)
    dimensions = [d for d in every if d["key"] in (adjudication.triggers or {})]
    readonly = _read_only_reason(adjudication=adjudication, study=study, membership=membership)
    test_case = adjudication.test_case
    return render(
        request,
        "annotation/adjudicate.html",
        {
            **rating_context(dimensions=dimensions),
            "all_dimensions": every,
            "study": study,
            "membership": membership,
            "adjudication": adjudication,
            "decided": adjudication.status != Adjudication.Status.WAITING,
            "test_case": test_case,
            # The adjudicator reads the same prompt and responses as the raters did.
            "warnings": case_content_warnings(test_case=test_case),
            "screen": reads.adjudication_screen(adjudication=adjudication, study=study),
            "next_step_steps": reasoning_steps(test_case.context)
            if study.case_layout == "next_step"
            else [],
            "payload": payload,
            "version": version,
            "current_version": adjudication.version,
            "error": error,
            "error_field": error_field,
            "stale": stale,
            "readonly": bool(readonly),
            "readonly_reason": readonly,
            "local_key": f"adjudicate:{adjudication.uuid}",
        },
        status=409 if stale else (400 if error else 200),
    )


@require_http_methods(["POST"])
def adjudication_draft(request, slug, adjudication_uuid):
    # JSON even when signed out, as the rating screen's autosave: the page keeps its answers.
    if not request.user.is_authenticated:
        return JsonResponse(
            {
                "error": SESSION_EXPIRED,
                "signed_out": True,
                "login_url": f"{reverse('login')}?next={reverse('annotation:session_restored')}",
            },
            status=401,
        )
    adjudication, _, membership = get_adjudication_for_adjudicator(
        request.user, slug, adjudication_uuid
    )
    if len(request.body) > MAX_DRAFT_BYTES:
        return JsonResponse({"error": writes.DRAFT_TOO_LARGE}, status=400)
    try:
        body = parse_payload(request.body.decode("utf-8", "replace"))
        payload = body.get("payload")
        adjudication = writes.adjudication_draft_save(
            adjudication=adjudication,
            adjudicator=membership,
            payload=payload if isinstance(payload, dict) else {},
            expected_version=parse_int(body.get("version"), default=-1),
        )
    except PayloadError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    except StaleVersionError as exc:
        adjudication.refresh_from_db(fields=["version"])
        return JsonResponse(
            {"error": str(exc), "stale": True, "version": adjudication.version}, status=409
        )
    except writes.AdjudicationRefusedError as exc:
        return JsonResponse({"error": str(exc), "closed": True}, status=403)
    except ApplicationError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(
        {"version": adjudication.version, "saved_at": adjudication.updated_at.isoformat()}
    )


@login_required
@require_GET
def adjudication_outcomes(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    rows = [
        (adjudication, writes.adjudication_gold_refusal(adjudication=adjudication, study=study))
        for adjudication in reads.adjudication_outcomes(study=study)
    ]
    is_lead = access.LEAD in access.study_role(request.user, study, None)
    return render(
        request,
        "annotation/adjudication_outcomes.html",
        {"study": study, "rows": rows, "is_lead": is_lead},
    )


@login_required
@require_POST
def adjudication_make_gold(request, slug, adjudication_uuid):
    adjudication, study = get_adjudication_for_coordinator(
        request.user, slug, adjudication_uuid, role=access.LEAD
    )
    try:
        writes.adjudication_make_gold(adjudication=adjudication, actor=request.user)
    except ApplicationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Case {adjudication.test_case.case_id} is now a gold item.")
    return redirect("annotation:adjudication_outcomes", slug=study.slug)

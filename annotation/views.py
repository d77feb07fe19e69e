import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from studies import access
from studies.models import Membership
from studies.selectors import coordinated_studies, rubric_for_display

from . import selectors, services
from .access import get_assignment_for_rater


@login_required
def home(request):
    return render(
        request,
        "annotation/home.html",
        {
            "rated": selectors.rater_memberships(user=request.user),
            "coordinated": coordinated_studies(user=request.user),
        },
    )


@login_required
def study_assignments(request, slug):
    study, membership = access.get_study_for_user(request.user, slug, role=access.RATER)
    return render(
        request,
        "annotation/assignments.html",
        {
            "study": study,
            "assignments": selectors.rater_assignments(rater=membership),
            "progress": selectors.rater_progress(rater=membership),
        },
    )


@login_required
def study_next(request, slug):
    study, membership = access.get_study_for_user(request.user, slug, role=access.RATER)
    assignment = selectors.next_unrated(rater=membership)
    if assignment is None:
        messages.success(request, "You have submitted every case in this study.")
        return redirect("annotation:assignments", slug=study.slug)
    return redirect("annotation:rate", assignment_uuid=assignment.uuid)


def _parse_payload(raw: str) -> dict:
    try:
        payload = json.loads(raw or "{}")
    except json.JSONDecodeError:
        raise services.RatingInvalidError("The form could not be read; reload the page.") from None
    if not isinstance(payload, dict):
        raise services.RatingInvalidError("The form could not be read; reload the page.")
    return payload


def _parse_int(raw, *, default=None):
    try:
        return int(raw)
    except (TypeError, ValueError):
        return default


@login_required
def assignment_rate(request, assignment_uuid):
    assignment = get_assignment_for_rater(request.user, assignment_uuid)
    study = assignment.test_case.study
    error = None
    payload = assignment.draft
    if request.method == "POST":
        try:
            payload = _parse_payload(request.POST.get("payload"))
            assignment = services.rating_submit(
                assignment=assignment,
                payload=payload,
                expected_version=_parse_int(request.POST.get("version")),
                active_seconds=_parse_int(request.POST.get("active_seconds"), default=0),
            )
        except (
            services.RatingInvalidError,
            services.StaleVersionError,
            services.RatingClosedError,
        ) as exc:
            error = str(exc)
        else:
            messages.success(request, f"{assignment.test_case.case_id} submitted.")
            following = selectors.next_unrated(rater=assignment.rater, after=assignment)
            if following is None:
                messages.info(request, "That was the last case. Thank you!")
                return redirect("annotation:assignments", slug=study.slug)
            return redirect("annotation:rate", assignment_uuid=following.uuid)
    dimensions = rubric_for_display(rubric=study.rubric)
    return render(
        request,
        "annotation/rate.html",
        {
            "study": study,
            "assignment": assignment,
            "responses": selectors.blinded_responses(assignment=assignment),
            "dimensions": dimensions,
            "max_total": sum(d["max"] for d in dimensions if d["scope"] == "response"),
            "payload": payload,
            "error": error,
            "progress": selectors.rater_progress(rater=assignment.rater),
            "confidence_choices": assignment.Confidence.choices,
            "can_rate": study.accepts_ratings
            and assignment.rater.status == Membership.Status.ACTIVE,
        },
        status=409 if error and "another tab" in error else (400 if error else 200),
    )


@login_required
@require_POST
def assignment_draft(request, assignment_uuid):
    assignment = get_assignment_for_rater(request.user, assignment_uuid)
    try:
        body = json.loads(request.body or b"{}")
        if not isinstance(body, dict):
            raise ValueError
    except ValueError:
        return JsonResponse({"error": "The draft could not be read."}, status=400)
    try:
        assignment = services.draft_save(
            assignment=assignment,
            payload=body.get("payload") if isinstance(body.get("payload"), dict) else {},
            expected_version=_parse_int(body.get("version"), default=-1),
            active_seconds=_parse_int(body.get("active_seconds"), default=0),
        )
    except services.StaleVersionError as exc:
        return JsonResponse({"error": str(exc), "stale": True}, status=409)
    except services.RatingClosedError as exc:
        return JsonResponse({"error": str(exc)}, status=403)
    except services.RatingInvalidError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(
        {"version": assignment.version, "saved_at": assignment.updated_at.isoformat()}
    )

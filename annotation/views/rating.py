"""The rater's home, case list and the rating screen with its autosave endpoint."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from core.lost_connection import LOST, again_on_lost_connection
from jobs.runner import jobs_run_mode
from studies.errors import ApplicationError
from studies.models import Membership, Participant
from studies.rendering import reasoning_steps
from studies.selectors import (
    case_content_warnings,
    coordinated_studies,
    invitations_for_user,
    rubric_for_display,
    skips_handed_on,
)

from .. import selectors, services
from ..access import get_assignment_for_rater
from ..assignment_jobs import assignment_in_progress
from ..models import Assignment
from ..selectors import adjudication as adjudication_reads
from ..selectors.own_profile import own_profile_step
from ..selectors.participants import participant_of
from ..services import skipping
from .gate import PayloadError, blocking_redirect, parse_int, parse_payload, rater_study

SESSION_EXPIRED = (
    "Your session has expired, so this draft was not saved. Sign in again in another tab: "
    "your answers stay on this page and in this browser, and are saved once you are back."
)

# The session key of a refused skip's reason and note, shown again in the form once.
SKIP_TYPED = "annotation.skip_typed"


@login_required
def home(request):
    return render(
        request,
        "annotation/home.html",
        {
            "invitations": invitations_for_user(user=request.user),
            "rated": selectors.rater_memberships(user=request.user),
            "adjudicated": adjudication_reads.adjudicator_memberships(user=request.user),
            "coordinated": coordinated_studies(user=request.user),
        },
    )


@login_required
def session_restored(request):
    """Where signing in again from an open rating tab lands: a page that says so."""
    return render(request, "annotation/session_restored.html")


@login_required
def study_assignments(request, slug):
    study, membership = rater_study(request, slug)
    participant = participant_of(rater=membership)
    if participant is not None and participant.status != Participant.Status.STARTED:
        return redirect("annotation:participant", slug=study.slug)  # their code, or the end
    state = selectors.onboarding_state(rater=membership)
    progress = selectors.rater_progress(rater=membership)
    hold = selectors.rating_hold(rater=membership)
    # No case yet in a study that is running: say whether they are on the way, never
    # "0 of 0 done" with the self-check as if the rater had finished.
    awaiting = ""
    if not progress.total and not hold and not state.blocking_step:
        awaiting = "assigning" if assignment_in_progress(study=study) else "none"
    limit = None if hold or state.blocking_step else _limit_notice(membership)
    assignments = list(selectors.rater_assignments(rater=membership))
    if limit:
        # A case not started that the limit holds back says so instead of "Rate".
        exposure = limit["exposure"]
        for assignment in assignments:
            started = assignment.status != Assignment.Status.TODO
            assignment.waits = not started and not exposure.allows(assignment.test_case.stratum)
    return render(
        request,
        "annotation/assignments.html",
        {
            "awaiting": awaiting,
            "study": study,
            "membership": membership,
            "state": state,
            "assignments": assignments,
            "progress": progress,
            "all_done": progress.total and progress.done == progress.total,
            "hold": hold,
            "pause_kind": selectors.pause_kind(rater=membership),
            "profile_step": own_profile_step(rater=membership),
            "limit": limit,
            "participant": participant,
        },
    )


def _limit_notice(rater: Membership) -> dict | None:
    """What the rater's pages say when a daily exposure limit holds cases back today:
    the limit reached, when it lifts, and whether other cases can still be rated."""
    exposure = selectors.exposure_today(rater=rater)
    held = selectors.held_back(pending=selectors.pending_cases(rater=rater), exposure=exposure)
    if not held:
        return None
    return {
        "exposure": exposure,
        "held": held,
        "others": selectors.next_unrated(rater=rater) is not None,
    }


def _on_hold(request, membership: Membership):
    """A paused rater gets no next item: back to their study page, which says why."""
    return redirect("annotation:assignments", slug=membership.study.slug)


@login_required
def study_next(request, slug):
    study, membership = rater_study(request, slug)
    blocked = blocking_redirect(request, rater=membership)
    if blocked:
        return blocked
    if membership.status != Membership.Status.ACTIVE:
        return _on_hold(request, membership)
    assignment = selectors.next_unrated(rater=membership)
    if assignment is None and not selectors.rater_progress(rater=membership).total:
        return redirect("annotation:assignments", slug=study.slug)  # which says why
    if assignment is None and _limit_notice(membership):
        return redirect("annotation:assignments", slug=study.slug)  # which says until when
    if assignment is None:
        messages.success(request, "You have submitted or skipped every case in this study.")
        return redirect("annotation:self_check", slug=study.slug)
    return redirect("annotation:rate", assignment_uuid=assignment.uuid)


def _exposure_unless_held(rater: Membership) -> selectors.Exposure | None:
    """The rater's time today against the limits; None when they cannot rate anyway (the
    page then shows the hold, read-only)."""
    if selectors.rating_hold(rater=rater):
        return None
    return selectors.exposure_today(rater=rater)


def _limit_reached_before_start(assignment: Assignment, exposure) -> bool:
    """A case not yet started whose stratum (or the study) has reached the rater's daily
    limit is not opened today. A case already started stays open: a draft in progress
    can be finished and submitted, the limit stops new cases."""
    if exposure is None or assignment.status != Assignment.Status.TODO:
        return False
    return not exposure.allows(assignment.test_case.stratum)


def rating_context(*, dimensions) -> dict:
    return {
        "dimensions": dimensions,
        "max_total": sum(d["max"] for d in dimensions if d["scope"] == "response"),
        "has_case_dimensions": any(d["scope"] == "case" for d in dimensions),
        "confidence_choices": Assignment.Confidence.choices,
    }


@login_required
def assignment_rate(request, assignment_uuid):
    assignment = get_assignment_for_rater(request.user, assignment_uuid)
    study = assignment.test_case.study
    blocked = blocking_redirect(request, rater=assignment.rater)
    if blocked:
        return blocked
    error = None
    error_field = ""
    stale = False
    payload = assignment.draft
    version = assignment.version
    exposure = None
    if request.method == "GET":
        # Read once for the page: the limits and the rater's time today.
        exposure = _exposure_unless_held(assignment.rater)
        if _limit_reached_before_start(assignment, exposure):
            return redirect("annotation:assignments", slug=study.slug)  # which says until when
    if request.method == "POST":
        try:
            services.rater_time_zone_report(
                rater=assignment.rater, reported=request.POST.get("time_zone")
            )
            payload = parse_payload(request.POST.get("payload"))
            version = parse_int(request.POST.get("version"))
            # A revision is a submit from a page opened on a submitted case; the same
            # submit sent again (a retry, its version older than the stored one) is not.
            revising = (
                assignment.status == Assignment.Status.SUBMITTED and assignment.version == version
            )
            # The version is the submit's key: sent again after a lost connection, it
            # is stored or found stored, never twice (core.lost_connection).
            submitted = assignment
            assignment = again_on_lost_connection(
                lambda: services.rating_submit(
                    assignment=submitted,
                    payload=payload,
                    expected_version=version,
                    active_seconds=parse_int(request.POST.get("active_seconds"), default=0),
                ),
                what="a rating submit",
            )
        except services.StaleVersionError as exc:
            # Keep the tab's answers and its old version, so that a second click is refused
            # too; the page offers to replace the newer version deliberately.
            error, stale = str(exc), True
        except (
            ApplicationError,
            # Named until annotation.services makes them ApplicationErrors.
            services.RatingClosedError,
            services.RatingInvalidError,
        ) as exc:
            error = str(exc)
            error_field = getattr(exc, "field", "")
            version = assignment.version
        else:
            # Stored: a connection lost while the next page is looked up must not say
            # otherwise (a 500 would tell the rater it failed).
            stored = assignment
            try:
                return again_on_lost_connection(
                    lambda: _submitted(request, assignment=stored, revising=revising),
                    what="the page after a submit",
                )
            except LOST:
                # Stored, and the database still away: say so without it, and send the
                # rater to their case list (a message is a cookie, the study is at hand).
                messages.success(request, f"{stored.rater_label} submitted.")
                return redirect("annotation:assignments", slug=study.slug)
    position = selectors.case_position(assignment=assignment)
    progress = position.progress
    dimensions = rubric_for_display(rubric=study.rubric)
    hold = selectors.rating_hold(rater=assignment.rater)
    if exposure is None and not hold:  # a refused submit, shown again
        exposure = selectors.exposure_today(rater=assignment.rater)
    warnings = case_content_warnings(test_case=assignment.test_case)
    skipped = assignment.status == Assignment.Status.SKIPPED
    # A warned case shows neither its prompt nor its responses until the rater chooses to
    # see them ("?show=1", a plain link: no script needed) or skips it. Once they have
    # saved something, they have seen it.
    gated = bool(warnings) and not skipped and request.method == "GET"
    gated = gated and assignment.status == Assignment.Status.TODO and not request.GET.get("show")
    skip_typed = request.session.pop(SKIP_TYPED, None) if request.method == "GET" else None
    if not skip_typed or skip_typed.get("assignment") != str(assignment.uuid):
        skip_typed = None
    return render(
        request,
        "annotation/rate.html",
        {
            **rating_context(dimensions=dimensions),
            "warnings": warnings,
            "gated": gated,
            "skipped": skipped,
            "skip_reasons": Assignment.SkipReason.choices,
            "skip_note_max": skipping.MAX_SKIP_NOTE_LENGTH,
            "skips_handed_on": skips_handed_on(study=study),
            "skip_typed": skip_typed,
            "study": study,
            "assignment": assignment,
            "responses": selectors.blinded_responses(assignment=assignment),
            "next_step_steps": reasoning_steps(assignment.test_case.context)
            if study.case_layout == "next_step"
            else [],
            "payload": payload,
            "version": version,
            "current_version": assignment.version,
            "error": error,
            "error_field": error_field,
            "stale": stale,
            "progress": progress,
            "number": position.number,
            "previous": position.previous,
            "next": position.next,
            "hold": hold,
            "pause_kind": selectors.pause_kind(rater=assignment.rater),
            "readonly": hold is not None,
            # A case started before a daily limit was reached: finish it, then stop.
            "limit_here": exposure
            if exposure and not exposure.allows(assignment.test_case.stratum)
            else None,
            "local_key": f"rate:{assignment.uuid}",
            "footer_note": f"{assignment.rater_label} · {progress.done} of {progress.total} done"
            + (f" ({progress.skipped} skipped)" if progress.skipped else ""),
        },
        status=409 if stale else (400 if error else 200),
    )


def _submitted(request, *, assignment: Assignment, revising: bool):
    """Where a submit leads: the next case served, or the study page or the self-check."""
    study = assignment.test_case.study
    label = assignment.rater_label
    # The service hands back the rater as locked, without its study: the case's copy is the
    # same study (one query less for the next case's daily limits).
    assignment.rater.study = study
    feedback = selectors.gold_feedback(assignment=assignment)
    if feedback:
        messages.info(request, f"About {label}: {feedback}")
    # Where the recompute runs inside this request (JOBS_RUN=inline), it may have paused the
    # rater on this very submission (QC-001). Elsewhere it runs a debounce after the
    # response, and the next page shows the hold: no read of the status here.
    if jobs_run_mode() == "inline":
        assignment.rater.refresh_from_db(fields=["status"])
    if assignment.rater.status != Membership.Status.ACTIVE:
        messages.success(request, f"{label} submitted.")
        return _on_hold(request, assignment.rater)
    following = selectors.next_unrated(rater=assignment.rater, after=assignment)
    if revising:
        messages.success(request, f"Your revision of {label} is saved.")
        if following is None:
            return redirect("annotation:assignments", slug=study.slug)
        return redirect("annotation:rate", assignment_uuid=following.uuid)
    messages.success(request, f"{label} submitted.")
    if following is None and _limit_notice(assignment.rater):
        # A daily limit holds the rest back: the study page says until when.
        return redirect("annotation:assignments", slug=study.slug)
    if following is None:
        messages.info(
            request,
            "That was the last case. Thank you! Please look over your scores here.",
        )
        return redirect("annotation:self_check", slug=study.slug)
    return redirect("annotation:rate", assignment_uuid=following.uuid)


@require_http_methods(["POST"])
def assignment_draft(request, assignment_uuid):
    # Answered in JSON even when signed out: the page keeps the answers and says how to
    # sign in again, where a redirect to the sign-in page would look like a saved draft.
    if not request.user.is_authenticated:
        return JsonResponse(
            {
                "error": SESSION_EXPIRED,
                "signed_out": True,
                "login_url": f"{reverse('login')}?next={reverse('annotation:session_restored')}",
            },
            status=401,
        )
    assignment = get_assignment_for_rater(request.user, assignment_uuid)
    if selectors.onboarding_blocking_step(rater=assignment.rater) is not None:
        return JsonResponse(
            {"error": "Complete the steps before rating first; reload the page."}, status=403
        )
    # The declared length first: a body past Django's own bound (12 MB) is refused by it
    # when read, as an HTML page the autosave cannot show.
    declared = parse_int(request.META.get("CONTENT_LENGTH"), default=0)
    if declared > services.MAX_DRAFT_BYTES or len(request.body) > services.MAX_DRAFT_BYTES:
        return JsonResponse({"error": services.DRAFT_TOO_LARGE}, status=413)
    try:
        body = parse_payload(request.body.decode("utf-8", "replace"))
    except PayloadError as error:
        return JsonResponse({"error": str(error)}, status=400)
    # Before the save: its active time counts on the rater's day in this zone. A draft
    # is saved even over a daily limit: typed work is never lost.
    services.rater_time_zone_report(rater=assignment.rater, reported=body.get("time_zone"))
    payload = body.get("payload")
    try:
        assignment = services.draft_save(
            assignment=assignment,
            payload=payload if isinstance(payload, dict) else {},
            expected_version=parse_int(body.get("version"), default=-1),
            active_seconds=parse_int(body.get("active_seconds"), default=0),
        )
    except services.StaleVersionError as exc:
        assignment.refresh_from_db(fields=["version"])
        return JsonResponse(
            {"error": str(exc), "stale": True, "version": assignment.version}, status=409
        )
    except services.RatingClosedError as exc:
        # Paused, or the study closed, since the page opened: the page shows the banner it
        # would show if it were loaded now, and stops offering to submit.
        assignment.rater.refresh_from_db(fields=["status"])
        assignment.test_case.study.refresh_from_db(fields=["status"])
        rater = assignment.rater
        banner = render_to_string(
            "annotation/_hold.html",
            {
                "hold": selectors.rating_hold(rater=rater) or "on_hold",
                "pause_kind": selectors.pause_kind(rater=rater),
                "study": assignment.test_case.study,
            },
        )
        return JsonResponse({"error": str(exc), "closed": True, "hold": banner}, status=403)
    except services.RatingInvalidError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    except Assignment.DoesNotExist:  # removed while the request was on its way
        return JsonResponse({"error": "This case no longer exists."}, status=404)
    return JsonResponse(
        {"version": assignment.version, "saved_at": assignment.updated_at.isoformat()}
    )


@login_required
@require_POST
def assignment_skip(request, assignment_uuid):
    """Skip the case, with an optional reason and note; on to the rater's next case."""
    assignment = get_assignment_for_rater(request.user, assignment_uuid)
    blocked = blocking_redirect(request, rater=assignment.rater)
    if blocked:
        return blocked
    try:
        skipping.case_skip(
            assignment=assignment,
            reason=request.POST.get("skip_reason", ""),
            note=request.POST.get("skip_note", ""),
            actor=request.user,
        )
    except ApplicationError as exc:
        messages.error(request, f"Not skipped. {exc}")
        # What the rater typed comes back in the form, for them to correct, not retype.
        request.session[SKIP_TYPED] = {
            "assignment": str(assignment.uuid),
            "reason": request.POST.get("skip_reason", "")[:100],
            "note": request.POST.get("skip_note", "")[: 2 * skipping.MAX_SKIP_NOTE_LENGTH],
        }
        return redirect("annotation:rate", assignment_uuid=assignment.uuid)
    messages.success(
        request,
        f"{assignment.rater_label} skipped. It is no longer in your list; you can undo "
        "this from its page while the study is open.",
    )
    following = selectors.next_unrated(rater=assignment.rater, after=assignment)
    if following is None:
        return redirect("annotation:assignments", slug=assignment.rater.study.slug)
    return redirect("annotation:rate", assignment_uuid=following.uuid)


@login_required
@require_POST
def assignment_unskip(request, assignment_uuid):
    """Undo a skip: the case is back in the rater's list, if the design has room for them."""
    assignment = get_assignment_for_rater(request.user, assignment_uuid)
    blocked = blocking_redirect(request, rater=assignment.rater)
    if blocked:
        return blocked
    try:
        skipping.skip_undo(assignment=assignment, actor=request.user)
    except ApplicationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{assignment.rater_label} is back in your list.")
    return redirect("annotation:rate", assignment_uuid=assignment.uuid)

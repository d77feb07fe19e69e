"""A crowd participant's pages: where they stand (the next step, or the code to take back
to the vendor), declining consent, finishing; and the administrators' payments file."""

import csv
import io
from decimal import Decimal

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from studies import access
from studies.models import Membership, Participant

from .. import selectors
from ..selectors.participants import participant_of, payment_rows
from ..services import participants
from .gate import blocking_redirect, rater_study

# Seconds before the completion page sends the participant back to the vendor.
COUNTDOWN_SECONDS = 10
ENDINGS = {
    Participant.Status.SCREENED_OUT: "annotation/participant/screened_out.html",
    Participant.Status.COMPLETED: "annotation/participant/completed.html",
    Participant.Status.TIMED_OUT: "annotation/participant/ended.html",
    Participant.Status.RETURNED: "annotation/participant/ended.html",
}


def _participant(request, slug):
    study, membership = rater_study(request, slug)
    participant = participant_of(rater=membership)
    if participant is None:
        raise Http404  # a rater who came by invitation has no vendor to go back to
    return study, membership, participant


@never_cache
@login_required
@require_GET
def participant_status(request, slug):
    """Where the participant link lands: the next step, or how their part ended."""
    study, membership, participant = _participant(request, slug)
    if participant.status in ENDINGS:
        return render(
            request,
            ENDINGS[participant.status],
            {
                "study": study,
                "participant": participant,
                "link": participant.link,
                "countdown": COUNTDOWN_SECONDS,
            },
        )
    state = selectors.onboarding_state(rater=membership)
    if state.qualification_failed or membership.status == Membership.Status.WITHDRAWN:
        # Recorded by the qualification's or the withdrawal's own POST; shown here.
        return redirect("annotation:assignments", slug=study.slug)
    blocked = blocking_redirect(request, rater=membership, state=state)
    if blocked:
        return blocked
    if participants.completion_ready(rater=membership):
        return render(
            request,
            "annotation/participant/finish.html",
            {"study": study, "link": participant.link},
        )
    progress = selectors.rater_progress(rater=membership)
    if progress.total and progress.done == progress.total:
        messages.info(request, "You have finished the cases. Please send the end-of-study form.")
        return redirect("annotation:feedback", slug=study.slug)
    return redirect("annotation:next", slug=study.slug)


@login_required
@require_POST
def participant_decline(request, slug):
    """The participant does not consent: screened out, with the vendor's code."""
    study, membership, participant = _participant(request, slug)
    participants.participant_screen_out(rater=membership, reason="consent")
    return redirect("annotation:participant", slug=study.slug)


@login_required
@require_POST
def participant_finish(request, slug):
    study, membership, participant = _participant(request, slug)
    try:
        participants.participant_complete(rater=membership)
    except participants.ParticipantStepError as exc:
        messages.error(request, str(exc))
    return redirect("annotation:participant", slug=study.slug)


@login_required
@require_GET
def participant_payments(request, slug, link_uuid):
    """The link's payments file: the vendor ids are identity, so administrators only.

    ``?format=prolific``: Prolific's bulk bonus lines (``participant_id,amount``), for the
    participants whose bonus is above zero; otherwise the full file with a total line.
    """
    if not request.user.is_authenticated or not request.user.is_staff:
        raise PermissionDenied
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    link = study.participant_links.filter(uuid=link_uuid).first()
    if link is None:
        raise Http404
    rows = payment_rows(link=link)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    prolific = request.GET.get("format") == "prolific"
    if prolific:
        for row in rows:
            if row.external_id and row.bonus > 0:
                writer.writerow([row.external_id, f"{row.bonus:.2f}"])
        name = f"{study.slug}-{link.uuid.hex[:8]}-bonus.csv"
    else:
        writer.writerow(
            ["external_id", "status", "active_seconds", "cases_completed",
             f"bonus_{link.bonus_currency}"]
        )  # fmt: skip
        for row in rows:
            writer.writerow(
                [row.external_id or "[erased]", row.status, row.active_seconds,
                 row.cases_completed, f"{row.bonus:.2f}"]
            )  # fmt: skip
        total = sum((row.bonus for row in rows), start=Decimal(0))
        writer.writerow(["total", "", sum(r.active_seconds for r in rows),
                         sum(r.cases_completed for r in rows), f"{total:.2f}"])  # fmt: skip
        name = f"{study.slug}-{link.uuid.hex[:8]}-payments.csv"
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["Cache-Control"] = "no-store"
    return response

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render

from studies import access
from studies.errors import ApplicationError
from studies.models import Membership
from studies.services import RATER_ACTIONS, rater_status_change

from . import qc
from .plot import alpha_chart
from .selectors import rater_events, study_agreement
from .services import agreement_stale_check


def _stale(study, agreement) -> bool:
    return agreement_stale_check(study=study, agreement=agreement)


@login_required
def study_agreement_page(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    stale = _stale(study, agreement)
    result = agreement.result or {}
    context = {
        "study": study,
        "agreement": agreement,
        "stale": stale,
        "result": result,
        "chart": alpha_chart(result) if result.get("dimensions") else None,
        "chart_narrow": alpha_chart(result, layout="narrow") if result.get("dimensions") else None,
    }
    template = "agreement/_results.html" if request.GET.get("fragment") else "agreement/study.html"
    return render(request, template, context)


@login_required
def study_agreement_status(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    stale = _stale(study, agreement)
    return JsonResponse(
        {
            "requested": agreement.requested,
            "computed": agreement.computed,
            "stale": stale,
            # The point estimates are stored first; the intervals follow within seconds.
            "intervals_pending": bool((agreement.result or {}).get("intervals_pending")),
            "computed_at": agreement.computed_at.isoformat() if agreement.computed_at else None,
        }
    )


# The administrators' decisions about raters, as recorded in the audit trail.
RATER_DECISIONS = [kind for _, kind in RATER_ACTIONS.values()]


@login_required
def study_quality(request, slug):
    """Quality-control flags per rater; administrators pause, retrain or exclude here."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    form_errors = {}
    if request.method == "POST":
        if not request.user.is_staff:
            raise PermissionDenied
        # A NUL character cannot reach PostgreSQL, even in a lookup: no rater has one.
        pseudonym = request.POST.get("rater", "").replace("\x00", "\ufffd")
        membership = get_object_or_404(
            Membership, study=study, role=Membership.Role.RATER, pseudonym=pseudonym
        )
        try:
            changed = rater_status_change(
                membership=membership,
                action=request.POST.get("action", ""),
                reason=request.POST.get("reason", ""),
                actor=request.user,
            )
        except ApplicationError as error:
            form_errors[membership.pseudonym] = str(error)
        else:
            messages.success(
                request,
                f"{changed.pseudonym} is now {changed.get_status_display().lower()}; "
                "the reason is recorded.",
            )
            return redirect("agreement:qc", slug=study.slug)
    agreement = study_agreement(study=study)
    checks = (agreement.result or {}).get("qc", {})
    raters = study.memberships.filter(role=Membership.Role.RATER).select_related("user")
    return render(
        request,
        "agreement/quality.html",
        {
            "study": study,
            "agreement": agreement,
            "rows": [
                {
                    "membership": m,
                    "check": checks.get(m.pseudonym),
                    "error": form_errors.get(m.pseudonym),
                }
                for m in raters.order_by("pseudonym")
            ],
            "events": [
                {
                    "created_at": event.created_at,
                    "rater": event.membership.pseudonym,
                    "label": event.get_kind_display(),
                    "reason": event.reason,
                }
                for event in rater_events(study=study, kinds=RATER_DECISIONS)
            ],
            "can_act": request.user.is_staff,
            "thresholds": {
                "seconds": qc.MIN_MEDIAN_SECONDS,
                "position": qc.POSITION_BIAS_SHARE,
                "position_cases": qc.POSITION_BIAS_MIN_CASES,
                "gap": qc.PEER_GAP,
            },
        },
        status=400 if form_errors else 200,
    )

"""The calibration call (protocol 4.2): the items to discuss with the raters, printable,
and the lead's record of who attended."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import selectors
from annotation.disagreement import MEASURE
from annotation.services import calibration_call as calls
from studies import access

from ..forms import CalibrationCallForm


def _page(request, study, *, form=None, status=200):
    sheet = selectors.calibration_sheet(study=study)
    recorded = selectors.calibration_calls(study=study)
    is_lead = request.user.pk == study.lead_id
    raters = selectors.calibration_attendees_choices(study=study)
    return render(
        request,
        "annotation/coordinator/calibration_call.html",
        {
            "study": study,
            "sheet": sheet,
            "measure": MEASURE,
            "calls": recorded,
            "attendance": selectors.calibration_attendance(study=study, calls=recorded),
            "settings": selectors.onboarding_settings(study=study),
            "is_lead": is_lead,
            "form": (form or CalibrationCallForm(raters=raters)) if is_lead else None,
        },
        status=status,
    )


@login_required
@require_GET
def calibration_call(request, slug):
    """The items with the most disagreement, side by side; coordinators may read it."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return _page(request, study)


@login_required
@require_POST
def calibration_call_record(request, slug):
    """The lead records a call and who attended it."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    form = CalibrationCallForm(
        request.POST, raters=selectors.calibration_attendees_choices(study=study)
    )
    if form.is_valid():
        try:
            call = form.record(study=study, actor=request.user)
        except calls.CalibrationCallError as exc:
            form.add_error(None, str(exc))
        else:
            count = call.attendance.count()
            messages.success(
                request, f"Call recorded, with {count} rater{'s' if count != 1 else ''} attending."
            )
            return redirect("annotation:calibration_call", slug=slug)
    return _page(request, study, form=form, status=400)

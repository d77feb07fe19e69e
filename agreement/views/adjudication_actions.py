"""The lead's adjudication actions on the agreement and quality-control pages: send a case
to adjudication by hand, and 7.3's switch of a dimension to every disagreement."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from agreement.services.adjudication_switch import adjudication_switch_for_missed_target
from annotation.services.adjudication_queue import adjudication_send
from studies import access
from studies.errors import ApplicationError

# The pages the forms are on, where the answer goes back to.
BACK = {"qc": "agreement:qc", "agreement": "agreement:study"}
MAX_FIELD = 2100


def _back(request, study):
    return redirect(BACK.get(request.POST.get("back", ""), "agreement:study"), slug=study.slug)


@login_required
@require_POST
def adjudication_send_view(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    case_id = request.POST.get("case_id", "").strip()[:100]
    # A NUL character cannot reach PostgreSQL, even in a lookup: no case id has one.
    test_case = study.test_cases.filter(case_id=case_id.replace("\x00", "\ufffd")).first()
    if test_case is None:
        messages.error(request, "The study has no test case with that id.")
        return _back(request, study)
    try:
        adjudication_send(
            study=study,
            actor=request.user,
            test_case=test_case,
            reason=request.POST.get("reason", "")[:MAX_FIELD],
        )
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{test_case.case_id} is waiting for an adjudicator.")
    return _back(request, study)


@login_required
@require_POST
def adjudication_switch_view(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    try:
        adjudication_switch_for_missed_target(
            study=study,
            actor=request.user,
            dimension_key=request.POST.get("dimension", "")[:100],
            reason=request.POST.get("reason", "")[:MAX_FIELD],
        )
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            "Every disagreement on this dimension now goes to adjudication, from the next "
            "refresh of the queue; the report lists the switch as a deviation.",
        )
    return _back(request, study)

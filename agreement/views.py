from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import render

from studies import access

from .plot import alpha_chart
from .selectors import study_agreement


@login_required
def study_agreement_page(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    result = agreement.result or {}
    context = {
        "study": study,
        "agreement": agreement,
        "result": result,
        "chart": alpha_chart(result) if result.get("dimensions") else None,
    }
    template = "agreement/_results.html" if request.GET.get("fragment") else "agreement/study.html"
    return render(request, template, context)


@login_required
def study_agreement_status(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    return JsonResponse(
        {
            "requested": agreement.requested,
            "computed": agreement.computed,
            "stale": agreement.is_stale,
            "computed_at": agreement.computed_at.isoformat() if agreement.computed_at else None,
        }
    )

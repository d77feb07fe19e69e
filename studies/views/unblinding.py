"""Unblinding: the study lead's page that reveals which system wrote each response."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from studies import access
from studies.forms import UnblindForm
from studies.services import unblinding


@login_required
def unblind(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    form = UnblindForm(request.POST or None)
    error = None
    if request.method == "POST" and form.is_valid():
        try:
            unblinding.study_unblind(
                study=study, actor=request.user, reason=form.cleaned_data["reason"]
            )
        except unblinding.UnblindingError as exc:
            error = str(exc)
        else:
            messages.success(
                request, "The study is unblinded: the exports now name the systems, with the key."
            )
            return redirect("annotation:results", slug=study.slug)
    return render(
        request,
        "studies/results/unblind.html",
        {"study": study, "form": form, "error": error},
        status=400 if request.method == "POST" else 200,
    )

"""The sample-size calculator: is the study, as designed, large enough for its question?"""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from agreement.forms import MeanDifferenceForm, WinRateForm
from studies import access


@login_required
def study_sample_size(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    # The formulas' module loads numpy: on this page's first use, not at start-up.
    from agreement.stats.estimates import mean_difference_sample_size, win_rate_sample_size

    n_cases = study.test_cases.in_sample().count()
    which = request.GET.get("which", "")
    win = WinRateForm(request.GET if which == "win" else None, prefix="win")
    mean = MeanDifferenceForm(request.GET if which == "mean" else None, prefix="mean")
    answer = None
    if which == "win" and win.is_valid():
        needed = win_rate_sample_size(**win.cleaned_data)
        answer = {"which": "win", "needed": needed, "enough": n_cases >= needed}
    elif which == "mean" and mean.is_valid():
        needed = mean_difference_sample_size(**mean.cleaned_data)
        answer = {"which": "mean", "needed": needed, "enough": n_cases >= needed}
    if answer:
        answer["short"] = max(0, answer["needed"] - n_cases)
    return render(
        request,
        "agreement/sample_size.html",
        {"study": study, "win": win, "mean": mean, "answer": answer, "n_cases": n_cases},
        status=400 if which in ("win", "mean") and answer is None else 200,
    )

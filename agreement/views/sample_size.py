"""The sample-size calculator: is the study, as designed, large enough for its question?"""

from django import forms
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from agreement.stats.estimates import mean_difference_sample_size, win_rate_sample_size
from studies import access


class WinRateForm(forms.Form):
    p1 = forms.FloatField(
        label="Win rate to detect", initial=0.58, min_value=0.01, max_value=0.99,
        help_text="The true share of untied comparisons the better system wins, e.g. 0.58.",
    )  # fmt: skip
    alpha = forms.FloatField(
        label="Alpha (two-sided)", initial=0.05, min_value=0.001, max_value=0.5
    )
    power = forms.FloatField(label="Power", initial=0.80, min_value=0.5, max_value=0.999)
    tie_share = forms.FloatField(
        label="Expected share of ties", initial=0.0, min_value=0.0, max_value=0.95,
        help_text="From the pilot, e.g. 0.2: the items are inflated so that enough are untied.",
    )  # fmt: skip

    def clean_p1(self):
        p1 = self.cleaned_data["p1"]
        if p1 == 0.5:
            raise forms.ValidationError("A win rate of 0.5 is no effect: choose another value.")
        return p1


class MeanDifferenceForm(forms.Form):
    difference = forms.FloatField(
        label="Mean difference to detect (points)", initial=1.0, min_value=0.01, max_value=1000,
    )  # fmt: skip
    sd = forms.FloatField(
        label="Standard deviation of the per-case differences", initial=3.0, min_value=0.01,
        max_value=10000, help_text="From the pilot or an earlier study.",
    )  # fmt: skip
    alpha = forms.FloatField(
        label="Alpha (two-sided)", initial=0.05, min_value=0.001, max_value=0.5
    )
    power = forms.FloatField(label="Power", initial=0.80, min_value=0.5, max_value=0.999)


@login_required
def study_sample_size(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
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

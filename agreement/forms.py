"""The agreement pages' forms that the API shares: the sample-size calculator's."""

from django import forms


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

"""Forms of the rating side. They only check and shape input; services do the writing."""

from datetime import datetime, time

from django import forms
from django.utils import timezone

from studies.models import Membership, Study
from studies.selectors import rubric_for_display
from studies.services.invitations import MAX_DAYS

from .models import OnboardingSettings, StudyFeedback, TrainingItem, Withdrawal
from .selectors.comments import CommentSource, DigestCursor, DigestFilters, comment_strata
from .services import calibration_call as calls
from .services import training

YES_NO = [("no", "No"), ("yes", "Yes")]


class ConsentForm(forms.Form):
    agree = forms.BooleanField(
        required=False, label="I have read the information above and agree to take part."
    )
    prior_knowledge = forms.ChoiceField(
        choices=YES_NO,
        widget=forms.RadioSelect(attrs={"class": "form-check-input"}),
        required=False,
        label="Your answer",
    )
    disclosure = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="If yes, describe it",
    )

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        self.asks_consent = bool(study.consent_text.strip())
        self.asks_disclosure = bool(study.disclosure_question.strip())
        if not self.asks_consent:
            del self.fields["agree"]
        if not self.asks_disclosure:
            del self.fields["prior_knowledge"]
            del self.fields["disclosure"]

    def clean(self):
        data = super().clean()
        if self.asks_consent and not data.get("agree"):
            self.add_error("agree", "Tick the box to confirm you agree to take part.")
        if self.asks_disclosure:
            answer = data.get("prior_knowledge")
            if not answer:
                self.add_error("prior_knowledge", "Answer yes or no.")
            elif answer == "yes" and not (data.get("disclosure") or "").strip():
                self.add_error("disclosure", "Describe your prior knowledge of the research.")
        return data

    def prior_knowledge_value(self) -> bool | None:
        answer = self.cleaned_data.get("prior_knowledge")
        return None if not answer else answer == "yes"


class FeedbackForm(forms.Form):
    suggestions = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Rubric feedback: what would you change?",
    )
    patterns = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Pattern observations",
        help_text='For example: "Response A consistently had more alternatives but weaker '
        'evidence".',
    )
    notes = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Anything else for the coordinator",
    )

    def __init__(self, *args, dimensions, **kwargs):
        super().__init__(*args, **kwargs)
        self.dimension_fields = []
        for dim in dimensions:
            clarity = f"clarity_{dim['key']}"
            comment = f"comment_{dim['key']}"
            self.fields[clarity] = forms.ChoiceField(
                choices=StudyFeedback.Clarity.choices,
                widget=forms.RadioSelect(attrs={"class": "form-check-input"}),
                required=False,
                label=f"How clear was {dim['name']}?",
            )
            self.fields[comment] = forms.CharField(
                required=False,
                max_length=5000,
                label=f"What was unclear about {dim['name']}? (optional)",
            )
            self.dimension_fields.append((dim, clarity, comment))

    def bound_dimensions(self):
        return [
            (dim, self[clarity], self[comment]) for dim, clarity, comment in self.dimension_fields
        ]

    def dimension_answers(self) -> dict:
        return {
            dim["key"]: {
                "clarity": self.cleaned_data.get(clarity) or "",
                "comment": self.cleaned_data.get(comment) or "",
            }
            for dim, clarity, comment in self.dimension_fields
        }


class WithdrawalForm(forms.Form):
    ratings = forms.ChoiceField(
        choices=Withdrawal.Data.choices,
        widget=forms.RadioSelect(attrs={"class": "form-check-input"}),
        label="What should happen to the ratings you have submitted?",
    )
    reason = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Reason (optional)",
    )
    confirm = forms.BooleanField(
        label="I want to withdraw from this study. I understand I cannot rate in it afterwards."
    )

    def __init__(self, *args, rater_chooses: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not rater_chooses:
            del self.fields["ratings"]


class OnboardingSettingsForm(forms.ModelForm):
    class Meta:
        model = OnboardingSettings
        fields = [
            "practice_enabled",
            "practice_case",
            "pass_percent",
            "tolerance",
            "max_attempts",
            "calibration_call_required",
            "withdrawal_data",
        ]

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["practice_case"].queryset = study.test_cases.order_by("position")
        for name, field in self.fields.items():
            if name in ("practice_enabled", "calibration_call_required"):
                continue
            css = "form-select" if name in ("practice_case", "withdrawal_data") else "form-control"
            field.widget.attrs["class"] = css
        self.fields["pass_percent"].widget.attrs.update(min=0, max=100)
        rule = "On every dimension, the share of scores within tolerance of the key to pass."
        self.fields["pass_percent"].help_text = rule
        self.fields["max_attempts"].widget.attrs.update(min=1)


class TrainingItemForm(forms.Form):
    title = forms.CharField(max_length=200)
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), help_text="Markdown.")
    response_a = forms.CharField(label="Response A", widget=forms.Textarea(attrs={"rows": 6}))
    response_b = forms.CharField(label="Response B", widget=forms.Textarea(attrs={"rows": 6}))
    response_c = forms.CharField(
        label="Response C (optional)", required=False, widget=forms.Textarea(attrs={"rows": 4})
    )
    explanation = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Shown to the rater after they answer, with the answer key. Markdown.",
    )

    def __init__(self, *args, kind: str = TrainingItem.Kind.TRAINING, **kwargs):
        super().__init__(*args, **kwargs)
        if kind != TrainingItem.Kind.TRAINING:
            # A qualification item shows no explanation: only worked examples use one.
            del self.fields["explanation"]

    @classmethod
    def initial_for(cls, item: TrainingItem) -> dict:
        texts = list(item.responses) + ["", "", ""]
        return {
            "title": item.title,
            "prompt": item.prompt,
            "response_a": texts[0],
            "response_b": texts[1],
            "response_c": texts[2],
            "explanation": item.explanation,
        }

    def responses(self) -> list[str]:
        return [self.cleaned_data.get(f"response_{x}") or "" for x in "abc"]

    def save_item(self, *, study: Study, item: TrainingItem | None, kind: str) -> TrainingItem:
        """The item as this valid form describes it (``training_item_save``; raises its
        ``TrainingError``): the page's and the API's one call."""
        return training.training_item_save(
            study=study,
            item=item,
            kind=kind,
            title=self.cleaned_data["title"],
            prompt=self.cleaned_data["prompt"],
            responses=self.responses(),
            explanation=self.cleaned_data.get("explanation", ""),
        )


class InvitationForm(forms.Form):
    note = forms.CharField(
        max_length=200,
        required=False,
        help_text="For you, e.g. who the link is for. The rater does not see it.",
    )
    days = forms.IntegerField(label="Valid for (days)", min_value=1, max_value=MAX_DAYS, initial=14)
    email = forms.EmailField(
        label="E-mail the link to",
        required=False,
        help_text="The person's address: the link is sent there and not shown to you, and "
        "administrators see that this person came by it. Leave empty for an open link "
        "shown to you (refused when the study takes raters only by bound invitations).",
    )
    role = forms.ChoiceField(
        choices=Membership.Role.choices, initial=Membership.Role.RATER, required=False
    )

    def __init__(self, *args, study: Study, user, **kwargs):
        super().__init__(*args, **kwargs)
        if user.pk != study.lead_id:
            # Only the study lead brings in other coordinators.
            del self.fields["role"]


class AddAccountForm(forms.Form):
    username = forms.CharField(
        max_length=150,
        help_text="An existing account's username. The person is invited and joins once they "
        "accept.",
    )


class PseudonymChoiceField(forms.ModelMultipleChoiceField):
    """Raters by pseudonym, never by name."""

    def label_from_instance(self, obj):
        return obj.pseudonym


class CalibrationCallForm(forms.Form):
    held_at = forms.DateTimeField(
        label="Held on",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "class": "form-control"}),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"],
    )
    attended = PseudonymChoiceField(
        queryset=Membership.objects.none(),
        widget=forms.CheckboxSelectMultiple(attrs={"class": "form-check-input"}),
        label="Raters who attended",
        error_messages={"required": "Tick at least one rater who attended the call."},
    )
    note = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3, "class": "form-control"}),
        label="Note (optional)",
        help_text="What was agreed, e.g. a rubric wording clarified. Raters do not see it.",
    )

    def __init__(self, *args, raters, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["attended"].queryset = raters

    def record(self, *, study: Study, actor):
        """The call as this valid form describes it (``calibration_call_record``; raises its
        ``CalibrationCallError``): the page's and the API's one call."""
        return calls.calibration_call_record(
            study=study,
            actor=actor,
            held_at=self.cleaned_data["held_at"],
            attended=list(self.cleaned_data["attended"]),
            note=self.cleaned_data["note"],
        )


class CommentDigestForm(forms.Form):
    """The comments digest's filters (a GET form: bad values are named, nothing is read)."""

    since = forms.DateField(required=False, label="Since", widget=forms.DateInput({"type": "date"}))
    dimension = forms.ChoiceField(required=False, label="Dimension")
    stratum = forms.ChoiceField(required=False, label="Stratum")
    source = forms.ChoiceField(required=False, label="Source")
    unread = forms.BooleanField(required=False, label="Unread only")
    after = forms.CharField(required=False, max_length=80, widget=forms.HiddenInput)

    def __init__(self, *args, dimensions, strata, sources, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dimension"].choices = [("", "Any dimension"), *dimensions]
        self.fields["stratum"].choices = [("", "Any stratum"), *((s, s) for s in strata)]
        self.fields["source"].choices = [("", "Every source"), *sources]

    @classmethod
    def for_study(cls, study: Study, data) -> "CommentDigestForm":
        """The form with the study's dimensions and strata; the page and the API use it."""
        return cls(
            data,
            dimensions=[(d["key"], d["name"]) for d in rubric_for_display(rubric=study.rubric)],
            strata=comment_strata(study=study),
            sources=CommentSource.choices,
        )

    def clean_after(self):
        text = self.cleaned_data.get("after") or ""
        if not text:
            return None
        cursor = DigestCursor.decode(text)
        if cursor is None:
            raise forms.ValidationError("This page position cannot be read; start again.")
        return cursor

    def filters(self) -> DigestFilters:
        """The cleaned filters; a date means from the start of that day (the site's zone)."""
        data = self.cleaned_data
        since = data.get("since")
        return DigestFilters(
            since=datetime.combine(since, time.min, tzinfo=timezone.get_current_timezone())
            if since
            else None,
            dimension=data.get("dimension") or "",
            stratum=data.get("stratum") or "",
            source=data.get("source") or "",
            unread=bool(data.get("unread")),
            after=data.get("after"),
        )


class WorksheetImportForm(forms.Form):
    """The offline worksheet's upload: whose it is (a rater's pseudonym) and the file."""

    rater = forms.ChoiceField(label="Rater", choices=())
    file = forms.FileField(
        label="Filled-in worksheet (.csv or .xlsx)",
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.xlsx"}),
    )

    def __init__(self, *args, pseudonyms=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["rater"].choices = [(p, p) for p in pseudonyms]

"""Forms of the study set-up pages: settings, test-case upload and the rubric builder.

Forms only check and convert input; the services decide what may change and write it.
"""

from decimal import Decimal

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator

from .importing.cases import MAX_FILE_BYTES
from .importing.table_rows import MAX_BYTES
from .models import Study
from .presets import PRESET_CHOICES, START_CHOICES
from .rubric import (
    KINDS,
    ConfigField,
    RubricValueError,
    allowed_levels,
    code_from,
    dimension_from_config,
)
from .services import ASSIGNMENT_FIELDS, PROTOCOL_FIELDS, SETTINGS_FIELDS
from .services.settings import MAX_RATERS_PER_ITEM


class StudyForm(forms.ModelForm):
    class Meta:
        model = Study
        fields = list(SETTINGS_FIELDS)
        labels = {
            "instructions": "Instructions for raters",
            "consent_text": "Information sheet and consent",
            "disclosure_question": "Disclosure question",
            "raters_per_item": "Raters per test case",
            "raters_per_item_max": "Most raters per test case (adaptive)",
            "side_mode": "A/B sides",
            "explanation_first": "Explanation before the verdict",
            "case_layout": "Case layout",
            "imported_optional": "Imported ratings: confidence and total optional",
            "bound_invitations_only": "Raters join only by invitations bound to a person",
            "success_alpha": "Success criterion: Krippendorff's alpha at least",
            "success_min_dimensions": "… on at least this many dimensions",
        }
        help_texts = {
            "name": "Raters see this name in their list of studies.",
            "description": "For coordinators; raters do not see it.",
            "instructions": (
                "Shown to raters with the rubric, on every rating page (Markdown: **bold**, "
                "lists, links). Frozen when the study opens."
            ),
            "consent_text": (
                "What raters read and agree to before their first case: purpose, tasks, pay, "
                "data use, the right to withdraw. Each change raises the consent version, so "
                "raters who agreed to an earlier text are asked again."
            ),
            "disclosure_question": (
                "Asked with the consent, e.g. about prior knowledge of the research."
            ),
            "blinding_seed": (
                "Fixes which system is shown as Response A in each test case and each "
                "rater's order of cases (42 in the reference study). Recorded; frozen when the "
                "study opens."
            ),
            "raters_per_item": (
                "Leave empty for every rater to rate every test case (the reference design). "
                "Otherwise at least 2, so that agreement can be computed."
            ),
            "raters_per_item_max": (
                "Leave empty for a fixed number. Otherwise the adaptive design: every test case "
                "gets the raters per test case above (k_min), and a case whose ratings disagree "
                "gets one more rater at a time up to this many (k_max). Agreement is computed "
                "on the first k_min ratings of each case. Frozen when the study opens."
            ),
            "side_mode": (
                "Fixed: Response A is the same system for every rater of a test case. "
                "Balanced: half of each rater's screens show the responses in the other order."
            ),
            "explanation_first": (
                "Pairwise preference: the rater writes their reasoning (the notes) before the "
                "preference can be chosen, as the judge template asks of judges."
            ),
            "case_layout": (
                "Next step: the prompt is the question, the context holds the partial "
                "reasoning steps (one per line, shown numbered), and the two responses are the "
                "candidate next steps, side by side."
            ),
            "imported_optional": (
                "For human labels collected in another tool and imported as worksheets: "
                "Confidence and Total may be left blank. Such ratings are marked imported in "
                "the exports, with a blank confidence (never a default)."
            ),
            "bound_invitations_only": (
                "Refuses open invitation links for raters and adjudicators, including those "
                "made before: each joins by a link e-mailed to their address, by accepting an "
                "invitation of their existing account, by an account an administrator made, "
                "or by a participant link (with the vendor's participant id). How each one "
                "joined is shown to administrators. No software can tell that two accounts "
                "are one person: see docs/blinding.md."
            ),
            "success_alpha": "0.70 in the reference study.",
            "success_min_dimensions": "3 (of 5) in the reference study.",
        }
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "instructions": forms.Textarea(attrs={"rows": 8}),
            "consent_text": forms.Textarea(attrs={"rows": 5}),
            "disclosure_question": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, frozen_reason: str = "", assignments_exist: bool = False, **kw):
        super().__init__(*args, **kw)
        limits = {
            "raters_per_item": [MinValueValidator(2)],
            "raters_per_item_max": [MinValueValidator(3), MaxValueValidator(MAX_RATERS_PER_ITEM)],
            "success_alpha": [MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("1"))],
            "success_min_dimensions": [MinValueValidator(1)],
        }
        for name, validators in limits.items():
            if name in self.fields:
                self.fields[name].validators += validators
        self.frozen_reason = frozen_reason
        for name in self.fields:
            if (frozen_reason and name in PROTOCOL_FIELDS) or (
                assignments_exist and name in ASSIGNMENT_FIELDS
            ):
                self.fields[name].disabled = True

    def changes(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.changed_data}


COPY_PREFIX = "copy:"


class StudyCreateForm(StudyForm):
    slug = forms.SlugField(
        label="Short name",
        max_length=80,
        help_text="Used in the study's web addresses and on the command line, e.g. 'rsr-2026'.",
    )
    # Named for the rubric it always brings; a protocol or a copied study brings more.
    rubric_preset = forms.ChoiceField(
        label="Start from",
        choices=START_CHOICES,
        help_text=(
            "The reference protocol brings everything the validator instructions define; a "
            "rubric-only preset leaves instructions and consent empty; copying takes another "
            "study's rubric and settings (not its test cases or raters). Everything can be "
            "changed before the study opens."
        ),
    )

    class Meta(StudyForm.Meta):
        fields = ["name", "slug", "description", "rubric_preset", "blinding_seed"]
        help_texts = {
            **StudyForm.Meta.help_texts,
            "blinding_seed": (
                "Fixes which system is shown as Response A in each test case and each rater's "
                "order of cases. Leave empty to take it from what you start from (42 in the "
                "reference protocol)."
            ),
            "description": (
                "For coordinators; raters do not see it. Left empty, the reference protocol "
                "puts its design here (18 pairs, seed 42, success criterion)."
            ),
        }

    def __init__(self, *args, copyable=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.copyable = {study.slug: study for study in copyable}
        copies = [(COPY_PREFIX + slug, study.name) for slug, study in self.copyable.items()]
        choices = list(START_CHOICES)
        if copies:
            choices.append(("Copy settings from an existing study", copies))
        self.fields["rubric_preset"].choices = choices
        self.fields["blinding_seed"].required = False
        self.fields["blinding_seed"].initial = None

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if Study.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A study with this short name already exists.")
        return slug

    def start(self) -> dict:
        """What the study starts from, as ``study_create`` takes it: a preset, or a study to
        copy (one of ``copyable``, those the person may see)."""
        start = self.cleaned_data["rubric_preset"]
        if start.startswith(COPY_PREFIX):
            return {"source": self.copyable[start.removeprefix(COPY_PREFIX)]}
        return {"preset": start}

    def creation(self) -> dict:
        """The valid form as ``study_create``'s arguments, but for the lead and the actor."""
        data = self.cleaned_data
        return {
            "slug": data["slug"],
            "name": data["name"],
            "description": data["description"],
            "blinding_seed": data["blinding_seed"],
            **self.start(),
        }


class CaseUploadForm(forms.Form):
    file = forms.FileField(
        label="Test case file",
        help_text=(
            f"A .csv, .jsonl or .xlsx file of at most {MAX_FILE_BYTES // 1024 // 1024} MB, in "
            "one of the formats below. Nothing is imported until you have seen the preview."
        ),
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.jsonl,.xlsx"}),
    )


class PresetForm(forms.Form):
    preset = forms.ChoiceField(
        label="Preset", choices=PRESET_CHOICES, widget=forms.Select(attrs={"class": "form-select"})
    )


# --- Rubric builder: a form per kind of dimension, made from the kind's settings -----------


class DimensionForm(forms.Form):
    """What every dimension has; ``dimension_form`` adds the settings its kind declares."""

    kind = ""
    kind_help = ""

    name = forms.CharField(
        max_length=200, help_text="The heading raters see, e.g. 'Depth of Analysis'."
    )
    key = forms.SlugField(
        max_length=50,
        required=False,
        help_text=(
            "A short code for exports and stored scores, e.g. 'depth'. Left empty, it is "
            "made from the name."
        ),
    )
    measure = forms.CharField(
        label="What to measure",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=(
            "Shown under the heading, e.g. 'Count distinct factors, considerations, or "
            "variables identified in the reasoning.'"
        ),
    )
    example = forms.CharField(
        label="Worked example",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Shown in the rubric help, e.g. 'A response discussing … would count 5 → 4'.",
    )
    edge_cases = forms.CharField(
        label="Edge cases",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="How to score the hard cases, e.g. 'Listed but not integrated: half-weight.'",
    )
    required = forms.BooleanField(
        label="Required",
        required=False,
        initial=True,
        help_text=(
            "Raters must answer it before submitting. Untick to make it optional: a rating "
            "may then leave it unanswered, and that response then has no total."
        ),
    )
    level = forms.ChoiceField(
        label="Level of measurement",
        help_text=(
            "How agreement treats the scores: nominal (categories, no order), ordinal "
            "(ordered), interval (equal steps) or ratio (equal steps and a true zero)."
        ),
    )

    kind_fields: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        levels = allowed_levels(self.kind)
        self.fields["level"].choices = [(level, level.title()) for level in levels]
        self.fields["level"].initial = KINDS[self.kind].default_level
        self.order_fields(["name", "key", "measure", *self.kind_fields])

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        cleaned["key"] = cleaned.get("key") or code_from(cleaned["name"])
        if not cleaned["key"]:
            self.add_error("key", "Give a key of letters, digits, - or _.")
            return cleaned
        config = {
            "measure": cleaned.get("measure", ""),
            "example": cleaned.get("example", ""),
            "edge_cases": cleaned.get("edge_cases", ""),
        }
        try:
            texts = {name: cleaned[name] for name in self.kind_fields}
            config.update(KINDS[self.kind].config_from_form(texts))
            dimension_from_config(
                key=cleaned["key"], name=cleaned["name"], kind=self.kind, config=config
            )
        except (RubricValueError, ValueError) as error:
            raise forms.ValidationError(str(error)) from None
        cleaned["config"] = config
        return cleaned

    @classmethod
    def initial_from(cls, dimension) -> dict:
        config = dimension.config
        initial = {
            "name": dimension.name,
            "key": dimension.key,
            "measure": config.get("measure", ""),
            "example": config.get("example", ""),
            "edge_cases": config.get("edge_cases", ""),
            "level": dimension.level,
            "required": dimension.required,
        }
        initial.update(KINDS[cls.kind].config_to_form(config))
        return initial


def _setting_field(setting: ConfigField) -> forms.CharField:
    """The form field for one setting a kind declares."""
    return forms.CharField(
        label=setting.label or None,
        max_length=setting.max_length,
        required=setting.required,
        initial=setting.initial or None,
        help_text=setting.help_text,
        widget=forms.Textarea(attrs={"rows": setting.rows}) if setting.rows else None,
    )


def dimension_form(kind_class) -> type[DimensionForm]:
    """The builder's form for a kind: the common fields, then the kind's settings."""
    settings = {setting.name: _setting_field(setting) for setting in kind_class.config_fields}
    return type(
        f"{kind_class.__name__}Form",
        (DimensionForm,),
        {
            "kind": kind_class.kind,
            "kind_help": kind_class.builder_help,
            "kind_fields": tuple(settings),
            **settings,
        },
    )


DIMENSION_FORMS = {kind: dimension_form(kind_class) for kind, kind_class in KINDS.items()}


class UnblindForm(forms.Form):
    confirm = forms.BooleanField(
        label=(
            "I understand that unblinding cannot be undone: exports will name the system of "
            "every response."
        )
    )
    reason = forms.CharField(
        label="Note for the audit trail (optional)",
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


# Gold items and attention checks (the quality page and its endpoints).


class QualitySettingsForm(forms.Form):
    gold_percent = forms.IntegerField(
        label="Gold items (% of each rater's screens)", min_value=0, max_value=50
    )
    gold_pass_percent = forms.IntegerField(
        label="Gold accuracy needed (%)", min_value=1, max_value=100
    )
    gold_minimum = forms.IntegerField(
        label="Gold items answered before the rule applies", min_value=1, max_value=100
    )
    gold_feedback = forms.BooleanField(
        label="Explain a missed gold item to the rater (off keeps gold unannounced)",
        required=False,
    )
    attention_every = forms.IntegerField(
        label="One attention check per this many items", min_value=5, max_value=1000
    )
    attention_misses = forms.IntegerField(
        label="Missed attention checks that flag a rater", min_value=1, max_value=20
    )
    min_median_seconds = forms.IntegerField(
        label="Median seconds per item under which a rater is flagged", min_value=0, max_value=600
    )
    position_share_percent = forms.IntegerField(
        label="Position bias: share of first-shown choices that flags (%)",
        min_value=51,
        max_value=100,
    )
    position_alpha = forms.DecimalField(
        label="Position bias: significance level",
        min_value=Decimal("0.001"),
        max_value=Decimal("0.5"),
        decimal_places=3,
    )
    straight_line_items = forms.IntegerField(
        label="No variation on a dimension across this many items flags",
        min_value=3,
        max_value=1000,
    )


class GoldFileForm(forms.Form):
    file = forms.FileField(label="Gold file (CSV or Excel)")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        # Refused before it is read into memory.
        if upload.size > MAX_BYTES:
            raise forms.ValidationError(f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB.")
        return upload


class AttentionForm(forms.Form):
    case_id = forms.CharField(label="Test case id", max_length=50)
    prompt = forms.CharField(label="Prompt", widget=forms.Textarea(attrs={"rows": 2}))
    text = forms.CharField(
        label="Response text (every system's response)",
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text="Empty: the template's instructed text.",
    )

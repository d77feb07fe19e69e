"""Forms of the study set-up pages: settings, test-case upload and the rubric builder.

Forms only check and convert input; the services decide what may change and write it.
"""

import re
from decimal import Decimal

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.text import slugify

from .importing.cases import MAX_FILE_BYTES
from .models import Study
from .presets import PRESET_CHOICES, START_CHOICES
from .rubric import KINDS, RubricValueError, allowed_levels, dimension_from_config
from .services import ASSIGNMENT_FIELDS, PROTOCOL_FIELDS, SETTINGS_FIELDS


class StudyForm(forms.ModelForm):
    class Meta:
        model = Study
        fields = list(SETTINGS_FIELDS)
        labels = {
            "instructions": "Instructions for raters",
            "consent_text": "Information sheet and consent",
            "disclosure_question": "Disclosure question",
            "raters_per_item": "Raters per test case",
            "side_mode": "A/B sides",
            "explanation_first": "Explanation before the verdict",
            "case_layout": "Case layout",
            "imported_optional": "Imported ratings: confidence and total optional",
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

    def source(self) -> Study | None:
        """The study to copy from, or None when starting from a preset."""
        start = self.cleaned_data["rubric_preset"]
        if start.startswith(COPY_PREFIX):
            return self.copyable[start.removeprefix(COPY_PREFIX)]
        return None


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


# --- Rubric builder: one form per kind of dimension --------------------------------------

LINE_HELP = "One per line; separate the parts with a vertical bar |."


def _lines(text: str) -> list[list[str]]:
    return [
        [part.strip() for part in line.split("|")] for line in text.splitlines() if line.strip()
    ]


def _join(rows) -> str:
    return "\n".join(" | ".join(str(part) for part in row if part != "") for row in rows)


def _code(label: str, index: int) -> str:
    return slugify(label).replace("-", "_")[:50] or f"category_{index + 1}"


class DimensionForm(forms.Form):
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
        cleaned["key"] = cleaned.get("key") or slugify(cleaned["name"]).replace("-", "_")[:50]
        if not cleaned["key"]:
            self.add_error("key", "Give a key of letters, digits, - or _.")
            return cleaned
        config = {
            "measure": cleaned.get("measure", ""),
            "example": cleaned.get("example", ""),
            "edge_cases": cleaned.get("edge_cases", ""),
        }
        try:
            config.update(self.kind_config(cleaned))
            dimension_from_config(
                key=cleaned["key"], name=cleaned["name"], kind=self.kind, config=config
            )
        except (RubricValueError, ValueError) as error:
            raise forms.ValidationError(str(error)) from None
        cleaned["config"] = config
        return cleaned

    def kind_config(self, cleaned: dict) -> dict:
        raise NotImplementedError

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
        }
        initial.update(cls.kind_initial(config))
        return initial

    @classmethod
    def kind_initial(cls, config: dict) -> dict:
        raise NotImplementedError


class CountedForm(DimensionForm):
    kind = "counted"
    kind_help = (
        "The rater lists what they counted, one item per line, and may mark an item "
        "half-weight; points come from bands over the count. Example: Depth of Analysis, "
        "0-1 factors → 0, 2-3 → 2, 4-5 → 4, 6+ → 5."
    )
    kind_fields = ("unit", "item", "bands", "half_weight_hint")

    unit = forms.CharField(
        label="What is counted (plural)",
        max_length=50,
        initial="factors",
        help_text="e.g. 'factors', 'alternatives', 'recommendations'.",
    )
    item = forms.CharField(
        label="One item (singular)",
        max_length=50,
        initial="factor",
        help_text="Used on the button raters press: 'Add factor'.",
    )
    bands = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        initial="0: 0\n2: 2\n4: 4\n6: 5",
        help_text=(
            "One band per line: the lowest count, a colon, the points. The first band starts "
            "at 0; a count scores the highest band it reaches. '0: 0, 2: 2, 4: 4, 6: 5' (one "
            "per line) means 0-1 → 0, 2-3 → 2, 4-5 → 4, 6+ → 5."
        ),
    )
    half_weight_hint = forms.CharField(
        label="When an item counts half",
        max_length=200,
        required=False,
        help_text="e.g. 'Listed but not integrated into the analysis'.",
    )

    def kind_config(self, cleaned):
        bands = []
        for number, line in enumerate(cleaned["bands"].splitlines(), start=1):
            if not line.strip():
                continue
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?::|->|→)\s*(\d+)\s*", line)
            if not match:
                raise ValueError(
                    f"Bands, line {number}: write the lowest count, a colon and the points, "
                    "e.g. '2: 2'."
                )
            minimum = Decimal(match.group(1))
            bands.append(
                [
                    int(minimum) if minimum == minimum.to_integral() else float(minimum),
                    int(match.group(2)),
                ]
            )
        return {
            "unit": cleaned["unit"],
            "item": cleaned["item"],
            "bands": bands,
            "half_weight_hint": cleaned.get("half_weight_hint", ""),
        }

    @classmethod
    def kind_initial(cls, config):
        return {
            "unit": config.get("unit", ""),
            "item": config.get("item", ""),
            "bands": "\n".join(f"{low}: {points}" for low, points in config.get("bands", [])),
            "half_weight_hint": config.get("half_weight_hint", ""),
        }


class ChecklistForm(DimensionForm):
    kind = "checklist"
    kind_help = (
        "Yes/no criteria, one point for each criterion met. Example: Evidence Integration "
        "— evidence cited? source credibility assessed? evidence quality evaluated?"
    )
    kind_fields = ("criteria",)

    criteria = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=(
            f"{LINE_HELP} The question, then an optional help text, e.g. 'Evidence cited? | "
            "Includes references to precedents, research, data, or domain knowledge'."
        ),
    )

    def kind_config(self, cleaned):
        return {
            "criteria": [
                {"label": parts[0], "help": " | ".join(parts[1:])}
                for parts in _lines(cleaned["criteria"])
            ]
        }

    @classmethod
    def kind_initial(cls, config):
        return {"criteria": _join((c["label"], c.get("help", "")) for c in config["criteria"])}


class ScaleForm(DimensionForm):
    kind = "scale"
    kind_help = (
        "An ordered scale: the rater picks one option; its value is the points. Give each "
        "option an anchor text that says when to choose it. Examples: Likert 1-5 (strongly "
        "disagree … strongly agree); correct (2) / partly correct (1) / incorrect (0)."
    )
    kind_fields = ("options",)

    options = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        initial=(
            "1 | Strongly disagree\n2 | Disagree\n3 | Neither agree nor disagree\n"
            "4 | Agree\n5 | Strongly agree"
        ),
        help_text=(
            f"{LINE_HELP} The value (whole number, the points), the label, then an optional "
            "anchor text, in rising or falling order, e.g. '2 | Correct | No unsupported claim'."
        ),
    )

    def kind_config(self, cleaned):
        options = []
        for number, parts in enumerate(_lines(cleaned["options"]), start=1):
            if len(parts) < 2 or not re.fullmatch(r"\d+", parts[0]):
                raise ValueError(
                    f"Options, line {number}: start with a whole number, then '|' and the "
                    "label, e.g. '5 | Strongly agree'."
                )
            options.append(
                {"value": int(parts[0]), "label": parts[1], "anchor": " | ".join(parts[2:])}
            )
        return {"options": options}

    @classmethod
    def kind_initial(cls, config):
        return {
            "options": _join(
                (o["value"], o["label"], o.get("anchor", "")) for o in config["options"]
            )
        }


class CategoricalForm(DimensionForm):
    kind = "categorical"
    kind_help = (
        "Nominal categories: the rater picks one; categories have no order and give no "
        "points (they are not part of the total). Examples: harmful yes/no; harm category."
    )
    kind_fields = ("categories",)

    categories = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=(
            f"{LINE_HELP} The category, then an optional help text, e.g. 'Personal data | "
            "Reveals data about a person'. Each gets a code from its name for exports."
        ),
    )

    def kind_config(self, cleaned):
        return {
            "categories": [
                {"value": _code(parts[0], i), "label": parts[0], "help": " | ".join(parts[1:])}
                for i, parts in enumerate(_lines(cleaned["categories"]))
            ]
        }

    @classmethod
    def kind_initial(cls, config):
        return {"categories": _join((c["label"], c.get("help", "")) for c in config["categories"])}


class PairwiseForm(DimensionForm):
    kind = "pairwise"
    kind_help = (
        "A preference between the two responses, rated once per test case (not per "
        "response) and not part of the totals. Needs a study with exactly two systems. "
        "Stored as a signed value: negative prefers Response A, 0 is a tie, positive B."
    )
    kind_fields = ("labels",)

    labels = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        initial="A much better\nA slightly better\nTie\nB slightly better\nB much better",
        help_text=(
            "One label per line, from the strongest preference for A to the strongest for B "
            "(2 to 9 labels; with an odd number the middle one is the tie)."
        ),
    )

    def kind_config(self, cleaned):
        return {"labels": [line.strip() for line in cleaned["labels"].splitlines() if line.strip()]}

    @classmethod
    def kind_initial(cls, config):
        return {"labels": "\n".join(config.get("labels", []))}


DIMENSION_FORMS = {
    form.kind: form
    for form in (CountedForm, ChecklistForm, ScaleForm, CategoricalForm, PairwiseForm)
}

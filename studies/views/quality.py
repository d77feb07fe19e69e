"""Gold items and attention checks: the coordinator marks cases, writes expected answers
(in the browser or as a gold file), adds attention checks and sets the quality rules."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render

from studies import access
from studies.errors import ApplicationError
from studies.forms import AttentionForm, GoldFileForm, QualitySettingsForm
from studies.models import TestCase
from studies.selectors import quality_ids_standing_out
from studies.services import quality


def _settings_initial(study):
    settings = quality.quality_settings_for(study=study)
    return {name: getattr(settings, name) for name in QualitySettingsForm.base_fields}


@login_required
def quality_items(request, slug):
    """Gold items and attention checks of a study, the gold file and the quality rules."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    settings_form = QualitySettingsForm(initial=_settings_initial(study))
    gold_form, attention_form = (
        GoldFileForm(),
        AttentionForm(initial={"text": quality.ATTENTION_TEXT}),
    )
    problems: list[str] = []
    status = 200
    if request.method == "POST":
        which = request.POST.get("form")
        try:
            if which == "settings":
                settings_form = QualitySettingsForm(request.POST)
                if settings_form.is_valid():
                    quality.quality_settings_update(
                        study=study, values=settings_form.cleaned_data, actor=request.user
                    )
                    messages.success(request, "The quality rules are saved.")
                    return redirect("studies:quality", slug=study.slug)
            elif which == "gold_file":
                gold_form = GoldFileForm(request.POST, request.FILES)
                if gold_form.is_valid():
                    upload = gold_form.cleaned_data["file"]
                    count = quality.expected_answers_import(
                        study=study, filename=upload.name, data=upload.read(), actor=request.user
                    )
                    messages.success(
                        request,
                        f"Imported the expected answers of {count} gold "
                        f"item{'s' if count != 1 else ''} from {upload.name}.",
                    )
                    return redirect("studies:quality", slug=study.slug)
            elif which == "attention":
                attention_form = AttentionForm(request.POST)
                if attention_form.is_valid():
                    quality.attention_check_create(
                        study=study, actor=request.user, **attention_form.cleaned_data
                    )
                    messages.success(request, "The attention check is added.")
                    return redirect("studies:quality", slug=study.slug)
        except ApplicationError as error:
            messages.error(request, str(error))
            problems = list(getattr(error, "problems", []))
        status = 400
    items = study.test_cases.quality_items().select_related("expected")
    return render(
        request,
        "studies/quality.html",
        {
            "study": study,
            "frozen": study.is_frozen,
            "items": items.order_by("purpose", "position"),
            "sample": study.test_cases.in_sample().order_by("position")[:500],
            "settings_form": settings_form,
            "gold_form": gold_form,
            "attention_form": attention_form,
            "problems": problems,
            "columns": quality.GOLD_COLUMNS,
            "standing_out": quality_ids_standing_out(study=study),
        },
        status=status,
    )


@login_required
def quality_item(request, slug, case_uuid):
    """One case's purpose and expected answers, one field per response and dimension."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    test_case = get_object_or_404(TestCase, study=study, uuid=case_uuid)
    rows = quality.expected_rows(test_case=test_case)
    explanation = getattr(getattr(test_case, "expected", None), "explanation", "")
    # The purpose shown: a case left out reads as "off the quality items".
    purpose = TestCase.Purpose.SAMPLE if test_case.is_left_out else test_case.purpose
    error = ""
    if request.method == "POST":
        purpose = request.POST.get("purpose", "")
        explanation = request.POST.get("explanation", "")
        cells = []
        for index, row in enumerate(rows):
            text = request.POST.get(f"expected-{index}", "")[: quality.MAX_EXPECTED_FIELD]
            row["text"] = text
            cells.append(quality.ExpectedCell(row["response"], row["dimension"], text))
        try:
            quality.expected_answers_set(
                test_case=test_case,
                purpose=purpose,
                cells=cells,
                explanation=explanation,
                actor=request.user,
            )
        except ApplicationError as exc:
            error = str(exc)
        else:
            messages.success(request, f"{test_case.case_id} is saved.")
            return redirect("studies:quality", slug=study.slug)
    return render(
        request,
        "studies/quality_item.html",
        {
            "study": study,
            "case": test_case,
            "rows": rows,
            "purpose": purpose,
            "purposes": [
                (
                    TestCase.Purpose.SAMPLE,
                    "Left out of the sample for good (its key was shown)"
                    if test_case.key_shown_at
                    else "Part of the sample (no expected answer)",
                ),
                (TestCase.Purpose.GOLD, TestCase.Purpose.GOLD.label),
                (TestCase.Purpose.ATTENTION, TestCase.Purpose.ATTENTION.label),
            ],
            "explanation": explanation,
            "error": error,
            "frozen": study.is_frozen,
            "responses": sorted(
                test_case.labels.select_related("response__system").values_list(
                    "response__system__name", "response__text"
                )
            ),
        },
        status=400 if error else 200,
    )

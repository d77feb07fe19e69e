"""The adjudication rules page: per dimension, when its ratings go to an adjudicator.

Coordinators read it; the lead edits it until the study opens. Afterwards it is read-only
and shows 7.3's switch where it was taken (on the agreement page).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render

from core.user_input import whole_number_text
from studies import access
from studies.errors import ApplicationError
from studies.models import AdjudicationRule
from studies.selectors import adjudication_rules_table
from studies.services.adjudication_rules import adjudication_rules_set

MAX_FIELD = 100


def rules_from_form(post, rows: list[dict]) -> list[dict]:
    """The rules a submitted form asks for: the page's fields per dimension key, its values
    matched to the kind's stored values by their text (a form sends text only)."""
    rules = []
    for row in rows:
        key = row["key"]
        trigger = post.get(f"trigger-{key}", AdjudicationRule.Trigger.NEVER)[:MAX_FIELD]
        chosen = {text[:MAX_FIELD] for text in post.getlist(f"values-{key}")}
        values = [c["value"] for c in row["choices"] if str(c["value"]) in chosen]
        values += [text for text in chosen if text not in {str(c["value"]) for c in row["choices"]}]
        tolerance_text = post.get(f"tolerance-{key}", "").strip()[:MAX_FIELD]
        rule: dict = {"dimension": key, "trigger": trigger}
        if trigger == AdjudicationRule.Trigger.VALUES:
            rule["values"] = values
        if trigger == AdjudicationRule.Trigger.DISAGREEMENT and row["spread"]:
            tolerance = whole_number_text(tolerance_text)
            rule["tolerance"] = tolerance_text if tolerance is None else tolerance
        rules.append(rule)
    return rules


@login_required
def adjudication_rules(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    is_lead = request.user.pk == study.lead_id
    rows = adjudication_rules_table(study=study)
    error = ""
    if request.method == "POST":
        if not is_lead:
            raise PermissionDenied
        try:
            adjudication_rules_set(
                study=study, actor=request.user, rules=rules_from_form(request.POST, rows)
            )
        except ApplicationError as problem:
            error = str(problem)
        else:
            messages.success(request, "Adjudication rules saved.")
            return redirect("studies:adjudication_rules", slug=study.slug)
    return render(
        request,
        "studies/adjudication_rules.html",
        {
            "study": study,
            "rows": rows,
            "can_edit": is_lead and not study.is_frozen,
            "is_lead": is_lead,
            "triggers": AdjudicationRule.Trigger.choices,
            "error": error,
        },
        status=400 if error else 200,
    )

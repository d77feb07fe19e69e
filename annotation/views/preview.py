"""The rubric preview: the rating page exactly as raters see it, saving nothing.

It lives with the rating screen, whose context it reuses; the rubric builder links here.
"""

import uuid
from types import SimpleNamespace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse

from annotation.services import submission_check
from studies import access
from studies.errors import ApplicationError
from studies.models import Study
from studies.rubric import response_total
from studies.selectors import rubric_for_display

from .gate import parse_payload
from .rating import rating_context


def _preview_check(study: Study, raw: str, labels: list[str]) -> tuple[str, str]:
    """Check a submitted preview form with the rating service's own check; nothing is stored."""
    try:
        submitted = submission_check(study=study, labels=labels, payload=parse_payload(raw))
    except ApplicationError as error:  # RatingInvalidError, as the rating screen shows it
        return "error", f"Preview: this would be refused: {error}"
    dimensions = study.rubric.scoring_dimensions()
    totals = [
        f"Response {label}: {_total_text(response_total(dimensions, scores))}"
        for label, scores in submitted["responses"].items()
    ]
    return "info", f"Preview: this would be accepted ({'; '.join(totals)}). Nothing was saved."


def _total_text(total: int | None) -> str:
    return "no total (an optional part left unanswered)" if total is None else str(total)


@login_required
def rubric_preview(request, slug):
    """The rating page exactly as raters see it, with the first test case's prompt.

    The responses are stand-ins: the real ones under their labels would show a coordinator,
    who knows which system wrote which text, the blinding key. Nothing is saved.
    """
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    case = study.test_cases.first()
    if case is None:
        case = SimpleNamespace(
            case_id="TC-EXAMPLE",
            prompt="*No test cases yet.* The first test case's prompt will appear here.",
            context="",
            stratum="",
        )
    labels = list(case.labels.values_list("label", flat=True)) if getattr(case, "pk", None) else []
    responses = [
        (label, label, f"*Response {label} of the test case appears here for raters.*")
        for label in (labels or ["A", "B"])
    ]
    if request.method == "POST":
        level, text = _preview_check(study, request.POST.get("payload"), [r[1] for r in responses])
        messages.add_message(request, messages.ERROR if level == "error" else messages.INFO, text)
    else:
        messages.info(request, "Preview of the rating page as raters see it. Nothing is saved.")
    total = study.test_cases.count()
    return render(
        request,
        "studies/rubric_preview.html",
        {
            # The rating screen's own context, with a stand-in assignment that saves nothing.
            **rating_context(dimensions=rubric_for_display(rubric=study.rubric)),
            "study": study,
            "assignment": SimpleNamespace(
                uuid=uuid.UUID(int=0), test_case=case, status="todo", version=0
            ),
            "responses": responses,
            "payload": {},
            "version": 0,
            "current_version": 0,
            "error": None,
            "stale": False,
            "progress": SimpleNamespace(done=0, total=total, percent=0),
            "number": 1,
            "previous": None,
            "next": None,
            "can_rate": True,
            "readonly": False,
            "footer_note": f"Preview · {case.case_id}",
            # Raters' "All cases" and "Next unrated" would be 403 pages for a coordinator.
            "preview_back_url": reverse("studies:rubric", args=[study.slug]),
        },
    )

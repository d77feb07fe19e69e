"""The rater profile questions page (protocol 4.1): what raters are asked about themselves.

Coordinators add, edit, remove and reorder the questions, or start from the protocol's
preset, until the study opens. Raters answer under a consent of its own; this page and
every other coordinator page show no rater's answers (the report shows suppressed counts).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from studies import access
from studies.errors import ApplicationError
from studies.models import ProfileQuestion
from studies.profile_questions import MAX_QUESTIONS, PRESET, question_as_dict
from studies.selectors import profile_questions_of, study_setup_locked_reason
from studies.services.profile_questions import profile_questions_set

# Longer than any field the service accepts: the service refuses with its own message.
MAX_FIELD = 4000


def _field(post, name: str) -> str:
    return post.get(name, "")[:MAX_FIELD]


def _row(post, prefix: str) -> dict:
    """One question as the form sends it: choices one per line."""
    kind = _field(post, f"{prefix}-kind")
    row: dict = {
        "key": _field(post, f"{prefix}-key"),
        "label": _field(post, f"{prefix}-label"),
        "kind": kind,
    }
    if kind == ProfileQuestion.Kind.CHOICE:
        lines = _field(post, f"{prefix}-choices").splitlines()
        row["choices"] = [line for line in (text.strip() for text in lines) if line]
    if kind == ProfileQuestion.Kind.NUMBER:
        row["min"] = _field(post, f"{prefix}-min")
        row["max"] = _field(post, f"{prefix}-max")
    return row


def questions_from_form(post) -> list[dict]:
    """The list the form asks for: its rows in order, less those ticked for removal, with
    one moved when a move button was pressed, and the new row when it has a label."""
    rows = []
    # Bounded: one more row than the service accepts, so that too many is said, not dropped.
    for n in range(MAX_QUESTIONS + 1):
        prefix = f"q{n}"
        if f"{prefix}-label" not in post:
            break
        if post.get(f"{prefix}-remove"):
            continue
        rows.append((n, _row(post, prefix)))
    move = _field(post, "move")
    index, _, direction = move.partition(":")
    at = next((i for i, (n, _) in enumerate(rows) if str(n) == index), None)
    if at is not None and direction in ("up", "down"):
        other = at - 1 if direction == "up" else at + 1
        if 0 <= other < len(rows):
            rows[at], rows[other] = rows[other], rows[at]
    questions = [row for _, row in rows]
    if _field(post, "new-label").strip():
        questions.append(_row(post, "new"))
    return questions


def _form_rows(questions: list[dict]) -> list[dict]:
    return [
        {**q, "prefix": f"q{n}", "choices_text": "\n".join(q.get("choices") or [])}
        for n, q in enumerate(questions)
    ]


@login_required
def profile_questions(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    locked = study_setup_locked_reason(study=study)
    error = ""
    questions = [question_as_dict(q) for q in profile_questions_of(study=study)]
    if request.method == "POST" and not locked:
        wanted = PRESET if request.POST.get("preset") else questions_from_form(request.POST)
        try:
            profile_questions_set(study=study, actor=request.user, questions=wanted)
        except ApplicationError as problem:
            error = str(problem)
            questions = wanted
        else:
            messages.success(request, "Profile questions saved.")
            return redirect("studies:profile_questions", slug=study.slug)
    elif request.method == "POST":
        error = f"{locked} The rater profile questions can no longer change."
    return render(
        request,
        "studies/profile_questions.html",
        {
            "study": study,
            "rows": _form_rows(questions) if not locked else questions,
            "locked": locked,
            "error": error,
            "kinds": ProfileQuestion.Kind.choices,
            "max_questions": MAX_QUESTIONS,
            "preset": PRESET,
        },
        status=400 if error else 200,
    )

"""The rater's profile page (protocol 4.1): asked after the study consent, never required.

The profile has its own consent; every answer may be "Prefer not to say"; a separate
opt-in lets an export carry it beside the rater's pseudonym. The rater comes back from
their study page to view, change or withdraw it. Only the rater ever sees this page.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from annotation.selectors.own_profile import own_profile, own_profile_rows
from annotation.selectors.profile import profile_min_cell
from annotation.services.profile import profile_delete, profile_save
from studies.errors import ApplicationError
from studies.models import Membership, ProfileQuestion
from studies.profile_questions import MAX_TEXT_ANSWER

from .. import selectors
from .gate import not_started, rater_study

# Longer than any answer the service accepts: it refuses with its own message.
MAX_FIELD = 1000


def _posted_answers(post, rows: list[dict]) -> dict:
    """{key: text or None}: a choice's "" and a ticked "Prefer not to say" are None."""
    answers = {}
    for row in rows:
        question = row["question"]
        name = f"answer-{question.key}"
        value = post.get(name, "")[:MAX_FIELD]
        if question.kind != ProfileQuestion.Kind.CHOICE and post.get(f"{name}-withheld"):
            value = ""
        answers[question.key] = value if value.strip() else None
    return answers


@login_required
def rater_profile(request, slug):
    study, membership = rater_study(request, slug)
    if not_started(request, study=study):
        return redirect("annotation:assignments", slug=study.slug)
    state = selectors.onboarding_state(rater=membership)
    if state.consent_needed:
        return redirect("annotation:consent", slug=study.slug)
    profile = own_profile(rater=membership)
    rows = own_profile_rows(rater=membership)
    withdrawn = membership.status == Membership.Status.WITHDRAWN
    if not rows and profile is None:
        messages.info(request, "This study asks for no profile.")
        return redirect("annotation:assignments", slug=study.slug)
    error = ""
    consent_choice = request.POST.get("consent", "")
    share = bool(request.POST.get("share"))
    if request.method == "POST":
        try:
            if request.POST.get("withdraw"):
                profile_delete(rater=membership)
                messages.success(request, "Your profile is withdrawn and deleted.")
                return redirect("annotation:assignments", slug=study.slug)
            answers = _posted_answers(request.POST, rows)
            rows = own_profile_rows(rater=membership, answers=answers)
            profile_save(
                rater=membership,
                consented={"yes": True, "no": False}.get(consent_choice),
                answers=answers,
                share_with_pseudonym=share,
            )
        except ApplicationError as problem:
            error = str(problem)
        else:
            messages.success(
                request,
                "Thank you: your profile is saved."
                if consent_choice == "yes"
                else "Understood: you give no profile. You can rate as before.",
            )
            return redirect("annotation:assignments", slug=study.slug)
    elif profile is not None:
        consent_choice = "yes" if profile.consented else "no"
        share = profile.share_with_pseudonym
    return render(
        request,
        "annotation/profile.html",
        {
            "study": study,
            "profile": profile,
            "rows": rows,
            "consent_choice": consent_choice,
            "share": share,
            "withdrawn": withdrawn,
            "error": error,
            "max_text": MAX_TEXT_ANSWER,
            "min_cell": profile_min_cell(study=study),
        },
        status=400 if error else 200,
    )

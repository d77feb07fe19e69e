"""After the last item: the self-check, the end-of-study form, and withdrawal at any time."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from annotation.selectors.participants import participant_of
from annotation.services import participants, participation
from studies.selectors import rubric_for_display

from .. import selectors
from ..forms import FeedbackForm, WithdrawalForm
from ..models import OnboardingSettings
from .gate import blocking_redirect, rater_study


@login_required
def study_self_check(request, slug):
    study, membership = rater_study(request, slug)
    blocked = blocking_redirect(request, rater=membership)
    if blocked:
        return blocked
    return render(
        request,
        "annotation/self_check.html",
        {
            "study": study,
            "check": selectors.self_check(rater=membership),
            "progress": selectors.rater_progress(rater=membership),
        },
    )


@login_required
def study_feedback(request, slug):
    study, membership = rater_study(request, slug)
    blocked = blocking_redirect(request, rater=membership)
    if blocked:
        return blocked
    dimensions = rubric_for_display(rubric=study.rubric)
    existing = getattr(membership, "feedback", None)
    initial = {}
    if existing is not None:
        initial = {
            "suggestions": existing.suggestions,
            "patterns": existing.patterns,
            "notes": existing.notes,
        }
        for key, answer in existing.dimensions.items():
            initial[f"clarity_{key}"] = answer.get("clarity", "")
            initial[f"comment_{key}"] = answer.get("comment", "")
    form = FeedbackForm(request.POST or None, dimensions=dimensions, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            participation.feedback_submit(
                rater=membership,
                dimensions=form.dimension_answers(),
                suggestions=form.cleaned_data["suggestions"],
                patterns=form.cleaned_data["patterns"],
                notes=form.cleaned_data["notes"],
            )
        except participation.ParticipationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Thank you for your feedback. It has been recorded.")
            if participant_of(rater=membership) is not None:
                # A crowd participant whose cases are all done gets the completion code.
                if participants.completion_ready(rater=membership):
                    participants.participant_complete(rater=membership)
                return redirect("annotation:participant", slug=study.slug)
            return redirect("annotation:assignments", slug=study.slug)
    return render(
        request,
        "annotation/feedback.html",
        {"study": study, "form": form, "existing": existing},
        status=400 if form.errors else 200,
    )


@login_required
def study_withdraw(request, slug):
    study, membership = rater_study(request, slug)
    withdrawal = getattr(membership, "withdrawal", None)
    settings = selectors.onboarding_settings(study=study)
    chooses = settings.withdrawal_data == OnboardingSettings.WithdrawalData.RATER_CHOOSES
    form = WithdrawalForm(request.POST or None, rater_chooses=chooses)
    if request.method == "POST" and withdrawal is None and form.is_valid():
        try:
            participation.withdrawal_record(
                rater=membership,
                data=form.cleaned_data.get("ratings"),
                reason=form.cleaned_data.get("reason", ""),
            )
        except participation.ParticipationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "You have withdrawn from the study. Thank you for your time.")
            return redirect("annotation:assignments", slug=study.slug)
    return render(
        request,
        "annotation/withdraw.html",
        {
            "study": study,
            "form": form,
            "withdrawal": withdrawal,
            "settings": settings,
            "progress": selectors.rater_progress(rater=membership),
        },
        status=400 if form.errors else 200,
    )

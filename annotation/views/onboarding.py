"""Before the first item: consent and disclosure, training, practice and qualification."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render

from annotation import qualification as calibration
from annotation import selectors
from annotation.selectors.own_profile import profile_asked
from annotation.selectors.participants import participant_of
from annotation.services import participants, participation, training
from core.user_input import uuid_or_none
from studies import access
from studies.errors import ApplicationError
from studies.selectors import (
    case_content_warnings,
    information_sheet_additions,
    rubric_for_display,
)

from ..access import get_training_item_for_user
from ..forms import ConsentForm
from ..models import TrainingItem
from .gate import not_started, parse_payload, rater_study
from .rating import rating_context


@login_required
def study_consent(request, slug):
    study, membership = rater_study(request, slug)
    if not_started(request, study=study):
        return redirect("annotation:assignments", slug=study.slug)
    state = selectors.onboarding_state(rater=membership)
    form = ConsentForm(request.POST or None, study=study)
    if request.method == "POST" and state.consent is not None:
        # Sent again (a double click, a second tab): the first answers stand.
        return redirect("annotation:assignments", slug=study.slug)
    if request.method == "POST" and form.is_valid():
        try:
            participation.consent_record(
                rater=membership,
                agreed=bool(form.cleaned_data.get("agree")),
                prior_knowledge=form.prior_knowledge_value(),
                disclosure=form.cleaned_data.get("disclosure", ""),
            )
        except participation.ParticipationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Thank you. Your answers are recorded.")
            if profile_asked(rater=membership):
                # The profile's own, optional step: the rater may decline it or skip it.
                return redirect("annotation:profile", slug=study.slug)
            return redirect("annotation:assignments", slug=study.slug)
    return render(
        request,
        "annotation/consent.html",
        {
            "study": study,
            "form": form,
            "state": state,
            "additions": information_sheet_additions(study=study),
            "participant": participant_of(rater=membership),
        },
        status=400 if form.errors else 200,
    )


@login_required
def study_practice(request, slug):
    """The practice case in the full rating screen; nothing entered here is sent anywhere."""
    study, membership = rater_study(request, slug)
    state = selectors.onboarding_state(rater=membership)
    if state.consent_needed or state.withdrawal or not_started(request, study=study):
        return redirect("annotation:assignments", slug=study.slug)
    case = state.practice
    if case is None:
        messages.info(request, "This study has no practice case.")
        return redirect("annotation:assignments", slug=study.slug)
    # A warned case is practised as it is rated: the warning first, the prompt and the
    # responses only once the rater chooses to see them ("?show=1").
    warnings = case_content_warnings(test_case=case)
    dimensions = rubric_for_display(rubric=study.rubric)
    # Shown in key-label order: a practice screen is never flipped.
    responses = [
        (row.label, row.label, row.response.text)
        for row in case.labels.select_related("response").order_by("label")
    ]
    return render(
        request,
        "annotation/practice.html",
        {
            **rating_context(dimensions=dimensions),
            "study": study,
            "case": case,
            "responses": responses,
            "payload": {},
            "warnings": warnings,
            "gated": bool(warnings) and not request.GET.get("show"),
        },
    )


@login_required
def study_training(request, slug):
    """The list of worked examples, with the rater's progress through them."""
    study, membership = rater_study(request, slug)
    state = selectors.onboarding_state(rater=membership)
    if state.consent_needed or state.withdrawal or not_started(request, study=study):
        return redirect("annotation:assignments", slug=study.slug)
    answers = selectors.training_answers(rater=membership)
    items = [
        (item, answers.get(item.pk))
        for item in selectors.training_items(study=study, kind=TrainingItem.Kind.TRAINING)
    ]
    return render(request, "annotation/training_list.html", {"study": study, "items": items})


def _comparison(*, study, dimensions, answer: dict, key: dict, labels: list[str]) -> list[tuple]:
    """Per response ("" for the case): rows of (dimension, the rater's, the coordinator's)."""
    kinds = {kind.key: kind for kind in study.rubric.scoring_dimensions()}
    groups = []
    for label in labels:
        mine = (answer.get("responses") or {}).get(label) or {}
        theirs = (key.get("responses") or {}).get(label) or {}
        rows = [
            _row(label, dim, mine.get(dim["key"]), theirs.get(dim["key"]), kinds)
            for dim in dimensions
            if dim["scope"] == "response"
        ]
        groups.append((label, rows))
    mine, theirs = answer.get("case") or {}, key.get("case") or {}
    rows = [
        _row("", dim, mine.get(dim["key"]), theirs.get(dim["key"]), kinds)
        for dim in dimensions
        if dim["scope"] == "case"
    ]
    if rows:
        groups.append(("", rows))
    return groups


def _row(label, dim, mine, theirs, kinds) -> dict:
    kind = kinds[dim["key"]]
    return {
        "label": label,
        "dim": dim,
        "mine": kind.display(mine),
        "theirs": kind.display(theirs),
        "same": kind.same_answer(mine, theirs),
    }


@login_required
def training_item_answer(request, slug, item_uuid):
    item, study, membership = get_training_item_for_user(
        request.user, slug, item_uuid, role=access.RATER
    )
    if membership is None:  # the rater role is a membership's
        raise PermissionDenied
    state = selectors.onboarding_state(rater=membership)
    if state.consent_needed or state.withdrawal or not_started(request, study=study):
        return redirect("annotation:assignments", slug=study.slug)
    dimensions = rubric_for_display(rubric=study.rubric)
    answer = selectors.training_answers(rater=membership).get(item.pk)
    error = None
    payload = answer.answer if answer else {}
    if request.method == "POST":
        try:
            payload = parse_payload(request.POST.get("payload"))
            training.training_answer_submit(rater=membership, item=item, payload=payload)
        except ApplicationError as exc:
            error = str(exc)
        else:
            return redirect("annotation:training_item", slug=slug, item_uuid=item.uuid)
    responses = selectors.item_responses(item=item)
    items = list(selectors.training_items(study=study, kind=TrainingItem.Kind.TRAINING))
    following = next((i for i in items if i.position > item.position), None)
    show_answer = answer is not None and not error and request.GET.get("again") is None
    return render(
        request,
        "annotation/training_item.html",
        {
            **rating_context(dimensions=dimensions),
            "study": study,
            "item": item,
            "responses": responses,
            "payload": payload,
            "error": error,
            "show_answer": show_answer,
            "comparison": _comparison(
                study=study,
                dimensions=dimensions,
                answer=answer.answer if answer else {},
                key=item.key,
                labels=[label for label, _, _ in responses],
            )
            if show_answer
            else [],
            "following": following,
            "number": items.index(item) + 1 if item in items else 1,
            "count": len(items),
        },
        status=400 if error else 200,
    )


def _screened_out(membership):
    """A crowd participant who has failed the test leaves with the screened-out code."""
    if participant_of(rater=membership) is None:
        return None
    if not selectors.onboarding_state(rater=membership).qualification_failed:
        return None
    participants.participant_screen_out(rater=membership, reason="qualification")
    return redirect("annotation:participant", slug=membership.study.slug)


@login_required
def study_qualification(request, slug):
    study, membership = rater_study(request, slug)
    state = selectors.onboarding_state(rater=membership)
    if state.consent_needed or state.withdrawal or not_started(request, study=study):
        return redirect("annotation:assignments", slug=study.slug)
    if state.qualification_items == 0:
        return redirect("annotation:assignments", slug=study.slug)
    attempt = selectors.qualification_open_attempt(rater=membership)
    error = None
    posted = {}
    if request.method == "POST" and not state.qualification_passed:
        try:
            if request.POST.get("start"):
                training.qualification_attempt_start(rater=membership)
            elif attempt is not None:
                item_uuid = uuid_or_none(request.POST.get("item"))
                item = (
                    study.training_items.filter(
                        kind=TrainingItem.Kind.QUALIFICATION, uuid=item_uuid
                    ).first()
                    if item_uuid
                    else None
                )
                if item is None:
                    raise training.TrainingError("This item is not part of the test; reload.")
                posted = parse_payload(request.POST.get("payload"))
                attempt = training.qualification_answer_submit(
                    rater=membership, attempt=attempt, item=item, payload=posted
                )
                if attempt.finished_at is not None:
                    messages.info(request, "You have answered every item. Your result is below.")
        except ApplicationError as exc:
            error = str(exc)
        else:
            return _screened_out(membership) or redirect("annotation:qualification", slug=slug)
    context = {
        "study": study,
        "state": state,
        "attempt": attempt,
        "error": error,
        "pass_rule": calibration.RULE,
    }
    item = None
    if attempt is not None and not state.qualification_passed:
        item = selectors.qualification_next_item(rater=membership, attempt=attempt)
    if item is not None and attempt is not None:
        dimensions = rubric_for_display(rubric=study.rubric)
        items = selectors.training_items(study=study, kind=TrainingItem.Kind.QUALIFICATION)
        context.update(
            rating_context(dimensions=dimensions),
            item=item,
            responses=selectors.item_responses(item=item),
            payload=posted,
            qualification_fields=[("item", str(item.uuid))],
            answered=attempt.answers.count(),
            count=items.count(),
        )
    finished = [a for a in state.attempts if a.finished_at is not None]
    context["last"] = finished[-1] if finished else None
    return render(request, "annotation/qualification.html", context, status=400 if error else 200)

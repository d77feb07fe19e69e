"""Participant links: the lead's pages (list, create, edit, close) and the page a crowd
platform sends its participants to (``studies.services.participants``)."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from studies import access
from studies.models import Participant, ParticipantLink
from studies.participant_urls import participant_link_url
from studies.services.participants import (
    LINK_FIELDS,
    PRESETS,
    ParticipantError,
    participant_join,
    participant_link_close,
    participant_link_for_token,
    participant_link_save,
)


def _links(study):
    counts = {
        status: Count("participants", filter=Q(participants__status=status))
        for status in Participant.Status.values
    }
    return study.participant_links.annotate(total=Count("participants"), **counts).prefetch_related(
        "linked_studies"
    )


def _values(post) -> dict:
    values = {field: post.get(field, "") for field in LINK_FIELDS}
    return values


def _initial(link: ParticipantLink | None) -> dict:
    if link is None:
        return {"preset": "prolific", "timeout_minutes": 60, "bonus_rule": "none",
                "bonus_amount": "0", "bonus_currency": "GBP"}  # fmt: skip
    values = {field: getattr(link, field) for field in LINK_FIELDS if field != "linked_studies"}
    values["linked_studies"] = " ".join(s.slug for s in link.linked_studies.all())
    return values


def _form_context(study, link, values, error):
    return {
        "study": study,
        "link": link,
        "values": values,
        "error": error,
        "presets": ParticipantLink.Preset.choices,
        "bonus_rules": ParticipantLink.BonusRule.choices,
        "preset_params": {k: v for k, v in PRESETS.items()},
    }


@never_cache
@login_required
def participant_links(request, slug):
    """The study's links with their counts and URLs; the lead adds one here."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    is_lead = request.user.pk == study.lead_id
    values, error = _initial(None), None
    if request.method == "POST":
        if not is_lead:
            raise PermissionDenied
        values = _values(request.POST)
        try:
            link = participant_link_save(study=study, actor=request.user, values=values)
        except ParticipantError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Link “{link.name}” made. Paste its URL into the vendor.")
            return redirect("studies:participant_links", slug=study.slug)
    links = [(link, participant_link_url(request, link)) for link in _links(study)]
    return render(
        request,
        "studies/participants/links.html",
        {**_form_context(study, None, values, error), "links": links, "is_lead": is_lead},
        status=400 if error else 200,
    )


def _link_of(request, slug, link_uuid, *, role):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    link = study.participant_links.filter(uuid=link_uuid).first()
    if link is None:
        raise Http404
    return study, link


@never_cache
@login_required
def participant_link_edit(request, slug, link_uuid):
    study, link = _link_of(request, slug, link_uuid, role=access.COORDINATOR)
    values, error = _initial(link), None
    if request.method == "POST":
        if request.user.pk != study.lead_id:
            raise PermissionDenied
        values = _values(request.POST)
        try:
            participant_link_save(study=study, actor=request.user, values=values, link=link)
        except ParticipantError as exc:
            error = str(exc)
        else:
            messages.success(request, "Link saved.")
            return redirect("studies:participant_links", slug=study.slug)
    return render(
        request,
        "studies/participants/link_edit.html",
        {
            **_form_context(study, link, values, error),
            "url": participant_link_url(request, link),
            "is_lead": request.user.pk == study.lead_id,
        },
        status=400 if error else 200,
    )


@login_required
@require_POST
def participant_link_close_view(request, slug, link_uuid):
    study, link = _link_of(request, slug, link_uuid, role=access.LEAD)
    participant_link_close(link=link, actor=request.user)
    messages.success(request, f"Link “{link.name}” closed: no one new can join through it.")
    return redirect("studies:participant_links", slug=study.slug)


@never_cache
def participant_join_view(request, link_token):
    """Where the vendor sends a participant: a page with a Start button (a GET writes
    nothing, so a link checker or a preview creates no one); the POST joins or resumes."""
    try:
        link = participant_link_for_token(token=link_token)
    except ParticipantError as exc:
        raise Http404 from exc
    params = request.POST if request.method == "POST" else request.GET
    carried = [
        (name, params.get(name, "")[:200])
        for name in (link.participant_param, link.study_param, link.session_param)
        if name
    ]
    error = None
    if request.method == "POST":
        signed_in = request.user if request.user.is_authenticated else None
        try:
            outcome = participant_join(link=link, params=request.POST, signed_in=signed_in)
        except ParticipantError as exc:
            error = exc
        else:
            if signed_in is None or signed_in.pk != outcome.user.pk:
                login(request, outcome.user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("annotation:participant", slug=link.study.slug)
    return render(
        request,
        "studies/participants/join.html",
        {
            "link": link,
            "study": link.study,
            "carried": carried,
            "error": error,
            "open": link.is_open and not link.study.is_closed,
        },
        status=400 if error else 200,
    )

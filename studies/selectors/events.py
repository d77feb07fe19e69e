"""The set-up and lifecycle part of the audit trail, in plain words."""

from collections.abc import Callable

from ..models import (
    Study,
    StudyEvent,
)

# The part of the audit trail shown on the settings page.
SETUP_EVENTS = (
    StudyEvent.Kind.CREATED,
    StudyEvent.Kind.SETTINGS_CHANGED,
    StudyEvent.Kind.CASES_IMPORTED,
    StudyEvent.Kind.CASES_REMOVED,
    StudyEvent.Kind.RUBRIC_CHANGED,
    StudyEvent.Kind.PILOT_STARTED,
    StudyEvent.Kind.OPENED,
    StudyEvent.Kind.CLOSED,
    StudyEvent.Kind.REOPENED,
    StudyEvent.Kind.ADMIN_CHANGED,
    StudyEvent.Kind.WORKSHEET_IMPORTED,
    StudyEvent.Kind.RATER_PAUSED,
    StudyEvent.Kind.RATER_SENT_TO_RETRAINING,
    StudyEvent.Kind.RATER_EXCLUDED,
    StudyEvent.Kind.RATER_REINSTATED,
    StudyEvent.Kind.RATER_FLAG_DISMISSED,
    StudyEvent.Kind.QUALITY_SETTINGS_CHANGED,
    StudyEvent.Kind.EXPECTED_ANSWERS_SET,
    StudyEvent.Kind.EXPECTED_ANSWERS_IMPORTED,
    StudyEvent.Kind.ATTENTION_CHECK_ADDED,
    StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED,
    StudyEvent.Kind.JUDGE_TEMPLATE_SAVED,
    StudyEvent.Kind.ADJUDICATION_RULES_SET,
    StudyEvent.Kind.ADJUDICATION_SENT,
    StudyEvent.Kind.ADJUDICATION_SWITCHED,
    StudyEvent.Kind.UNBLINDED,
    StudyEvent.Kind.IDENTITY_ERASED,
)


# Administrators' decisions about a rater: shown with the pseudonym and the reason.
RATER_DECISIONS = (
    StudyEvent.Kind.RATER_PAUSED,
    StudyEvent.Kind.RATER_SENT_TO_RETRAINING,
    StudyEvent.Kind.RATER_EXCLUDED,
    StudyEvent.Kind.RATER_REINSTATED,
    StudyEvent.Kind.RATER_FLAG_DISMISSED,
)


# What the history says about a rater by pseudonym: those decisions and an erasure.
RATER_HISTORY = (*RATER_DECISIONS, StudyEvent.Kind.IDENTITY_ERASED)


# Gold items, attention checks and LLM judges: what each set-up event names.
QUALITY_ITEM_EVENTS: dict[str, Callable[[dict], str]] = {
    StudyEvent.Kind.EXPECTED_ANSWERS_SET: lambda d: (
        f": {d.get('case', '')} ({d.get('purpose', '')})"
    ),
    StudyEvent.Kind.EXPECTED_ANSWERS_IMPORTED: lambda d: (
        f": {d.get('cases', 0)} from {d.get('file', '')}"
    ),
    StudyEvent.Kind.ATTENTION_CHECK_ADDED: lambda d: f": {d.get('case', '')}",
    StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED: lambda d: (
        f": {d.get('rows', 0)} from {d.get('file', '')} ({', '.join(d.get('judges', []))};"
        f" {d.get('unparseable', 0)} unreadable)"
    ),
    StudyEvent.Kind.JUDGE_TEMPLATE_SAVED: lambda d: f": {d.get('name', '')}",
}


def _describe(event: StudyEvent) -> str:
    detail = event.detail
    Kind = StudyEvent.Kind
    text = event.get_kind_display()
    fields = ", ".join(f.replace("_", " ") for f in detail.get("fields", []))
    if event.kind == Kind.SETTINGS_CHANGED:
        text += f": {fields}"
    elif event.kind == Kind.ADMIN_CHANGED:
        text += f": {detail.get('object', '')} {detail.get('action', '')}"
        text += f" ({fields})" if fields else ""
    elif event.kind in (Kind.CASES_IMPORTED, Kind.CASES_REMOVED):
        text += f": {detail.get('cases', 0)}"
        if detail.get("filename"):
            text += f" from {detail['filename']} (SHA-256 {detail.get('sha256', '')[:12]}…)"
    elif event.kind == Kind.RUBRIC_CHANGED:
        if detail.get("preset"):
            text += f": preset {detail['preset']}"
        else:
            text += f": {detail.get('dimension', '')} {detail.get('action', '')}"
            if detail.get("level"):
                text += f" ({detail['level']})"
    elif event.kind in (Kind.OPENED, Kind.PILOT_STARTED) and detail.get("fingerprint"):
        text += f"; fingerprint {detail['fingerprint'][:12]}…"
    elif event.kind in RATER_HISTORY and event.membership is not None:
        # By pseudonym only: an erasure never says whose identity it was.
        who = event.membership.pseudonym or event.membership.get_role_display()
        text = f"{who}: {text.lower()}"
        automatic = detail.get("automatic") and event.kind in RATER_DECISIONS
        text += " automatically (QC rule)" if automatic else ""
        text += f" ({event.reason})" if event.reason else ""
    elif event.kind in QUALITY_ITEM_EVENTS:
        text += QUALITY_ITEM_EVENTS[event.kind](detail)
    elif event.kind == Kind.WORKSHEET_IMPORTED and event.membership is not None:
        text += f" for {event.membership.pseudonym}: {detail.get('cases', 0)} cases"
    return text


def _automatic_actor(event: StudyEvent) -> str:
    """Who did what no person did: a rule of the app, or the command line."""
    if not event.detail.get("automatic"):
        return "(command line)"
    if event.kind == StudyEvent.Kind.IDENTITY_ERASED:
        return "(retention period)"
    return "(quality control)"


def study_setup_events(*, study: Study, limit: int = 50) -> list[dict]:
    """The set-up and lifecycle part of the audit trail, newest first, in plain words."""
    events = (
        StudyEvent.objects.filter(study=study, kind__in=SETUP_EVENTS)
        .select_related("actor", "membership")
        .order_by("-created_at", "-pk")[:limit]
    )
    return [
        {
            "when": event.created_at,
            "who": event.actor.get_username() if event.actor else _automatic_actor(event),
            "what": _describe(event),
        }
        for event in events
    ]

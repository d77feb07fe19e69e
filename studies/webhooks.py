"""What a webhook delivery carries: the payload, built from a whitelist, and its signature.

Nothing that could map Response A or B to a system may leave before unblinding, so the
payload is never a copy of what the announcing code passed: each event kind names the few
fields it carries and their type (counts, times, a word from a closed list), and anything
else is dropped. No event carries a system's name, a response, a label or the key.

The body is JSON; the ``Concord-Signature`` header is ``t=<unix time>,v1=<hex>``, where hex is
HMAC-SHA256 under the webhook's secret of ``"<unix time>." + body``. ``id`` in the body
(also ``Concord-Event-Id``) names the event: a replay sends it again, so a receiver that
deduplicates on it acts once. See docs/coordinator.md, "Webhooks".
"""

import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Callable
from datetime import datetime

from .models import Webhook

logger = logging.getLogger(__name__)

Event = Webhook.Event
SIGNATURE_HEADER = "Concord-Signature"
EVENT_ID_HEADER = "Concord-Event-Id"
DELIVERY_HEADER = "Concord-Delivery"
EVENT_HEADER = "Concord-Event"
# The analyses whose readiness is announced (``agreement.analysis.jobs``' names).
ANALYSES = ("ranking", "robustness", "judge-calibration")
MILESTONE_EVERY_MAX = 1_000_000


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _moment(value) -> str | None:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).isoformat()
        except ValueError:
            return None
    return None


def _analysis(value) -> str | None:
    if not isinstance(value, str):
        return None
    name = value.partition(":")[0]
    return name if name in ANALYSES else None


# The monitor's states (``agreement.models.PrimaryMonitor.State``), all symmetric in the
# two systems: "decided" never says which one is ahead.
MONITOR_STATES = ("not_decided", "decided", "within_margin", "unavailable")


def _monitor_state(value) -> str | None:
    return value if isinstance(value, str) and value in MONITOR_STATES else None


# Each event's fields and how each is read; a value that does not read is left out.
PAYLOAD_FIELDS: dict[str, dict[str, Callable]] = {
    Event.RATING_MILESTONE: {"milestone": _count, "submitted": _count, "every": _count},
    Event.AGREEMENT_RECOMPUTED: {"run": _count, "computed_at": _moment},
    Event.STUDY_CLOSED: {"closed_at": _moment},
    Event.ANALYSIS_READY: {"analysis": _analysis},
    Event.MONITOR_CHANGED: {"state": _monitor_state, "n": _count},
}


def webhook_payload(*, event: str, study_slug: str, event_id, created_at, detail: dict) -> dict:
    """The body of an event's deliveries: the envelope and the event's whitelisted fields."""
    fields = PAYLOAD_FIELDS[event]
    dropped = sorted(set(detail) - set(fields))
    if dropped:
        logger.warning("Webhook event %s: fields left out of the payload: %s", event, dropped)
    data = {}
    for name, read in fields.items():
        value = read(detail.get(name))
        if value is not None:
            data[name] = value
    return {
        "id": str(event_id),
        "event": str(event),
        "created_at": _moment(created_at),
        "study": study_slug,
        "data": data,
    }


def webhook_body(payload: dict) -> bytes:
    """The bytes sent and signed: the same for every attempt and replay of an event."""
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()


def webhook_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def webhook_signature_valid(*, secret: str, header: str, body: bytes) -> bool:
    """What a receiver does (the tests' receiver does it): check the header against the body."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    expected = webhook_signature(secret=secret, timestamp=timestamp, body=body)
    return hmac.compare_digest(expected, header)


def webhook_secret_new() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


# How many ratings a study has: ``studies`` never reads ``annotation``'s tables, so the
# app that records ratings registers its count here when it loads (see ``studies.activity``).
_submitted_readers: list[Callable[..., int]] = []


def submitted_count_reader_register(reader: Callable[..., int]) -> None:
    """Register ``reader(study_id=...)``, the study's submitted ratings (one per rater and case)."""
    if reader not in _submitted_readers:
        _submitted_readers.append(reader)


def submitted_count(*, study_id: int) -> int:
    return sum(reader(study_id=study_id) for reader in _submitted_readers)

"""No webhook delivery can map Response A or B to a system before unblinding.

Every event kind's payload is built from its whitelist (``studies.webhooks.PAYLOAD_FIELDS``):
here each kind is given everything the blinding hides, by name and under its own fields'
names, and what would be sent is checked against the study's system names and its key;
then a whole study before unblinding is run with a webhook for every event, and every body
its receiver got is checked the same way.
"""

import json

import pytest
from django.utils import timezone

from agreement.analysis.jobs import analysis_job_start, ranking_analysis
from studies.models import BlindedLabel, Response, Webhook, WebhookDelivery
from studies.services import study_close
from studies.services.webhooks import webhook_add, webhook_event_announce
from studies.webhooks import PAYLOAD_FIELDS, webhook_body, webhook_payload

from ..factories import UserFactory
from ..payloads import SYSTEMS, payload_for, study_with_systems, submit
from ..studies.webhook_receiver import receiver_running


@pytest.fixture
def receiver(settings):
    yield from receiver_running(settings)


@pytest.fixture
def study(db):
    return study_with_systems(slug="blind-hooks", cases=4, raters=[UserFactory(), UserFactory()])


def secrets_of(study) -> list[str]:
    """What must not leave: the system names, the blinding secret, the responses' ids and
    texts, and the key written out label by label."""
    responses = Response.objects.filter(test_case__study=study).select_related("system")
    key = BlindedLabel.objects.filter(test_case__study=study).select_related(
        "response__system", "test_case"
    )
    return [
        *SYSTEMS,
        study.blinding_secret,
        *(str(r.uuid) for r in responses),
        *(r.text for r in responses),
        *(f"{k.label}={k.response.system.name}" for k in key),
    ]


def planted(study) -> dict:
    """Everything the blinding hides, as fields an announcing caller might pass."""
    key = {
        f"{k.test_case.case_id}:{k.label}": k.response.system.name
        for k in BlindedLabel.objects.filter(test_case__study=study).select_related(
            "response__system", "test_case"
        )
    }
    return {
        "systems": list(SYSTEMS),
        "system": SYSTEMS[0],
        "key": key,
        "blinding_secret": study.blinding_secret,
        "responses": [str(r.uuid) for r in Response.objects.filter(test_case__study=study)],
        "A": SYSTEMS[0],
        "B": SYSTEMS[1],
    }


def leaks(text: str, study) -> list[str]:
    return [secret for secret in secrets_of(study) if secret and secret in text]


def test_every_event_kind_has_a_whitelist():
    assert set(PAYLOAD_FIELDS) == set(Webhook.Event.values)


@pytest.mark.parametrize("event", Webhook.Event.values)
def test_no_event_kind_carries_what_the_blinding_hides(study, event):
    assert not study.is_unblinded
    fields = PAYLOAD_FIELDS[event]
    # The whitelisted names themselves, given a system's name or the key instead of a value.
    disguised = {name: SYSTEMS[0] for name in fields} | {"key": planted(study)["key"]}
    for detail in (planted(study), disguised, {**planted(study), **{n: 3 for n in fields}}):
        payload = webhook_payload(
            event=event,
            study_slug=study.slug,
            event_id="00000000-0000-0000-0000-000000000001",
            created_at=timezone.now(),
            detail=detail,
        )
        assert set(payload) == {"id", "event", "created_at", "study", "data"}
        assert set(payload["data"]) <= set(fields)
        assert leaks(webhook_body(payload).decode(), study) == []


def test_the_check_sees_a_planted_leak(study):
    # The check above would pass vacuously if it missed what it looks for.
    body = json.dumps({"data": planted(study)})
    assert SYSTEMS[0] in leaks(body, study)
    assert study.blinding_secret in leaks(body, study)


def test_a_whole_study_before_unblinding_sends_nothing_that_unblinds(
    study, receiver, django_capture_on_commit_callbacks
):
    webhook_add(
        study=study,
        actor=study.lead,
        url=receiver.url(),
        events=list(Webhook.Event.values),
        milestone_every=1,
    )
    raters = study.memberships.filter(role="rater").order_by("pseudonym")
    for n, assignment in enumerate(a for r in raters for a in r.assignments.order_by("position")):
        with django_capture_on_commit_callbacks(execute=True):
            submit(assignment, payload_for(n))
    analysis_job_start(analysis=ranking_analysis(study=study), requested_by=study.lead)
    # Whatever a caller passes is read through the whitelist.
    with django_capture_on_commit_callbacks(execute=True):
        webhook_event_announce(study_id=study.pk, event="analysis.ready", **planted(study))
    # The monitored primary question's change (its own run: tests/agreement/test_monitor.py),
    # given everything the blinding hides beside its fields.
    with django_capture_on_commit_callbacks(execute=True):
        webhook_event_announce(
            study_id=study.pk, event="monitor.changed", state="decided", n=4, **planted(study)
        )
    with django_capture_on_commit_callbacks(execute=True):
        study_close(study=study, actor=study.lead)
    study.refresh_from_db()
    assert not study.is_unblinded
    events = {json.loads(r.body)["event"] for r in receiver.received}
    assert events == set(Webhook.Event.values)
    for received in receiver.received:
        assert leaks(received.body.decode(), study) == [], received.body
        assert leaks(json.dumps(received.headers), study) == []
    for payload in WebhookDelivery.objects.values_list("payload", flat=True):
        assert leaks(json.dumps(payload), study) == []

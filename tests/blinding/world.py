"""One small open study, built the same way under a given blinding secret.

Everything an observer can know without the key is the same in every build: the systems,
the texts, the case ids, the people, the seed and the secret, the ratings as raters give
them (per label), the quality items, the judges' outputs (per shown position), and the
ids and times the app draws (``same_draws``). Only the blinding secret differs, and with it
which system is shown as A on the cases its draw puts the other way round.
"""

import contextlib
import json
import os
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from unittest import mock

# The app imports these where they are used (a web process starts without them), and
# importing scipy.stats draws random bytes: the first build would import them inside its
# seeded draws and the second would not, shifting every id after. Imported here, up front,
# with the Celery app (loaded by the first job).
import markdown_it  # noqa: F401
import nh3  # noqa: F401
import openpyxl  # noqa: F401
import redis  # noqa: F401
import scipy.optimize
import scipy.stats  # noqa: F401
import time_machine
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import connection

from agreement.analysis.roles import dimension_measure
from agreement.services import judge_outputs_import
from agreement.services.monitor import monitoring_set
from agreement.services.plan import primary_measure_set
from annotation.models import Adjudication
from annotation.services import assignments_create_all, draft_save, rating_submit
from annotation.services.adjudication import adjudication_resolve
from annotation.services.participation import consent_record
from config.celery import app as _celery_app  # noqa: F401
from jobs.models import Job
from studies.access import COORDINATORS_GROUP
from studies.blinding import blinded_order, judge_prompt_first
from studies.models import CaseUpload, Membership, Study, TestCase, Webhook, WebhookDelivery
from studies.presets import PAIRWISE_RUBRIC, protocol_settings
from studies.rubric import allowed_levels
from studies.services import (
    case_upload_create,
    dimension_save,
    invitations,
    membership_add,
    study_create,
    study_open,
    test_cases_add,
    tokens,
)
from studies.services.participants import participant_join, participant_link_save
from studies.services.quality import ExpectedCell, attention_check_create, expected_answers_set

from ..annotation.support import make_item
from ..factories import UserFactory, make_cases
from ..payloads import payload_for

SLUG = "keyswap"
SECRET = "5eed5eed5eed5eed5eed5eed5eed5eed"
SYSTEMS = ("baseline", "improved")
SAMPLE_CASES = 6
GOLD_ID = f"TC-{SAMPLE_CASES + 1:03d}"
ATTENTION_ID = "TC-900"
SAMPLE_IDS = frozenset(f"TC-{n:03d}" for n in range(1, SAMPLE_CASES + 1))
# The reference protocol's blinding seed.
SEED = 42
RATERS = 3
# The answers of rater r on the case at position p, per label (the same in every build).
CHOICES = (-2, -1, 0, 1, 2)
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# The two judges: one always prefers the response its prompt shows first, one the second.
JUDGE_VERDICTS = {"always-first": "A", "always-second": "B"}
# A judge whose template allows a tie: a tie ("[[C]]") on odd cases, the first shown on even.
TYING_JUDGE = "ties-on-odd-cases"

# Tables that migrations fill and no build writes: kept when the database is emptied.
KEPT_TABLES = {
    "django_migrations",
    "django_content_type",
    "auth_permission",
    "auth_group",
    "auth_group_permissions",
}


def second_secret() -> str:
    """A blinding secret under which the real key differs from ``SECRET``'s on some of the
    sample cases but not all, and not on the quality items.

    Some, not all: swapping every case keeps which responses share a system, so an output
    that grouped responses by system across cases would not change. The quality items keep
    their key: the coordinator writes a gold item's expected answers per system and reviews
    the raters' answers to it per system (the quality page), so its key is theirs to see;
    each case's key is its own draw, so it tells nothing of the sample's.
    """
    for n in range(1, 10_000):
        candidate = f"{SECRET}-{n}"
        differing = key_differences(SECRET, candidate)
        if 1 < len(differing) < SAMPLE_CASES - 1 and differing <= SAMPLE_IDS:
            return candidate
    raise AssertionError("no second secret found")


def key_differences(first: str, second: str) -> frozenset[str]:
    """The cases (sample and quality items) whose key differs between the two secrets."""
    ids = [f"TC-{n:03d}" for n in range(1, SAMPLE_CASES + 2)] + [ATTENTION_ID]
    differing = {
        case_id
        for case_id in ids
        if blinded_order(seed=SEED, secret=first, case_id=case_id, systems=SYSTEMS)
        != blinded_order(seed=SEED, secret=second, case_id=case_id, systems=SYSTEMS)
    }
    return frozenset(differing)


@dataclass
class World:
    study: Study
    people: dict
    secrets: dict
    args: dict = field(default_factory=dict)
    pseudonyms: list[str] = field(default_factory=list)
    # Each case's systems in the order shown (A first), as stored.
    key: dict[str, tuple[str, ...]] = field(default_factory=dict)
    response_texts: list[str] = field(default_factory=list)


@contextlib.contextmanager
def same_draws(seed: int = 2026):
    """Random bytes from a seeded generator, and a clock that moves only when told.

    Every uuid4, token and secret the app draws comes from ``os.urandom`` (uuid4,
    ``studies.bulk_rows``) or the ``random`` module's system source (``secrets``,
    Django's random strings), so two builds that create the same objects in the same
    order get the same ids. Yields the clock (``shift`` moves it on).
    """
    source = random.Random(seed)
    with (
        mock.patch.object(os, "urandom", source.randbytes),
        mock.patch("random._urandom", source.randbytes),
        time_machine.travel(START, tick=False) as clock,
    ):
        yield clock


def database_empty() -> None:
    """Every row the builds write removed, and every id sequence restarted at 1."""
    # Uploaded files are named by their upload's uuid, which the next build draws again:
    # a file left behind would make the storage draw a new name (and shift every draw).
    for upload in CaseUpload.objects.all():
        upload.file.delete(save=False)
    tables = set(connection.introspection.django_table_names(only_existing=True))
    tables -= KEPT_TABLES
    quoted = ", ".join(connection.ops.quote_name(t) for t in sorted(tables))
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE")
    # Computed results are cached by study id: the next build must compute its own.
    cache.clear()


def prompt_order_pinned(*, seed, secret, case_id, systems):
    # The judge prompts' order is drawn from the secret through a one-way hash, never from
    # the key (so it says nothing of the key); held fixed here like the texts, so that the
    # two builds differ in their key alone.
    return judge_prompt_first(seed=seed, secret=SECRET, case_id=case_id, systems=systems)


def _rating(position: int, rater: int) -> dict:
    """Rater ``rater``'s answers on the case at ``position``, per label."""
    payload = payload_for(position + 2 * rater)
    payload["case"] = {"preference": {"choice": CHOICES[(position * 2 + rater) % len(CHOICES)]}}
    payload["notes"] = "Response A reads more carefully." if position % 3 == rater else ""
    return payload


def _judge_file(case_ids: list[str]) -> bytes:
    rows = [
        {"judge": judge, "case_id": case_id, "order": order, "output": f"Compared.\n[[{shown}]]"}
        for judge, shown in JUDGE_VERDICTS.items()
        for case_id in case_ids
        for order in ("AB", "BA")
    ]
    return "\n".join(json.dumps(row) for row in rows).encode()


def _tying_judge_file(case_ids: list[str]) -> bytes:
    rows = [
        {
            "judge": TYING_JUDGE,
            "case_id": case_id,
            "order": order,
            "output": f"Compared.\n[[{'C' if int(case_id[3:]) % 2 else 'A'}]]",
        }
        for case_id in case_ids
        for order in ("AB", "BA")
    ]
    return "\n".join(json.dumps(row) for row in rows).encode()


def _adjudications(study: Study):
    """An adjudicator, a case they resolved (answers per key label, the same in every
    build) and one waiting: the adjudication screen shows the pair in key order."""
    user = UserFactory(username="ks-adjudicator")
    adjudicator = membership_add(study=study, user=user, role=Membership.Role.ADJUDICATOR)
    first, second = study.test_cases.in_sample().order_by("position")[:2]
    decided = Adjudication.objects.create(test_case=first, triggers={"depth": ["disagreement"]})
    items = [{"text": f"factor {i}", "half": False} for i in range(3)]
    adjudication_resolve(
        adjudication=decided, adjudicator=adjudicator, expected_version=0, actor=user,
        payload={"responses": {"A": {"depth": {"items": items}}, "B": {"depth": {"items": []}}},
                 "notes": "Three distinct factors in A."},
    )  # fmt: skip
    waiting = Adjudication.objects.create(
        test_case=second, triggers={"preference": ["values"], "depth": ["manual"]}
    )
    return user, [decided, waiting]


def build(*, secret: str, clock) -> World:
    """The study, opened and rated, its key drawn with the blinding secret ``secret``."""
    coordinators, _ = Group.objects.get_or_create(name=COORDINATORS_GROUP)
    lead = UserFactory(username="ks-lead")
    lead.groups.add(coordinators)
    admin = UserFactory(username="ks-admin", is_staff=True, is_superuser=True)
    raters = [UserFactory(username=f"ks-rater-{n}") for n in range(1, RATERS + 1)]
    study = study_create(
        slug=SLUG, name="Key swap", lead=lead, rubric_preset="reference",
        **protocol_settings("reference"),
    )  # fmt: skip
    Study.objects.filter(pk=study.pk).update(blinding_secret=secret)
    study.refresh_from_db()
    assert study.blinding_seed == SEED
    pairwise = PAIRWISE_RUBRIC["dimensions"][0]
    dimension_save(
        study=study, actor=lead, key=None, new_key=pairwise["key"], name=pairwise["name"],
        kind="pairwise", config=pairwise["config"], level=allowed_levels("pairwise")[0],
    )  # fmt: skip
    upload = case_upload_create(study=study, actor=lead, filename="more.csv", data=b"id,prompt\n")
    cases = make_cases(SAMPLE_CASES + 1, SYSTEMS)
    for case in cases:
        # Of different lengths, so that anything computed from a text (a length, a count
        # of words) differs between the systems too.
        n = case["id"][3:]
        short = f"A short answer to case {n}."
        longer = f"A longer and more careful answer to case {n}, with its reasons."
        case["responses"] = dict(zip(SYSTEMS, (short, longer), strict=True))
    test_cases_add(study=study, systems=list(SYSTEMS), cases=cases)
    attention_check_create(
        study=study, case_id=ATTENTION_ID, prompt="Read this one carefully.", text=None,
        actor=lead,
    )  # fmt: skip
    expected_answers_set(
        test_case=study.test_cases.get(case_id=GOLD_ID),
        purpose=TestCase.Purpose.GOLD,
        cells=[
            ExpectedCell(response=system, dimension="depth", text=points)
            for system, points in zip(SYSTEMS, ("2", "4"), strict=True)
        ],
        explanation="The longer response names more factors.",
        actor=lead,
    )
    item = make_item(study)
    _, invitation_token = invitations.invitation_create(study=study, created_by=lead)
    memberships = []
    for user in raters:
        membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=membership)
        consent_record(rater=membership, agreed=True, prior_knowledge=False)
        memberships.append(membership)
    # The adaptive design's outputs (agreement on the first two ratings of each case, the
    # report's account of extra raters) are compared too; every rater has every case here,
    # so nobody is added.
    Study.objects.filter(pk=study.pk).update(raters_per_item=2, raters_per_item_max=3)
    # The primary question monitored (issue 30): the monitor's state is in the report, its
    # section, the API's monitor endpoint and the exports, and must not depend on the key.
    primary_measure_set(study=study, actor=lead, measure=dimension_measure(pairwise["key"]))
    monitoring_set(
        study=study, actor=lead, enabled=True, alpha="0.05", expected_effect="0.08",
        margin="0.05",
    )  # fmt: skip
    study = study_open(study=study, actor=lead, acknowledge_warnings=True)
    positions = dict(study.test_cases.values_list("pk", "position"))
    for r, membership in enumerate(memberships):
        for n, assignment in enumerate(membership.assignments.order_by("position", "pk")):
            clock.shift(timedelta(minutes=1))
            payload = _rating(positions[assignment.test_case_id], r)
            if r == RATERS - 1 and n >= 6:
                # The last rater is not done: one case in draft, one not started.
                if n == 6:
                    draft_save(assignment=assignment, payload=payload, expected_version=0)
                continue
            rating_submit(assignment=assignment, payload=payload, any_version=True)
    clock.shift(timedelta(minutes=5))
    sample = list(study.test_cases.in_sample().values_list("case_id", flat=True))
    judge_outputs_import(study=study, filename="judges.jsonl", data=_judge_file(sample), actor=lead)
    judge_outputs_import(
        study=study,
        filename="tying.jsonl",
        data=_tying_judge_file(sample),
        allow_tie=True,
        actor=lead,
    )
    adjudicator, adjudications = _adjudications(study)
    job = Job.objects.create(
        kind=Job.Kind.ASSIGN, study_id=study.pk, requested_by=lead, state=Job.State.DONE
    )
    # The lead's webhook, with a delivery of an event before unblinding.
    webhook = Webhook.objects.create(
        study=study, url="https://example.org/hook", events=["study.closed"], secret="whsec_k"
    )
    delivery = WebhookDelivery.objects.create(
        webhook=webhook,
        event="study.closed",
        payload={"id": "keyswap", "event": "study.closed", "data": {}},
    )
    # A participant link with one crowd participant (issue 29): its pages, its payments.
    participant_link = participant_link_save(
        study=study,
        actor=lead,
        values={"name": "Prolific", "completion_code": "DONE1", "max_participants": "5",
                "bonus_rule": "per_case", "bonus_amount": "0.10"},
    )  # fmt: skip
    participant_join(
        link=participant_link, params={"PROLIFIC_PID": "KEYSWAPPID", "SESSION_ID": "S1"}
    )
    people = {"lead": lead, "admin": admin, "rater": raters[0], "adjudicator": adjudicator}
    secrets = {
        role: tokens.api_token_create(user=user, name="keyswap") for role, user in people.items()
    }
    study.refresh_from_db()
    link = study.invitations.get()
    first_rater = memberships[0]
    return World(
        study=study,
        people=people,
        secrets={role: secret for role, (_, secret) in secrets.items()},
        args={
            "slug": [study.slug],
            "assignment_uuid": list(
                first_rater.assignments.order_by("position").values_list("uuid", flat=True)
            ),
            "item_uuid": [item.uuid],
            "judge_uuid": list(study.judges.order_by("name").values_list("uuid", flat=True)),
            "upload_uuid": [upload.uuid],
            "job_uuid": [job.uuid],
            "case_uuid": list(study.test_cases.order_by("position").values_list("uuid", flat=True)),
            "key": list(study.rubric.dimensions.order_by("position").values_list("key", flat=True)),
            "token": [invitation_token],
            "token_hash": [link.token_hash],
            "token_uuid": [secrets["lead"][0].uuid],
            "uidb64": ["MQ"],
            "adjudication_uuid": [a.uuid for a in adjudications],
            "webhook_uuid": [webhook.uuid],
            "delivery_uuid": [delivery.uuid],
            "link_token": [participant_link.token],
            "link_uuid": [participant_link.uuid],
        },
        pseudonyms=[m.pseudonym for m in memberships],
        key={
            case.case_id: tuple(label.response.system.name for label in case.labels.all())
            for case in study.test_cases.prefetch_related("labels__response__system")
        },
        response_texts=sorted(
            {text for case in cases for text in case["responses"].values()}, key=len, reverse=True
        ),
    )

"""Every URL of the project, as every kind of person, with GET and POST.

The URLs come from the resolver, so a new view fails ``test_every_url_has_a_rule`` until
someone writes down who may use it in ``RULES``. Each request is then checked against its
rule: anonymous visitors are sent to sign in, people with no part in the study get 404
(as for a study that does not exist), members in the wrong role 403, and the allowed get
what the view answers (a page, a redirect, 405 for a method it does not take). A refused
request (any 4xx, or a redirect to sign in) must change nothing in the database.

Each request runs in a savepoint that is rolled back, so the requests do not change each
other's starting point (an allowed withdrawal, unblinding or closing stays undone).
"""

import hashlib
import json
import re
import uuid
from dataclasses import dataclass, field

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test import TestCase
from django.urls import reverse

from agreement.models import Judge
from annotation.export_jobs import export_job_start
from annotation.models import Assignment
from annotation.services import assignments_create_all
from annotation.services.participation import consent_record, withdrawal_record
from jobs.models import Job
from studies.access import COORDINATORS_GROUP
from studies.models import Membership, Study, Webhook, WebhookDelivery
from studies.services import case_upload_create, invitations, membership_add, rater_status_change
from studies.services.adjudication_rules import adjudication_rules_set
from studies.services.participants import participant_join, participant_link_save

from .annotation.support import make_item
from .factories import AdjudicationFactory, UserFactory, make_study
from .payloads import payload_for
from .urls_enumeration import (
    ADMIN_NAMESPACE,
    API_NAMESPACE,
    admin_url_model,
    in_chunk,
    project_urls,
)

ROLES = (
    "anonymous",
    "rater",  # an active rater of the study
    "other_rater",  # a rater of another study
    "withdrawn",  # a rater of the study who withdrew
    "paused",  # a rater of the study paused by an administrator
    "participant",  # a rater of the study who came through a participant link (issue 29)
    "lead",
    "coordinator",  # a coordinator member of the study
    "adjudicator",  # an adjudicator member of the study
    "outside_coordinator",  # may create studies, no part in this one
    "admin",  # staff superuser
)
STUDY_RATERS = ("rater", "withdrawn", "paused", "participant")
OUTSIDERS = ("other_rater", "outside_coordinator")

OK = frozenset({200, 302})
# A POST the view accepts may still be refused for what it says or the study's state (a
# form error, a stale version, a closed study): the access check passed, nothing is written.
POST_OK = frozenset({200, 302, 400, 409})


@dataclass(frozen=True)
class Rule:
    """Who may use a URL: ``who`` names a group below; ``methods`` the methods it takes."""

    who: str
    methods: tuple[str, ...] = ("GET", "POST")
    # Per method, the statuses of an allowed request when not the defaults (OK / POST_OK).
    allowed: dict = field(default_factory=dict)
    # Per role, a status that replaces the rule's answer (a documented exception).
    exceptions: dict = field(default_factory=dict)
    # What an anonymous visitor gets, when not a redirect to the sign-in page.
    anonymous: dict = field(default_factory=dict)
    # Roles whose requests must write nothing, whatever the status (e.g. a paused rater).
    read_only_for: tuple[str, ...] = ()


# Who may do what. Groups:
#   public       anyone, signed in or not
#   signed_in    anyone signed in
#   creator      people who may create studies (the Coordinators group, staff); others 403
#   rater        raters of the study (also paused and withdrawn: they see their status)
#   assignment   only the rater whose assignment it is; anyone else 404
#   coordinator  the lead, coordinator members and admins; raters of the study 403
#   lead         the study lead only; other members and admins 403
#   adjudicator  adjudicators of the study; its raters, coordinators and admins 403
#   invitee      only the account a personal invitation names; anyone else 404
#   participant  only a rater who came through a participant link; the study's other
#                raters and outsiders 404, its coordinators 403
#   admin_site   Django's admin: staff only; others are sent to the admin's sign-in
#   staff        the project's own administrators' pages: staff only; anyone else 403
POST_ONLY = ("POST",)
RULES = {
    "home": Rule("signed_in"),
    "login": Rule("public"),
    # The admin's sign-in, throttled: answers everyone (staff signed in are sent on).
    "admin_login": Rule("public"),
    # For load balancers and health checks: no sign-in, reads only.
    "healthz": Rule("public", methods=("GET",)),
    "healthz_live": Rule("public", methods=("GET",)),
    "healthz_ready": Rule("public", methods=("GET",)),
    "logout": Rule("public", methods=POST_ONLY, allowed={"POST": {"login"}}),
    # Django's own password views: changing needs a sign-in, resetting is for the signed out.
    "password_change": Rule("signed_in"),
    "password_change_done": Rule("signed_in", methods=("GET",)),
    "password_reset": Rule("public"),
    "password_reset_done": Rule("public", methods=("GET",)),
    "password_reset_confirm": Rule("public"),
    "password_reset_complete": Rule("public", methods=("GET",)),
    # Rating.
    "annotation:assignments": Rule("rater"),
    "annotation:next": Rule("rater"),
    # Paused and withdrawn raters see their cases but cannot change a rating.
    "annotation:rate": Rule("assignment", read_only_for=("withdrawn", "paused")),
    "annotation:draft": Rule(
        "assignment",
        read_only_for=("withdrawn", "paused"),
        methods=POST_ONLY,
        # The page keeps its answers and says how to sign in again (JSON, not a redirect).
        anonymous={"GET": 405, "POST": 401},
        # A draft for a rater who may not rate is refused with a message for the page.
        allowed={"POST": frozenset({200, 400, 403, 409})},
    ),
    # Skipping a case and undoing it: the rater's own; refused (nothing written) on hold.
    "annotation:skip": Rule("assignment", methods=POST_ONLY, read_only_for=("withdrawn", "paused")),
    "annotation:unskip": Rule(
        "assignment", methods=POST_ONLY, read_only_for=("withdrawn", "paused")
    ),
    "annotation:session_restored": Rule("signed_in"),
    "annotation:consent": Rule("rater"),
    "annotation:practice": Rule("rater"),
    "annotation:training": Rule("rater"),
    "annotation:training_item": Rule("rater"),
    "annotation:qualification": Rule("rater"),
    # A rater's own profile: only they see it (never coordinators, who get 403).
    "annotation:profile": Rule("rater"),
    "annotation:self_check": Rule("rater"),
    "annotation:feedback": Rule("rater"),
    "annotation:withdraw": Rule("rater"),
    # Coordinators: onboarding.
    "annotation:onboarding": Rule("coordinator"),
    # Coordinators: rater welfare (limits, warnings, pay and its check, retention).
    "annotation:welfare": Rule("coordinator"),
    "annotation:training_item_new": Rule("coordinator"),
    "annotation:training_item_edit": Rule("coordinator"),
    "annotation:training_item_key": Rule("coordinator"),
    "annotation:training_item_delete": Rule("coordinator", methods=POST_ONLY),
    # Coordinators: the comments digest (QC-006); each coordinator marks their own reads.
    "annotation:comments": Rule("coordinator", methods=("GET",)),
    "annotation:comments_read": Rule("coordinator", methods=POST_ONLY),
    # Coordinators: the calibration call (protocol 4.2). Coordinators read the items to
    # discuss; only the lead records a call and who attended.
    "annotation:calibration_call": Rule("coordinator", methods=("GET",)),
    "annotation:calibration_call_record": Rule("lead", methods=POST_ONLY),
    # Coordinators: the study, people, results.
    "annotation:overview": Rule("coordinator"),
    "annotation:rubric_preview": Rule("coordinator"),
    "annotation:raters": Rule("coordinator"),
    "annotation:rater_add": Rule("coordinator", methods=POST_ONLY),
    "annotation:assign": Rule("coordinator", methods=POST_ONLY),
    "annotation:assign_job": Rule("coordinator", methods=("GET",)),
    "annotation:assign_job_status": Rule("coordinator", methods=("GET",)),
    "annotation:invitation_create": Rule("coordinator", methods=POST_ONLY),
    "studies:invitation_revoke": Rule("coordinator", methods=POST_ONLY),
    # The link is the permission: anyone who has it may open it (joining takes a POST).
    "studies:invitation": Rule("public", allowed={"POST": frozenset({200, 302, 400})}),
    "studies:invitation_respond": Rule("invitee", methods=POST_ONLY),
    # Participant links (issue 29): the link is the permission to join (a GET writes
    # nothing; the POST without the vendor's ids is refused with a page); coordinators read
    # the links, the lead changes them; the payments file names people: administrators only.
    "studies:participant_join": Rule("public", allowed={"POST": frozenset({200, 302, 400})}),
    "studies:participant_links": Rule(
        "coordinator", exceptions={("coordinator", "POST"): 403, ("admin", "POST"): 403}
    ),
    "studies:participant_link": Rule(
        "coordinator", exceptions={("coordinator", "POST"): 403, ("admin", "POST"): 403}
    ),
    "studies:participant_link_close": Rule("lead", methods=POST_ONLY),
    "annotation:participant": Rule("participant", methods=("GET",)),
    "annotation:participant_decline": Rule("participant", methods=POST_ONLY),
    "annotation:participant_finish": Rule("participant", methods=POST_ONLY),
    "annotation:participant_payments": Rule("staff", methods=("GET",)),
    "annotation:results": Rule("coordinator"),
    "annotation:export": Rule("coordinator"),
    # A large export prepared as a job: Prepare, its progress, its file.
    "annotation:export_prepare": Rule("coordinator", methods=POST_ONLY),
    "annotation:export_job": Rule("coordinator", methods=("GET",)),
    "annotation:export_job_status": Rule("coordinator", methods=("GET",)),
    "annotation:export_job_download": Rule("coordinator", methods=("GET",)),
    "annotation:worksheet_import": Rule("coordinator", methods=POST_ONLY),
    "annotation:worksheet_job": Rule("coordinator", methods=("GET",)),
    "annotation:worksheet_job_status": Rule("coordinator", methods=("GET",)),
    # Ratings made elsewhere, imported by system: the study lead's alone.
    "annotation:ratings_import": Rule("lead"),
    "annotation:ratings_import_job": Rule("lead", methods=("GET",)),
    "annotation:ratings_import_status": Rule("lead", methods=("GET",)),
    # Adjudication: coordinators read the rules, the lead changes them (until opening);
    # the lead sends a case by hand and takes 7.3's switch.
    "studies:adjudication_rules": Rule(
        "coordinator", exceptions={("coordinator", "POST"): 403, ("admin", "POST"): 403}
    ),
    "agreement:adjudication_send": Rule("lead", methods=POST_ONLY),
    "agreement:adjudication_switch": Rule("lead", methods=POST_ONLY),
    "studies:unblind": Rule("lead"),
    # Study set-up.
    "studies:list": Rule("signed_in"),
    "studies:create": Rule("creator"),
    "studies:case_sample": Rule("signed_in"),  # sample files, no study data
    "studies:edit": Rule("coordinator"),
    "studies:status": Rule("coordinator"),
    # The protocol document holds the key: refused to everyone until unblinding.
    "studies:protocol": Rule("coordinator", allowed={"GET": {403}, "POST": {403}}),
    "studies:cases": Rule("coordinator"),
    "studies:case_import": Rule("coordinator"),
    "studies:case_import_status": Rule("coordinator"),
    "studies:cases_remove": Rule("coordinator", methods=POST_ONLY),
    "studies:rubric": Rule("coordinator"),
    # The rater profile's questions; no page shows a rater's answers.
    "studies:profile_questions": Rule("coordinator"),
    # Gold items and attention checks: never a rater's (their status would leak).
    "studies:quality": Rule("coordinator"),
    "studies:quality_item": Rule("coordinator"),
    "studies:rubric_preset": Rule("coordinator", methods=POST_ONLY),
    "studies:dimension_add": Rule("coordinator"),
    "studies:dimension_edit": Rule("coordinator"),
    "studies:dimension_delete": Rule("coordinator", methods=POST_ONLY),
    "studies:dimension_move": Rule("coordinator", methods=POST_ONLY),
    "studies:dimension_level": Rule("coordinator", methods=POST_ONLY),
    # Agreement and quality control.
    "agreement:study": Rule("coordinator"),
    "agreement:status": Rule("coordinator"),
    "agreement:report": Rule("coordinator"),
    "agreement:report_bundle": Rule("coordinator"),
    "agreement:sample_size": Rule("coordinator"),
    "agreement:stratum_shares": Rule("coordinator", methods=POST_ONLY),
    "agreement:primary_measure": Rule("coordinator", methods=POST_ONLY),
    "agreement:aggregation": Rule("coordinator", methods=POST_ONLY),
    "agreement:monitoring": Rule("lead", methods=POST_ONLY),
    "agreement:monitor_stop": Rule("lead", methods=POST_ONLY),
    # Coordinators read the flags; only administrators pause, retrain or exclude.
    # (An administrator's POST naming no rater of the study is a 404.)
    # The signed-in person's own API tokens (there is no id of anyone else's to ask for).
    "studies:tokens": Rule("signed_in"),
    "studies:token_revoke": Rule("signed_in", methods=POST_ONLY),
    "agreement:qc": Rule(
        "coordinator",
        exceptions={("lead", "POST"): 403, ("coordinator", "POST"): 403},
        allowed={"POST": frozenset({200, 302, 400, 404})},
    ),
    # LLM judges: prompts, outputs and calibration are coordinators' (no system names).
    "agreement:ranking": Rule("coordinator", methods=("GET",)),
    # The pages' Compute buttons: the GET shows the statistics, only the POST starts them.
    "agreement:ranking_compute": Rule("coordinator", methods=POST_ONLY),
    "agreement:judge_calibration_compute": Rule("coordinator", methods=POST_ONLY),
    "agreement:robustness_compute": Rule("coordinator", methods=POST_ONLY),
    "agreement:analysis_status": Rule("coordinator", methods=("GET",)),
    "agreement:judges": Rule("coordinator"),
    "agreement:judge_prompts": Rule("coordinator", methods=("GET",)),
    "agreement:judge_calibration": Rule("coordinator", methods=("GET",)),
    "agreement:judge_export": Rule("coordinator", methods=("GET",)),
    # Administrators erase an identity on request; no coordinator learns whose it was.
    "studies:erasure": Rule("staff"),
    # Webhooks: the study lead's alone (their URLs may hold a receiver's token).
    "studies:webhooks": Rule("lead"),
    "studies:webhook": Rule("lead", methods=("GET",)),
    "studies:webhook_remove": Rule("lead", methods=POST_ONLY),
    "studies:webhook_replay": Rule("lead", methods=POST_ONLY),
}

# The adjudication screen (the adjudicator's queue, the screen, its autosave) and the
# coordinators' list of decided cases, whose Make-gold button is the lead's.
RULES |= {
    "annotation:adjudication_queue": Rule("adjudicator", methods=("GET",)),
    "annotation:adjudicate": Rule("adjudicator"),
    "annotation:adjudication_draft": Rule(
        "adjudicator",
        methods=POST_ONLY,
        anonymous={"GET": 405, "POST": 401},
        allowed={"POST": frozenset({200, 400, 403, 409})},
    ),
    "annotation:adjudication_outcomes": Rule("coordinator", methods=("GET",)),
    "annotation:adjudication_make_gold": Rule("lead", methods=POST_ONLY),
}


# Django's admin (ADMIN_NAMESPACE) is one rule for all its URLs, below; the API's rules
# (API_NAMESPACE) are in test_api_access_matrix.py.
def test_every_url_has_a_rule():
    names = {name for name, _ in project_urls()}
    unnamed = [str(p.pattern) for name, p in project_urls() if not name]
    assert not unnamed, f"URLs without a name cannot be given a rule: {unnamed}"
    missing = sorted(
        n
        for n in names
        if n not in RULES and not n.startswith((f"{ADMIN_NAMESPACE}:", f"{API_NAMESPACE}:"))
    )
    assert not missing, f"URLs with no access rule in tests/test_access_matrix.py: {missing}"
    stale = sorted(set(RULES) - names)
    assert not stale, f"Rules for URLs that no longer exist: {stale}"


# The fixture -----------------------------------------------------------------------------


@pytest.fixture
def world(db):
    """One open study with every kind of person, and everything its URLs point at."""
    people = {
        "rater": UserFactory(username="m-rater"),
        "other_rater": UserFactory(username="m-other-rater"),
        "withdrawn": UserFactory(username="m-withdrawn"),
        "paused": UserFactory(username="m-paused"),
        "lead": UserFactory(username="m-lead"),
        "coordinator": UserFactory(username="m-coordinator"),
        "adjudicator": UserFactory(username="m-adjudicator"),
        "outside_coordinator": UserFactory(username="m-outside"),
        "admin": UserFactory(username="m-admin", is_staff=True, is_superuser=True),
    }
    group, _ = Group.objects.get_or_create(name=COORDINATORS_GROUP)
    for role in ("lead", "coordinator", "outside_coordinator"):
        people[role].groups.add(group)
    study = make_study(
        lead=people["lead"], slug="matrix", cases=3, status=Study.Status.DRAFT, consented=True,
        raters=[people["rater"], people["withdrawn"], people["paused"]],
    )  # fmt: skip
    upload = case_upload_create(
        study=study, actor=people["lead"], filename="more.csv", data=b"id,prompt\n"
    )
    adjudication_rules_set(
        study=study, actor=people["lead"], rules=[{"dimension": "depth", "trigger": "disagreement"}]
    )
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    make_study(lead=UserFactory(), slug="matrix-other", cases=2, raters=[people["other_rater"]],
               consented=True)  # fmt: skip
    membership_add(study=study, user=people["coordinator"], role=Membership.Role.COORDINATOR)
    membership_add(study=study, user=people["adjudicator"], role=Membership.Role.ADJUDICATOR)
    adjudication = AdjudicationFactory(test_case=study.test_cases.order_by("position").first())
    members = {m.user_id: m for m in study.memberships.all()}
    withdrawal_record(rater=members[people["withdrawn"].pk], data="keep")
    rater_status_change(
        membership=members[people["paused"].pk], action="pause", reason="QC", actor=people["admin"]
    )
    item = make_item(study, key=payload_for(1))
    judge = Judge.objects.create(study=study, name="matrix-judge")
    job = Job.objects.create(
        kind=Job.Kind.ASSIGN, study_id=study.pk, requested_by=people["lead"], state=Job.State.DONE
    )
    worksheet = Job.objects.create(
        kind=Job.Kind.WORKSHEET_IMPORT,
        study_id=study.pk,
        name="import",
        requested_by=people["lead"],
        state=Job.State.FAILED,
        error="Row 2, column Total: the total is off.",
    )
    ratings_import = Job.objects.create(
        kind=Job.Kind.WORKSHEET_IMPORT,
        study_id=study.pk,
        name="ratings-import",
        requested_by=people["lead"],
        state=Job.State.FAILED,
        error="Row 2, column System: TC-001 has no response by x.",
    )
    # A prepared export with its file (of another export than the "fmt" Prepare is asked
    # for, which would replace it).
    export = export_job_start(study=study, key="worksheet-csv", actor=people["lead"])
    analysis = Job.objects.create(
        kind=Job.Kind.ANALYSIS, study_id=study.pk, name="ranking@0", state=Job.State.DONE
    )
    _, token = invitations.invitation_create(study=study, created_by=people["lead"])
    link = study.invitations.get()
    invitations.rater_invite_account(
        study=study, username=people["other_rater"].username, actor=people["lead"]
    )
    personal = study.invitations.exclude(invitee=None).get()
    # A documentation address (not public): a replay's attempt is refused without a request.
    webhook = Webhook.objects.create(
        study=study, url="http://192.0.2.1/hook", events=["study.closed"], secret="whsec_m"
    )
    delivery = WebhookDelivery.objects.create(webhook=webhook, event="study.closed")
    participant_link = participant_link_save(
        study=study,
        actor=people["lead"],
        values={"name": "matrix", "completion_code": "DONE", "max_participants": "5"},
    )
    joined = participant_join(
        link=participant_link, params={"PROLIFIC_PID": "MATRIXPID", "SESSION_ID": "MATRIXSESSION"}
    )
    people["participant"] = joined.user
    assignments_create_all(study=study, rater=joined.participant.membership)
    consent_record(rater=joined.participant.membership, agreed=True, prior_knowledge=False)
    assert personal.invitee == people["other_rater"]
    return {
        "people": people,
        "study": study,
        "assignments": {
            role: Assignment.objects.filter(rater__user=people[role], test_case__study=study)
            .order_by("pk")
            .first()
            for role in STUDY_RATERS
        },
        "analysis_job": analysis,
        "export_job": export,
        "worksheet_job": worksheet,
        "ratings_import_job": ratings_import,
        "args": {
            "slug": study.slug,
            "item_uuid": item.uuid,
            "judge_uuid": judge.uuid,
            "upload_uuid": upload.uuid,
            "job_uuid": job.uuid,
            "case_uuid": study.test_cases.first().uuid,
            "key": study.rubric.dimensions.first().key,
            "kind": "checklist",
            "fmt": "long-csv",
            "name": "cases.csv",
            "action": "close",
            "token": token,
            "uidb64": "MQ",
            "token_uuid": uuid.uuid4(),
            "adjudication_uuid": adjudication.uuid,
            "webhook_uuid": webhook.uuid,
            "delivery_uuid": delivery.uuid,
            "link_token": participant_link.token,
            "link_uuid": participant_link.uuid,
        },
        "token_hashes": {
            "studies:invitation_revoke": link.token_hash,
            "studies:invitation_respond": personal.token_hash,
        },
    }


def _kwargs(world, name, pattern, role) -> dict:
    kwargs = {}
    for arg in pattern.pattern.regex.groupindex:
        if arg == "assignment_uuid":
            # The right rater's own assignment; everyone else asks for the active rater's.
            own = world["assignments"].get(role) or world["assignments"]["rater"]
            kwargs[arg] = own.uuid
        elif arg == "token_hash":
            kwargs[arg] = world["token_hashes"][name]
        elif arg == "job_uuid" and name == "agreement:analysis_status":
            kwargs[arg] = world["analysis_job"].uuid  # its status answers for analyses only
        elif arg == "job_uuid" and name.startswith("annotation:worksheet_job"):
            kwargs[arg] = world["worksheet_job"].uuid  # worksheet jobs' pages answer for them
        elif arg == "job_uuid" and name.startswith("annotation:export_job"):
            kwargs[arg] = world["export_job"].uuid
        elif arg == "job_uuid" and name.startswith("annotation:ratings_import"):
            kwargs[arg] = world["ratings_import_job"].uuid
        else:
            kwargs[arg] = world["args"][arg]
    return kwargs


# The rules, as statuses ------------------------------------------------------------------


def _group_answer(who: str, role: str) -> str | int:
    """ "ok", or the status a signed-in ``role`` gets from a URL of group ``who``."""
    if who in ("public", "signed_in"):
        return "ok"
    if who == "creator":
        return "ok" if role in ("lead", "coordinator", "outside_coordinator", "admin") else 403
    if who == "staff":
        return "ok" if role == "admin" else 403
    if who == "participant":
        if role == "participant":
            return "ok"
        return 404 if role in STUDY_RATERS or role in OUTSIDERS else 403
    if who in ("assignment", "invitee"):
        owner = role in STUDY_RATERS if who == "assignment" else role == "other_rater"
        return "ok" if owner else 404
    if role in OUTSIDERS:
        return 404
    allowed = {
        "rater": STUDY_RATERS,
        "coordinator": ("lead", "coordinator", "admin"),
        "lead": ("lead",),
        "adjudicator": ("adjudicator",),
    }[who]
    return "ok" if role in allowed else 403


def expected(rule: Rule, role: str, method: str) -> frozenset:
    if role == "anonymous" and rule.who != "public":
        return frozenset({rule.anonymous.get(method, "login")})
    if method not in rule.methods:
        return frozenset({405})
    if (role, method) in rule.exceptions:
        return frozenset({rule.exceptions[(role, method)]})
    answer = _group_answer(rule.who, role)
    if answer != "ok":
        return frozenset({answer})
    return frozenset(rule.allowed.get(method, OK if method == "GET" else POST_OK))


# Nothing written -------------------------------------------------------------------------

SNAPSHOT_APPS = ("studies", "annotation", "agreement", "auth")


# Fixed by migrations, and large: not written by any view.
STATIC_TABLES = {"auth_permission", "auth_group_permissions"}


def _tables() -> list[str]:
    tables = set()
    for label in SNAPSHOT_APPS:
        for model in apps.get_app_config(label).get_models(include_auto_created=True):
            tables.add(model._meta.db_table)
    return sorted(tables - STATIC_TABLES)


def snapshot(tables) -> str:
    """A hash of every row of the given tables (users without their last sign-in)."""
    parts = []
    for table in tables:
        row = "(to_jsonb(t) - 'last_login')::text" if table == "auth_user" else "t::text"
        # The table names come from the models, not from input.
        quoted = connection.ops.quote_name(table)
        parts.append(
            f"SELECT '{table}', md5(coalesce(string_agg({row}, '|' ORDER BY {row}), '')) "  # noqa: S608
            f"FROM {quoted} t"
        )
    if not parts:
        return ""
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts))
        # Sorted: UNION ALL may return its parts in any order (a parallel plan does, once
        # the tables' statistics call for one, e.g. after a large import).
        return hashlib.sha256(repr(sorted(cursor.fetchall())).encode()).hexdigest()


def _row_writes(tables) -> dict[str, tuple]:
    """The rows this transaction has inserted, updated and deleted so far, per table.

    PostgreSQL counts them per transaction, so reading them costs the same whatever the
    tables hold (dead rows left by an earlier test included).
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_xact_user_tables "
            "WHERE relname = ANY(%s)",
            [list(tables)],
        )
        return {name: tuple(counts) for name, *counts in cursor.fetchall()}


def rolled_back(tables, send, *args, **kwargs):
    """``send(*args, **kwargs)``'s answer, and whether it changed a row of ``tables``; nothing is kept.

    Only the tables the request wrote to are hashed: as it left them, then once its
    savepoint is rolled back, which is as they were before it. A write that leaves every
    row as it was (a savepoint of the view's own rolled back, a user's last sign-in) is
    not a change.
    """
    with transaction.atomic():
        writes = _row_writes(tables)
        savepoint = transaction.savepoint()
        response = send(*args, **kwargs)
        written = sorted(
            table for table, counts in _row_writes(tables).items() if counts != writes[table]
        )
        after = snapshot(written)
        transaction.savepoint_rollback(savepoint)
        changed = snapshot(written) != after
        transaction.set_rollback(True)
    return response, changed


@pytest.mark.django_db
def test_the_write_check_sees_writes_and_only_writes():
    """The matrix's own instrument: a changed row is seen, in whichever table; rewriting
    a row as it was, or a write the request undid itself, is not a change."""
    study = make_study(slug="instrument", cases=1)
    tables = _tables()
    rename = Study.objects.filter(pk=study.pk).update
    assert rolled_back(tables, rename, name="Another name")[1]
    assert not rolled_back(tables, rename, name=study.name)[1]

    def undone():
        with transaction.atomic():
            rename(name="Undone")
            transaction.set_rollback(True)

    assert not rolled_back(tables, undone)[1]
    assert rolled_back(tables, UserFactory)[1]
    study.refresh_from_db()
    assert study.name != "Another name"  # nothing was kept


def _status(response) -> int | str:
    if response.status_code == 302:
        location = response["Location"]
        if location.startswith(reverse("login")) or location.startswith(reverse("admin:login")):
            return "login"
    return response.status_code


def _post_data(world, name, role) -> dict:
    """A valid rating for the rating URLs (so that a refusal is the rule's, not the form's)."""
    assignment = world["assignments"].get(role) or world["assignments"]["rater"]
    if name == "annotation:rate":
        return {"payload": json.dumps(payload_for(2)), "version": assignment.version}
    if name == "annotation:draft":
        body = {"payload": payload_for(2), "version": assignment.version, "active_seconds": 5}
        return {"data": json.dumps(body), "content_type": "application/json"}
    if name.startswith(f"{ADMIN_NAMESPACE}:") and name.endswith("_delete"):
        return {"post": "yes"}  # the confirmation: without it the page only asks
    return {}


def _request(client, world, role, method, url, name="", *, after_commit=None):
    """The answer to one request, and whether it changed the database (rolled back).

    Each role signs in once; its session is rolled back with each request, so the next one
    starts signed in again whatever the last did (sign out included). Given a list as
    ``after_commit``, the work the request left for after its commit is run too, inside
    the savepoint (so its writes count), and each callback appended to the list.
    """
    sessions = world.setdefault("sessions", {})
    client.cookies.clear()
    if role != "anonymous":
        if role not in sessions:
            client.force_login(world["people"][role])
            sessions[role] = client.cookies[settings.SESSION_COOKIE_NAME].value
        client.cookies[settings.SESSION_COOKIE_NAME] = sessions[role]
    tables = world.setdefault("tables", _tables())

    def send():
        if method == "GET":
            return client.get(url)
        data = _post_data(world, name, role)
        if "content_type" in data:
            return client.post(url, **data)
        return client.post(url, data)

    if after_commit is None:
        return rolled_back(tables, send)
    return rolled_back(tables, run_after_commit, send, after_commit)


def run_after_commit(send, callbacks: list, *args, **kwargs):
    """``send(*args, **kwargs)``, then the ``transaction.on_commit`` work it scheduled (and
    what that scheduled), as a commit would run it, each callback recorded in ``callbacks``.

    The test's transaction never commits: without this, work a request leaves for after
    its commit would never run here, though in production it runs on every request.
    """
    with TestCase.captureOnCommitCallbacks(execute=True) as captured:
        response = send(*args, **kwargs)
    callbacks += captured
    return response


def _is_refusal(status) -> bool:
    return status == "login" or (isinstance(status, int) and status >= 400)


# Every URL as ten kinds of person, with GET and POST, each in a rolled-back savepoint, in
# MATRIX_CHUNKS tests (a quarter of the URLs each: about 40 s on a quiet machine, 90 s on a
# busy one, well inside their limit).
MATRIX_CHUNKS = 4


# Slow (every URL, every role): started first in a parallel run (tests/conftest.py).
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("chunk", range(MATRIX_CHUNKS))
def test_every_url_as_every_role(client, world, chunk):
    """The matrix: each cell's status matches the rule, and every refusal wrote nothing."""
    problems = []
    urls = [
        (name, pattern)
        for name, pattern in project_urls()
        if not name.startswith((f"{ADMIN_NAMESPACE}:", f"{API_NAMESPACE}:"))
    ]
    for name, pattern in in_chunk(urls, chunk, MATRIX_CHUNKS):
        rule = RULES[name]
        for role in ROLES:
            url = reverse(name, kwargs=_kwargs(world, name, pattern, role))
            for method in ("GET", "POST"):
                response, changed = _request(client, world, role, method, url, name)
                status = _status(response)
                want = expected(rule, role, method)
                if status not in want:
                    problems.append(f"{name} {method} as {role}: {status}, want {sorted(want)}")
                if changed and (_is_refusal(status) or role in rule.read_only_for):
                    problems.append(f"{name} {method} as {role}: refused ({status}) but wrote")
                if name == "annotation:rate" and method == "POST" and role == "rater":
                    assert status == 302 and changed, "the valid rating was not recorded"
    assert not problems, "\n".join(problems)


def _admin_kwargs(world, name, pattern) -> dict:
    """Path arguments for one of the admin's URLs: an object of the model it names."""
    kwargs = {}
    for arg in pattern.pattern.regex.groupindex:
        if arg == "app_label":
            kwargs[arg] = "studies"
        elif arg == "content_type_id":
            from django.contrib.contenttypes.models import ContentType

            kwargs[arg] = ContentType.objects.get_for_model(Study).pk
        elif arg == "id":
            kwargs[arg] = world["people"]["rater"].pk
        elif arg == "object_id":
            kwargs[arg] = _first_object_of(name, world)
    return kwargs


def _first_object_of(name: str, world) -> str:
    model = admin_url_model(name)
    if model is not None:
        first = model._default_manager.order_by("pk").first()
        return str(first.pk) if first else "0"
    return str(world["study"].pk)  # "view on site": any object


# The apps' models are written by their services only: the admin shows them, and its add,
# change and delete forms refuse even staff.
SERVICE_OWNED = re.compile(r"^admin:(studies|annotation|agreement)_\w+_(add|change|delete)$")


# Every admin URL as every role, in ADMIN_CHUNKS tests (the whole took 96 s on a busy machine).
ADMIN_CHUNKS = 2


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("chunk", range(ADMIN_CHUNKS))
def test_the_admin_site_is_for_staff_only(client, world, chunk):
    """Every admin URL: staff get in (but write no app's model through a form); anyone else
    is sent to the admin's sign-in, unchanged."""
    problems = []
    owned = set()
    admin_urls = [(n, p) for n, p in project_urls() if n.startswith(f"{ADMIN_NAMESPACE}:")]
    admin_urls = in_chunk(admin_urls, chunk, ADMIN_CHUNKS)
    for name, pattern in admin_urls:
        if name == f"{ADMIN_NAMESPACE}:":
            url = "/admin/no-such-page/"  # the admin's unnamed catch-all
        else:
            url = reverse(name, kwargs=_admin_kwargs(world, name, pattern))
        public = name in ("admin:login", "admin:logout")
        for role in ROLES:
            for method in ("GET", "POST"):
                response, changed = _request(client, world, role, method, url, name)
                status = _status(response)
                if role == "admin" and method == "POST" and SERVICE_OWNED.match(name):
                    owned.add(name)
                    if status != 403 or changed:
                        problems.append(
                            f"{name} POST as staff: {status}, wrote {changed}; the services "
                            "own this model, so the admin's form must refuse (403) and write "
                            "nothing"
                        )
                    continue
                if role == "admin" or public:
                    if not (isinstance(status, int) and status < 500) and status != "login":
                        problems.append(f"{name} {method} as {role}: {status}")
                    continue
                if status != "login":
                    problems.append(f"{name} {method} as {role}: {status}, want the admin sign-in")
                if changed:
                    problems.append(f"{name} {method} as {role}: refused but wrote")
    assert not problems, "\n".join(problems)
    from django.contrib import admin

    registered = {
        f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}"
        for model in admin.site._registry
        if model._meta.app_label in ("studies", "annotation", "agreement")
        for view in ("add", "change", "delete")
    }
    # Every admin of an app's model (in this chunk) was tried.
    assert owned == registered & {name for name, _ in admin_urls}

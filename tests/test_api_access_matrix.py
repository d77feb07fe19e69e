"""Every endpoint of the HTTP API, with the token of every kind of person.

The sibling of ``test_access_matrix.py`` (same study, same people, same "a refusal writes
nothing" check), for the API: its URLs come from the resolver, so a new endpoint fails
``test_every_api_url_has_a_rule`` until its rule is written down here. Without a token,
and with a revoked one, every endpoint but the schema answers 401; someone with no part
in the study gets 404, a member in the wrong role 403, always in the API's error shape.
"""

import json
from dataclasses import dataclass, field

import pytest
from django.urls import reverse
from django.utils import timezone

from studies.models import ApiToken, Membership, Study
from studies.services import membership_add, tokens

from .test_access_matrix import ROLES as PAGE_ROLES
from .test_access_matrix import _tables, rolled_back
from .test_access_matrix import world as world  # the shared fixture
from .urls_enumeration import api_urls, in_chunk

ROLES = (
    "anonymous",  # no token
    "revoked",  # the lead's token, revoked
    "rater",  # a rater of the study
    "other_rater",  # a rater of another study
    "outside_coordinator",  # coordinator of another study
    "lead",
    "coordinator",  # a coordinator member of the study
    "adjudicator",  # an adjudicator member of the study: no endpoint of the API is theirs
    "admin",
)
OUTSIDERS = ("other_rater", "outside_coordinator")
CREATORS = ("outside_coordinator", "lead", "coordinator", "admin")
OK = frozenset({200})
# An allowed write may still be refused for what it says or the study's state (an empty
# body, an open study that cannot be unblinded): the access check passed, nothing written.
WRITE_OK = frozenset({200, 201, 202, 204, 400})


@dataclass(frozen=True)
class Rule:
    """``who`` may use the endpoint with ``methods``; ``allowed`` per method when not OK."""

    who: str
    methods: tuple[str, ...] = ("GET",)
    allowed: dict = field(default_factory=dict)
    # Methods only the study lead may use (others of ``who`` 403).
    lead_methods: tuple[str, ...] = ()
    # Methods only administrators may use (others of ``who`` 403).
    staff_methods: tuple[str, ...] = ()


# Groups: public (no token needed), signed_in (any valid token), coordinator (the lead,
# coordinator members, admins; raters of the study 403; outsiders 404), lead (the study
# lead only), creator (GET for any token, POST for those who may create studies), staff
# (administrators only; others 403), rater (raters of the study, with their own token).
RULES = {
    "api:openapi": Rule("public"),
    "api:docs": Rule("public"),
    "api:not_found": Rule("public", methods=(), allowed={}),
    "api:rubric_presets": Rule("signed_in"),
    "api:my_assignments": Rule("signed_in"),
    "api:studies": Rule("creator", methods=("GET", "POST")),
    "api:study": Rule("coordinator", methods=("GET", "PATCH")),
    "api:rubric": Rule("coordinator", methods=("GET", "PUT")),
    "api:cases": Rule("coordinator", methods=("GET", "POST")),
    "api:status": Rule("coordinator", methods=("POST",)),
    "api:raters": Rule("coordinator", methods=("GET", "POST")),
    "api:invitations": Rule("coordinator", methods=("GET", "POST")),
    "api:invitation_revoke": Rule("coordinator", methods=("POST",)),
    "api:assign": Rule("coordinator", methods=("POST",)),
    "api:assign_job": Rule("coordinator"),
    "api:progress": Rule("coordinator"),
    "api:welfare": Rule("coordinator", methods=("GET", "PUT")),
    # The comments digest (QC-006): each coordinator's own read marks.
    "api:comments": Rule("coordinator"),
    "api:comments_read": Rule("coordinator", methods=("POST",)),
    "api:export": Rule("coordinator"),
    # A large export prepared as a job: its start, its progress, its file.
    "api:export_start": Rule("coordinator", methods=("POST",)),
    "api:export_job": Rule("coordinator"),
    "api:export_job_download": Rule("coordinator"),
    "api:agreement": Rule("coordinator"),
    "api:analysis_plan": Rule("coordinator", methods=("GET", "PATCH")),
    "api:unblind": Rule("lead", methods=("POST",)),
    # The results, as their pages show them: the ranking's POST starts its job.
    "api:ranking": Rule("coordinator", methods=("GET", "POST")),
    "api:report": Rule("coordinator"),
    "api:report_bundle": Rule("coordinator"),
    "api:ratings_import": Rule("lead", methods=("POST",)),
    "api:ratings_import_job": Rule("lead"),
    # Coordinators read the adjudication rules; the lead replaces them.
    "api:adjudication_rules": Rule("coordinator", methods=("GET", "PUT"), lead_methods=("PUT",)),
    # Coordinators read the monitored primary question; the lead chooses it and stops.
    "api:monitor": Rule("coordinator", methods=("GET", "PUT"), lead_methods=("PUT",)),
    "api:monitor_stop": Rule("lead", methods=("POST",)),
    # The rater profile's questions (never a rater's answers): coordinators, until opening.
    "api:profile_questions": Rule("coordinator", methods=("GET", "PUT")),
    # LLM judges, as on the judges page: coordinators'. POST on a calibration starts its job.
    "api:judges": Rule("coordinator", methods=("GET", "POST")),
    "api:judge_template": Rule("coordinator", methods=("GET", "PUT")),
    "api:judge_prompts": Rule("coordinator"),
    "api:judge_outputs": Rule("coordinator"),
    "api:judge_calibration": Rule("coordinator", methods=("GET", "POST")),
}
# Issue 26's people and plan side. Administrators make raters' accounts; anyone signed in
# may use an invitation link (someone already in the study, or an administrator, is
# refused: 400); a rater reads their own steps and consents; administrators decide about
# raters after the QC flags, which coordinators read.
RULES |= {
    "api:accounts": Rule("staff", methods=("POST",)),
    "api:invitation_accept": Rule("signed_in", methods=("POST",)),
    "api:onboarding": Rule("rater"),
    "api:consent": Rule("rater", methods=("POST",)),
    "api:sample_size": Rule("coordinator", methods=("GET", "POST")),
    "api:qc_flags": Rule("coordinator"),
    "api:qc_decisions": Rule(
        "coordinator",
        methods=("POST",),
        staff_methods=("POST",),
        allowed={"POST": WRITE_OK | {404}},
    ),
    # Webhooks: the study lead's alone (their URLs may hold a receiver's token).
    "api:webhooks": Rule("lead", methods=("GET", "POST")),
    "api:webhook": Rule("lead", methods=("GET", "DELETE")),
    "api:webhook_deliveries": Rule("lead"),
    "api:webhook_delivery_replay": Rule("lead", methods=("POST",)),
}
# Adjudicators: their queue and their decisions (409: a decision from an older version).
RULES |= {
    "api:adjudication_queue": Rule("adjudicator"),
    "api:adjudication_resolve": Rule(
        "adjudicator", methods=("POST",), allowed={"POST": WRITE_OK | {409}}
    ),
}
# Set-up actions of the pages: the protocol document (refused to everyone until the study
# is unblinded, as its page), removing every case, gold items and attention checks, and the
# raters' preparation (onboarding settings, training and qualification items).
RULES |= {
    "api:protocol": Rule("coordinator", allowed={"GET": frozenset({403})}),
    "api:cases_remove": Rule("coordinator", methods=("POST",)),
    "api:quality": Rule("coordinator", methods=("GET", "PATCH")),
    "api:quality_gold_file": Rule("coordinator", methods=("POST",)),
    "api:quality_attention_checks": Rule("coordinator", methods=("POST",)),
    "api:quality_item": Rule("coordinator", methods=("GET", "PUT", "DELETE")),
    "api:onboarding_settings": Rule("coordinator", methods=("GET", "PATCH")),
    "api:training_items": Rule("coordinator", methods=("GET", "POST")),
    "api:training_item": Rule("coordinator", methods=("GET", "PATCH", "DELETE")),
    "api:training_item_key": Rule("coordinator", methods=("PUT",)),
}

# Pages' actions as their pages allow them: the calibration call and the worksheet import
# (coordinators; the lead records a call), decided adjudications (the lead makes one a gold
# item), the lead's adjudication actions, and the robustness check (POST starts its job).
RULES |= {
    "api:calibration_call": Rule("coordinator"),
    "api:calibration_call_record": Rule("lead", methods=("POST",)),
    "api:worksheet_import": Rule("coordinator", methods=("POST",)),
    "api:worksheet_job": Rule("coordinator"),
    "api:adjudication_outcomes": Rule("coordinator"),
    "api:adjudication_make_gold": Rule("lead", methods=("POST",)),
    "api:adjudication_send": Rule("lead", methods=("POST",)),
    "api:adjudication_switch": Rule("lead", methods=("POST",)),
    "api:robustness": Rule("coordinator", methods=("GET", "POST")),
}
# Participant links (issue 29): coordinators read them, the lead changes them; the
# payments file names people by their vendor ids: administrators only.
RULES |= {
    "api:participant_links": Rule("coordinator", methods=("GET", "POST"), lead_methods=("POST",)),
    "api:participant_link": Rule("coordinator", methods=("GET", "PATCH"), lead_methods=("PATCH",)),
    "api:participant_link_close": Rule("lead", methods=("POST",)),
    "api:participant_payments": Rule("staff"),
}
METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE")


def test_every_api_url_has_a_rule():
    names = {name for name, _ in api_urls()}
    assert sorted(names - set(RULES)) == [], "API URLs with no rule in this file"
    assert sorted(set(RULES) - names) == [], "rules for API URLs that no longer exist"


def test_each_kind_of_person_is_tried_once():
    """A role listed twice would send every request of the matrix twice, proving nothing
    more; the page matrix's roles, with their own people, likewise."""
    assert len(set(ROLES)) == len(ROLES)
    assert len(set(PAGE_ROLES)) == len(PAGE_ROLES)


def expected(name: str, rule: Rule, role: str, method: str) -> frozenset:
    if name == "api:not_found":
        return frozenset({404})
    if rule.who == "public":
        return OK if method == "GET" else frozenset({405})
    if role in ("anonymous", "revoked"):
        return frozenset({401})
    if method not in rule.methods:
        return frozenset({405})
    allowed = rule.allowed.get(method, OK if method == "GET" else WRITE_OK)
    if rule.who == "signed_in":
        return allowed
    if rule.who == "creator":
        return allowed if method == "GET" or role in CREATORS else frozenset({403})
    if rule.who == "staff":
        return allowed if role == "admin" else frozenset({403})
    if role in OUTSIDERS:
        return frozenset({404})
    members = {
        "coordinator": ("lead", "coordinator", "admin"),
        "lead": ("lead",),
        "adjudicator": ("adjudicator",),
        "rater": ("rater",),
    }[rule.who]
    if method in rule.lead_methods:
        members = ("lead",)
    if method in rule.staff_methods:
        members = ("admin",)
    return allowed if role in members else frozenset({403})


@pytest.fixture
def api_world(world, settings):
    settings.API_THROTTLE_RATES = {
        "user": "100000/min",
        "anon": "100000/min",
        "schema": "100000/min",
    }
    people = world["people"]
    other = Study.objects.get(slug="matrix-other")
    membership_add(
        study=other, user=people["outside_coordinator"], role=Membership.Role.COORDINATOR
    )
    secrets = {}
    for role in ROLES:
        if role in ("anonymous", "revoked"):
            continue
        _, secrets[role] = tokens.api_token_create(user=people[role], name="matrix")
    revoked, secrets["revoked"] = tokens.api_token_create(user=people["lead"], name="old")
    tokens.api_token_revoke(user=people["lead"], token_uuid=revoked.uuid)
    # Marked as just used, so that a request does not write its "last used" time.
    ApiToken.objects.update(last_used_at=timezone.now())
    world["secrets"] = secrets
    return world


def _url(world, name, pattern) -> str:
    kwargs = {}
    for arg in pattern.pattern.regex.groupindex:
        if arg == "token_hash":
            kwargs[arg] = world["token_hashes"]["studies:invitation_revoke"]
        elif arg == "rest":
            kwargs[arg] = "no-such-endpoint/"
        elif arg == "job_uuid" and name == "api:ratings_import_job":
            kwargs[arg] = world["ratings_import_job"].uuid
        elif arg == "job_uuid" and name.startswith("api:export_job"):
            kwargs[arg] = world["export_job"].uuid
        elif arg == "job_uuid" and name == "api:worksheet_job":
            kwargs[arg] = world["worksheet_job"].uuid
        else:
            kwargs[arg] = world["args"][arg]
    return reverse(name, kwargs=kwargs)


def call(client, method, url, *, secret=None, body=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"} if secret else {}
    if method == "GET":
        return client.get(url, **headers)
    return client.generic(
        method, url, json.dumps(body if body is not None else {}), "application/json", **headers
    )


# In API_CHUNKS tests, each well inside its limit on a loaded machine.
API_CHUNKS = 2


# Slow (every URL, every role): started first in a parallel run (tests/conftest.py).
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("chunk", range(API_CHUNKS))
def test_every_api_url_with_every_token(client, api_world, chunk):
    world = api_world
    tables = _tables()
    problems = []
    for name, pattern in in_chunk(api_urls(), chunk, API_CHUNKS):
        rule = RULES[name]
        url = _url(world, name, pattern)
        for role in ROLES:
            for method in METHODS:
                response, changed = rolled_back(
                    tables, call, client, method, url, secret=world["secrets"].get(role)
                )
                want = expected(name, rule, role, method)
                if response.status_code not in want:
                    problems.append(
                        f"{name} {method} as {role}: {response.status_code}, want {sorted(want)}"
                    )
                if response.status_code >= 400:
                    if changed:
                        problems.append(f"{name} {method} as {role}: refused but wrote")
                    if name == "api:docs":
                        continue  # an HTML page for people; its 405 is a page too
                    body = json.loads(response.content)
                    if set(body) != {"error"} or body["error"]["status"] != response.status_code:
                        problems.append(f"{name} {method} as {role}: error shape {body}")
    assert not problems, "\n".join(problems)


def test_a_revoked_token_is_refused_from_the_next_request(client, api_world):
    people = api_world["people"]
    token, secret = tokens.api_token_create(user=people["lead"], name="pipeline")
    url = reverse("api:study", kwargs={"slug": "matrix"})
    assert call(client, "GET", url, secret=secret).status_code == 200
    tokens.api_token_revoke(user=people["lead"], token_uuid=token.uuid)
    response = call(client, "GET", url, secret=secret)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "The token is unknown or has been revoked."
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_token_of_an_inactive_account_is_refused(client, api_world):
    people = api_world["people"]
    people["lead"].is_active = False
    people["lead"].save(update_fields=["is_active"])
    url = reverse("api:study", kwargs={"slug": "matrix"})
    assert call(client, "GET", url, secret=api_world["secrets"]["lead"]).status_code == 401


def test_a_session_is_not_an_api_sign_in(client, api_world):
    """The API takes tokens only, so a page's session (and its CSRF) cannot drive it."""
    client.force_login(api_world["people"]["lead"])
    assert client.get(reverse("api:study", kwargs={"slug": "matrix"})).status_code == 401

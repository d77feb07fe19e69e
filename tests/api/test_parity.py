"""API parity: every page a coordinator, lead or administrator uses has its endpoints.

The pages come from the URL resolver; who uses each comes from its rule in
``tests/test_access_matrix.py`` (which fails on a page without one). Every page of the
coordinators' groups (its POST actions, its downloads and results, its reads) is either
mapped in ``PARITY`` to operations of the served OpenAPI schema, or listed in
``BROWSER_ONLY`` with the reason. A new page with neither fails here, and so does a
mapping to an operation the schema does not have, or an endpoint that lets in someone
the page refuses (or refuses someone the page lets in). Each check shows its power on a
planted page, a planted schema and a planted rule below.
"""

import re

import pytest
from django.test import override_settings
from django.urls import path

import config.urls
from tests import test_access_matrix as pages
from tests import test_api_access_matrix as api
from tests.urls_enumeration import ADMIN_NAMESPACE, API_NAMESPACE, api_urls, project_urls

# The access matrices' groups whose pages are coordinators', leads' or administrators'.
SCOPE = {"coordinator", "lead", "creator", "staff"}
# Django's admin is one entry for all its URLs (one per registered model and action).
ADMIN_SITE = f"{ADMIN_NAMESPACE}:*"


def ops(*pairs: str) -> tuple[tuple[str, str], ...]:
    """("GET api:study", ...) -> (("GET", "api:study"), ...)."""
    return tuple(tuple(pair.split(" ", 1)) for pair in pairs)  # type: ignore[misc]


RUBRIC = ops("GET api:rubric", "PUT api:rubric")

# Page -> the API operations that do what it does (METHOD, URL name of the endpoint).
PARITY = {
    # Study set-up.
    "studies:create": ops("POST api:studies"),
    "studies:edit": ops("GET api:study", "PATCH api:study"),
    "studies:status": ops("POST api:status"),
    "studies:cases": ops("GET api:cases", "POST api:cases"),
    # The page uploads, checks, then imports as a job; the API imports in the request.
    "studies:case_import": ops("POST api:cases"),
    "studies:case_import_status": ops("POST api:cases"),
    # The rubric builder edits one dimension at a time; the API replaces the definition.
    "studies:rubric": RUBRIC,
    "studies:rubric_preset": ops("PUT api:rubric"),
    "studies:dimension_add": RUBRIC,
    "studies:dimension_edit": RUBRIC,
    "studies:dimension_delete": RUBRIC,
    "studies:dimension_move": RUBRIC,
    "studies:dimension_level": RUBRIC,
    "studies:profile_questions": ops("GET api:profile_questions", "PUT api:profile_questions"),
    "studies:adjudication_rules": ops("GET api:adjudication_rules", "PUT api:adjudication_rules"),
    "studies:unblind": ops("POST api:unblind"),
    # People.
    "annotation:overview": ops("GET api:study", "GET api:progress"),
    "annotation:raters": ops("GET api:raters", "GET api:invitations"),
    "annotation:rater_add": ops("POST api:raters"),
    "annotation:invitation_create": ops("POST api:invitations"),
    "studies:invitation_revoke": ops("POST api:invitation_revoke"),
    "annotation:assign": ops("POST api:assign"),
    "annotation:assign_job": ops("GET api:assign_job"),
    "annotation:assign_job_status": ops("GET api:assign_job"),
    "annotation:welfare": ops("GET api:welfare", "PUT api:welfare"),
    "annotation:comments": ops("GET api:comments"),
    "annotation:comments_read": ops("POST api:comments_read"),
    # Results.
    "annotation:results": ops("GET api:progress", "GET api:export"),
    "annotation:export": ops("GET api:export"),
    "annotation:export_prepare": ops("POST api:export_start"),
    "annotation:export_job": ops("GET api:export_job"),
    "annotation:export_job_status": ops("GET api:export_job"),
    "annotation:export_job_download": ops("GET api:export_job_download"),
    "agreement:study": ops("GET api:agreement"),
    "agreement:status": ops("GET api:agreement"),
    "agreement:qc": ops("GET api:qc_flags", "POST api:qc_decisions"),
    "agreement:sample_size": ops("GET api:sample_size", "POST api:sample_size"),
    "agreement:primary_measure": ops("PATCH api:analysis_plan"),
    "agreement:stratum_shares": ops("PATCH api:analysis_plan"),
    "agreement:aggregation": ops("PATCH api:analysis_plan"),
    "agreement:monitoring": ops("PUT api:monitor"),
    "agreement:monitor_stop": ops("POST api:monitor_stop"),
    "agreement:ranking": ops("GET api:ranking"),
    "agreement:ranking_compute": ops("POST api:ranking"),
    "agreement:analysis_status": ops("GET api:ranking"),
    "agreement:report": ops("GET api:report"),
    "agreement:report_bundle": ops("GET api:report_bundle"),
    # Judges.
    "agreement:judges": ops(
        "GET api:judges", "POST api:judges", "GET api:judge_template", "PUT api:judge_template"
    ),
    "agreement:judge_prompts": ops("GET api:judge_prompts"),
    "agreement:judge_export": ops("GET api:judge_outputs"),
    "agreement:judge_calibration": ops("GET api:judge_calibration"),
    "agreement:judge_calibration_compute": ops("POST api:judge_calibration"),
    # Ratings made elsewhere, by system (the lead's).
    "annotation:ratings_import": ops("POST api:ratings_import"),
    "annotation:ratings_import_job": ops("GET api:ratings_import_job"),
    "annotation:ratings_import_status": ops("GET api:ratings_import_job"),
    # The lead's webhooks.
    "studies:webhooks": ops("GET api:webhooks", "POST api:webhooks"),
    "studies:webhook": ops("GET api:webhook", "GET api:webhook_deliveries"),
    "studies:webhook_remove": ops("DELETE api:webhook"),
    "studies:webhook_replay": ops("POST api:webhook_delivery_replay"),
    # The protocol document, removing every case, gold items and attention checks.
    "studies:protocol": ops("GET api:protocol"),
    "studies:cases_remove": ops("POST api:cases_remove"),
    "studies:quality": ops(
        "GET api:quality",
        "PATCH api:quality",
        "POST api:quality_gold_file",
        "POST api:quality_attention_checks",
    ),
    "studies:quality_item": ops(
        "GET api:quality_item", "PUT api:quality_item", "DELETE api:quality_item"
    ),
    # The raters' preparation: onboarding settings, training and qualification items.
    "annotation:onboarding": ops(
        "GET api:onboarding_settings", "PATCH api:onboarding_settings", "GET api:training_items"
    ),
    "annotation:training_item_new": ops("POST api:training_items"),
    "annotation:training_item_edit": ops("GET api:training_item", "PATCH api:training_item"),
    "annotation:training_item_key": ops("GET api:training_item", "PUT api:training_item_key"),
    "annotation:training_item_delete": ops("DELETE api:training_item"),
    # The calibration call; the offline worksheet (by key label); decided adjudications and
    # the lead's adjudication actions; the report's robustness check.
    "annotation:calibration_call": ops("GET api:calibration_call"),
    "annotation:calibration_call_record": ops("POST api:calibration_call_record"),
    "annotation:worksheet_import": ops("POST api:worksheet_import"),
    "annotation:worksheet_job": ops("GET api:worksheet_job"),
    "annotation:worksheet_job_status": ops("GET api:worksheet_job"),
    "annotation:adjudication_outcomes": ops("GET api:adjudication_outcomes"),
    "annotation:adjudication_make_gold": ops("POST api:adjudication_make_gold"),
    "agreement:adjudication_send": ops("POST api:adjudication_send"),
    "agreement:adjudication_switch": ops("POST api:adjudication_switch"),
    "agreement:robustness_compute": ops("POST api:robustness"),
}

# Pages with no endpoint, and why. "On purpose" are decisions; "not yet" are gaps that
# docs/api.md lists, each open to an endpoint later.
# Participant links (issue 29): the lead's pages and the administrators' payments file.
PARITY |= {
    "studies:participant_links": ops("GET api:participant_links", "POST api:participant_links"),
    "studies:participant_link": ops("GET api:participant_link", "PATCH api:participant_link"),
    "studies:participant_link_close": ops("POST api:participant_link_close"),
    "annotation:participant_payments": ops("GET api:participant_payments"),
}

BROWSER_ONLY = {
    ADMIN_SITE: "On purpose: Django's admin is the operators' console, read-only where the "
    "services own a model; what a pipeline needs from it has endpoints (accounts/, "
    "qc/decisions/).",
    "studies:erasure": "On purpose: erasing a person's identity is irreversible and done by "
    "an administrator by hand (this page or manage.py erase_identity), never by a script.",
    "annotation:rubric_preview": "On purpose: it shows how the rating screen looks; the "
    "rubric itself is GET studies/{slug}/rubric/.",
}


# The checks, as functions of what they read, so that the planted cases run them too.


def schema_path(pattern) -> str:
    """An API URL pattern's path in the OpenAPI schema: /api/v1/studies/{slug}/..."""
    return "/api/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))


def page_scope(urls, page_rules) -> set[str]:
    """The pages of coordinators, leads and administrators: their rule's group is one of
    SCOPE; a page with no rule yet counts (the access matrix fails on it as well)."""
    names = set()
    for name, _ in urls:
        if not name or name.startswith(f"{API_NAMESPACE}:"):
            continue
        if name.startswith(f"{ADMIN_NAMESPACE}:"):
            names.add(ADMIN_SITE)
        elif name not in page_rules or page_rules[name].who in SCOPE:
            names.add(name)
    return names


def page_roles(rule, methods) -> set[str]:
    """The roles (of the API matrix's people) a page lets use ``methods``."""
    refused = {"login", 403, 404, 405}
    return {
        role
        for role in api.ROLES
        if role not in ("anonymous", "revoked")
        for method in methods
        if not set(pages.expected(rule, role, method)) <= refused
    }


def api_roles(name, rule, method) -> set[str]:
    refused = {401, 403, 404, 405}
    return {
        role
        for role in api.ROLES
        if role not in ("anonymous", "revoked")
        and not set(api.expected(name, rule, role, method)) <= refused
    }


def parity_problems(*, urls, page_rules, api_rules, schema) -> list[str]:
    problems = []
    scope = page_scope(urls, page_rules)
    listed = [PARITY, BROWSER_ONLY]
    for name in sorted(scope):
        homes = sum(name in table for table in listed)
        if homes == 0:
            problems.append(f"{name}: a page action with no endpoint and no browser-only reason")
        elif homes > 1:
            problems.append(f"{name}: listed more than once")
    for table in listed:
        problems += [f"{name}: listed, but no such page" for name in sorted(set(table) - scope)]
    problems += [
        f"{name}: give the reason it stays in the browser"
        for name, reason in BROWSER_ONLY.items()
        if len(reason.strip()) < 20
    ]
    endpoints = {name: pattern for name, pattern in api_urls_of(urls)}
    for page, operations in sorted(PARITY.items()):
        if page not in scope:
            continue
        for method, endpoint in operations:
            if endpoint not in endpoints:
                problems.append(f"{page}: {method} {endpoint} is no endpoint")
                continue
            where = schema["paths"].get(schema_path(endpoints[endpoint]), {})
            if method.lower() not in where:
                problems.append(f"{page}: {method} {endpoint} is not in the schema")
                continue
            problems += _same_people(page, page_rules.get(page), endpoint, method, api_rules)
    return problems


def _same_people(page, page_rule, endpoint, method, api_rules) -> list[str]:
    """The endpoint lets in the same people as the page: for a read, those who may open
    the page; for a write, those who may send it a POST."""
    rule = api_rules.get(endpoint)
    if page_rule is None or rule is None:
        return []  # the access matrices fail on a page or endpoint with no rule
    if method == "GET":
        # A read answers what the page shows; pages that only take POST show it too.
        shown = page_roles(page_rule, page_rule.methods)
    else:
        shown = page_roles(page_rule, ["POST"])
    allowed = api_roles(endpoint, rule, method)
    problems = []
    if allowed - shown:
        problems.append(
            f"{page}: {method} {endpoint} lets in {sorted(allowed - shown)}, whom the page refuses"
        )
    if shown - allowed:
        problems.append(
            f"{page}: {method} {endpoint} refuses {sorted(shown - allowed)}, whom the page lets in"
        )
    return problems


def api_urls_of(urls):
    return [(n, p) for n, p in urls if n and n.startswith(f"{API_NAMESPACE}:")]


@pytest.fixture
def schema(client):
    return client.get("/api/v1/openapi.json").json()


def _problems(schema, **changes) -> list[str]:
    arguments = {
        "urls": project_urls(),
        "page_rules": pages.RULES,
        "api_rules": api.RULES,
        "schema": schema,
    }
    return parity_problems(**{**arguments, **changes})


def test_every_page_action_has_an_endpoint_or_a_reason(schema):
    assert _problems(schema) == []


def test_the_lists_cover_what_the_issue_names():
    # Issue 26's list, by the pages that do it: accounts and invitations, the analysis
    # plan, the sample size, QC; judges, ranking and report through the contract.
    for page in (
        "annotation:invitation_create",
        "agreement:primary_measure",
        "agreement:stratum_shares",
        "agreement:sample_size",
        "agreement:qc",
    ):
        assert page in PARITY
    for page in ("agreement:ranking", "agreement:report", "agreement:report_bundle"):
        assert page in PARITY
    for page in ("agreement:judges", "agreement:judge_calibration", "studies:webhooks"):
        assert page in PARITY
    assert api_urls() and any(name == "api:accounts" for name, _ in api_urls())


# Power -----------------------------------------------------------------------------------


def planted_view(request, slug):
    """A coordinators' download with no endpoint: what the parity check must catch."""


urlpatterns = [
    *config.urls.urlpatterns,
    path("s/<slug:slug>/planted.csv", planted_view, name="planted_download"),
]


def test_a_planted_page_action_with_no_endpoint_fails(schema):
    rules = {**pages.RULES, "planted_download": pages.Rule("coordinator", methods=("GET",))}
    with override_settings(ROOT_URLCONF=__name__):
        problems = _problems(schema, urls=project_urls(), page_rules=rules)
    assert problems == [
        "planted_download: a page action with no endpoint and no browser-only reason"
    ]


def test_a_planted_page_with_no_access_rule_counts_as_a_coordinators(schema):
    with override_settings(ROOT_URLCONF=__name__):
        problems = _problems(schema, urls=project_urls())
    assert "planted_download: a page action with no endpoint and no browser-only reason" in (
        problems
    )


def test_a_mapping_to_an_operation_the_schema_lacks_fails(schema):
    planted = {**schema, "paths": dict(schema["paths"])}
    del planted["paths"]["/api/v1/studies/{slug}/sample-size/"]
    problems = _problems(planted)
    assert "agreement:sample_size: GET api:sample_size is not in the schema" in problems
    assert "agreement:sample_size: POST api:sample_size is not in the schema" in problems


def test_an_endpoint_looser_or_stricter_than_its_page_fails(schema):
    # The QC decisions opened to every coordinator, and the plan closed to all but the lead.
    rules = {
        **api.RULES,
        "api:qc_decisions": api.Rule("coordinator", methods=("POST",)),
        "api:analysis_plan": api.Rule(
            "coordinator", methods=("GET", "PATCH"), lead_methods=("PATCH",)
        ),
    }
    problems = _problems(schema, api_rules=rules)
    assert (
        "agreement:qc: POST api:qc_decisions lets in ['coordinator', 'lead'], whom the page "
        "refuses" in problems
    )
    assert (
        "agreement:primary_measure: PATCH api:analysis_plan refuses ['admin', 'coordinator'], "
        "whom the page lets in" in problems
    )

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

import ast
import inspect
import re
import sys
import textwrap
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.test import override_settings
from django.urls import Resolver404, path, resolve, reverse

import config.urls
from tests import test_access_matrix as pages
from tests import test_api_access_matrix as api
from tests.test_access_matrix import world as world  # the shared fixture
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

# Pages whose POST does one of several things, by action (see ACTION_FIELDS below).
PARITY |= {
    "agreement:judges action=import": ops("POST api:judges"),
    "agreement:judges action=template": ops("PUT api:judge_template"),
    "agreement:qc action=dismiss": ops("POST api:qc_decisions"),
    # Add as a rater or as an adjudicator: the endpoint's "role".
    "annotation:rater_add role=rater": ops("POST api:raters"),
    "annotation:rater_add role=adjudicator": ops("POST api:raters"),
    # Check only, or import: the endpoint's "check".
    "annotation:ratings_import action=check": ops("POST api:ratings_import"),
    "annotation:ratings_import action=import": ops("POST api:ratings_import"),
    "annotation:worksheet_import action=check": ops("POST api:worksheet_import"),
    "annotation:worksheet_import action=import": ops("POST api:worksheet_import"),
    "studies:quality form=settings": ops("PATCH api:quality"),
    "studies:quality form=gold_file": ops("POST api:quality_gold_file"),
    "studies:quality form=attention": ops("POST api:quality_attention_checks"),
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
        # An action ("page field=value") is checked against the pages' actions, below.
        pages_listed = {name for name in table if " " not in name}
        problems += [f"{name}: listed, but no such page" for name in sorted(pages_listed - scope)]
    problems += [
        f"{name}: give the reason it stays in the browser"
        for name, reason in BROWSER_ONLY.items()
        if len(reason.strip()) < 20
    ]
    endpoints = {name: pattern for name, pattern in api_urls_of(urls)}
    for listed_as, operations in sorted(PARITY.items()):
        page = listed_as.split(" ", 1)[0]  # an action's page
        if page not in scope:
            continue
        for method, endpoint in operations:
            if endpoint not in endpoints:
                problems.append(f"{listed_as}: {method} {endpoint} is no endpoint")
                continue
            where = schema["paths"].get(schema_path(endpoints[endpoint]), {})
            if method.lower() not in where:
                problems.append(f"{listed_as}: {method} {endpoint} is not in the schema")
                continue
            problems += _same_people(listed_as, page_rules.get(page), endpoint, method, api_rules)
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


# Per form action ---------------------------------------------------------------------------
#
# A page may do more than one thing with its POST: several forms, or one form with several
# buttons. Here they tell their actions apart by a named submit button (name and value) or
# by a field named in ACTION_FIELDS; each action, "page name=value", needs its own line in
# PARITY (or BROWSER_ONLY). The actions are read from both sides: the forms of every page
# in scope as its lead (or an administrator) sees it, and the view's code, whose
# comparisons of such a field with a text are its branches (a form the page shows only in
# another state of the study is found there).

ACTION_FIELDS = ("action", "form")


def _post_field(node) -> str | None:
    """The field name of ``request.POST.get("name", ...)`` or ``request.POST["name"]``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "get" and node.args:
            source, key = node.func.value, node.args[0]
        else:
            return None
    elif isinstance(node, ast.Subscript):
        source, key = node.value, node.slice
    else:
        return None
    is_post = isinstance(source, ast.Attribute) and source.attr == "POST"
    if is_post and isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return None


def _texts(node) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [text for element in node.elts for text in _texts(element)]
    return []


def _functions(view) -> list:
    """The view's function and the functions of its module it calls by name."""
    view = inspect.unwrap(getattr(view, "view_class", view))
    if not inspect.isfunction(view):
        return []
    module = sys.modules[view.__module__]
    tree = ast.parse(textwrap.dedent(inspect.getsource(view)))
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    helpers = [
        getattr(module, name)
        for name in sorted(called)
        if inspect.isfunction(getattr(module, name, None))
        and getattr(module, name).__module__ == module.__name__
    ]
    return [tree, *(ast.parse(textwrap.dedent(inspect.getsource(f))) for f in helpers)]


def view_actions(view) -> set[tuple[str, str]]:
    """(field, value) of each comparison in the view's code of an action field with a text."""
    actions = set()
    for tree in _functions(view):
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _post_field(node.value) in ACTION_FIELDS:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        aliases[target.id] = _post_field(node.value)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            left = node.left
            field = _post_field(left)
            if isinstance(left, ast.Name):
                field = aliases.get(left.id)
            if field in ACTION_FIELDS:
                actions |= {(field, t) for c in node.comparators for t in _texts(c)}
    return actions


class _Forms(HTMLParser):
    """The POST forms of a page: their action and their (field, value) choices."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self.current: dict | None = None
        self.select: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and (attrs.get("method") or "get").lower() == "post":
            self.current = {"action": attrs.get("action") or "", "choices": set()}
            self.forms.append(self.current)
        if self.current is None:
            return
        name, value = attrs.get("name"), attrs.get("value") or ""
        kind = (attrs.get("type") or ("submit" if tag == "button" else "text")).lower()
        if (
            tag in ("button", "input")
            and name
            and kind == "submit"
            or tag == "input"
            and name in ACTION_FIELDS
        ):
            self.current["choices"].add((name, value))
        elif tag == "select":
            self.select = name
        elif tag == "option" and self.select in ACTION_FIELDS and attrs.get("value"):
            self.current["choices"].add((self.select, attrs["value"]))

    def handle_endtag(self, tag):
        if tag == "form":
            self.current = None
        elif tag == "select":
            self.select = None


def form_actions(page_url: str, html: str) -> set[tuple[str, str, str]]:
    """(URL name the form posts to, field, value) of each action of a page's forms."""
    parser = _Forms()
    parser.feed(html)
    actions = set()
    for form in parser.forms:
        target = urlsplit(form["action"] or page_url).path
        try:
            match = resolve(target)
        except Resolver404:
            continue
        for field, value in form["choices"]:
            actions.add((match.view_name, field, value))
    return actions


def action_name(page: str, field: str, value: str) -> str:
    return f"{page} {field}={value}"


def page_actions(urls, page_rules, rendered: dict[str, str]) -> set[str]:
    """Every action of the pages in scope: from their views' code and from the forms of the
    pages rendered (``rendered``: URL -> HTML)."""
    scope = page_scope(urls, page_rules)
    actions = {
        action_name(name, field, value)
        for name, pattern in urls
        if name in scope
        for field, value in view_actions(pattern.callback)
    }
    for url, html in rendered.items():
        actions |= {action_name(*a) for a in form_actions(url, html) if a[0] in scope}
    return actions


def action_problems(actions: set[str]) -> list[str]:
    listed = set(PARITY) | set(BROWSER_ONLY)
    return [
        f"{action}: a form action with no endpoint and no browser-only reason"
        for action in sorted(actions - listed)
    ]


def rendered_pages(client, world, urls, page_rules) -> dict[str, str]:
    """Every page in scope as its lead sees it (an administrator, for the staff's pages)."""
    scope = page_scope(urls, page_rules)
    out = {}
    for name, pattern in urls:
        rule = page_rules.get(name)
        if name not in scope or rule is None or "GET" not in rule.methods:
            continue
        role = "admin" if rule.who == "staff" else "lead"
        url = reverse(name, kwargs=pages._kwargs(world, name, pattern, role))
        client.force_login(world["people"][role])
        response = client.get(url)
        if response.status_code == 200 and "html" in response.get("Content-Type", ""):
            out[url] = response.content.decode()
    return out


def test_every_form_action_has_an_endpoint_or_a_reason(client, world, schema):
    urls = project_urls()
    rendered = rendered_pages(client, world, urls, pages.RULES)
    actions = page_actions(urls, pages.RULES, rendered)
    # Both sides were read: a form's button on a page, a branch in a view's code.
    assert "annotation:worksheet_import action=check" in actions
    assert "studies:quality form=gold_file" in actions
    problems = action_problems(actions)
    listed = [a for a in PARITY if " " in a]
    problems += [f"{a}: listed, but no such action" for a in sorted(set(listed) - actions)]
    problems += _problems(schema)
    assert problems == [], "\n".join(problems)


def test_a_new_form_action_on_a_page_with_an_endpoint_is_caught(client, world):
    """Planted: an Archive button on the study's settings page (which has its endpoints), and an
    "archive" branch in a view; each is an action of its own with no endpoint."""
    urls = project_urls()
    edit = reverse("studies:edit", kwargs={"slug": world["study"].slug})
    planted_form = (
        '<form method="post"><button name="action" value="archive">Archive</button></form>'
    )
    actions = page_actions(urls, pages.RULES, {edit: planted_form})
    assert "studies:edit" in PARITY  # the page has its endpoints
    assert action_problems(actions) == [
        "studies:edit action=archive: a form action with no endpoint and no browser-only reason"
    ]

    def planted_view(request, slug):
        if request.POST.get("action") == "archive":
            return None
        return None

    assert view_actions(planted_view) == {("action", "archive")}

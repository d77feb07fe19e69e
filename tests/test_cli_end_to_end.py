"""A whole study driven through the management commands alone: create_study,
export_rubric/set_rubric, import_cases, add_rater, assign_cases, study_status, (ratings in
the browser's service), show_agreement, export_results, unblind."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from studies.models import Membership, Study, StudyEvent
from tests.factories import UserFactory, make_cases
from tests.payloads import SYSTEMS, payload_for, submit
from tests.processes import manage

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_study_from_creation_to_unblinding_through_the_commands(tmp_path):
    lead = UserFactory(username="cli-lead")
    raters = [UserFactory(username=f"cli-rater-{n}") for n in range(3)]
    run("create_study", "cli", "--name", "CLI study", "--lead", lead.username)

    rubric = tmp_path / "rubric.yaml"
    run("export_rubric", "--preset", "reference", "--format", "yaml", "-o", str(rubric))
    text = rubric.read_text().replace("Strategic reasoning (5 dimensions, 20 points)", "CLI", 1)
    rubric.write_text(text)
    assert "now has the rubric 'CLI' (5 dimensions, 20 points)" in run(
        "set_rubric", "cli", str(rubric)
    )
    exported = json.loads(run("export_rubric", "cli"))
    assert exported["name"] == "CLI" and len(exported["dimensions"]) == 5

    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(c) for c in make_cases(5, systems=SYSTEMS)))
    run("import_cases", "cli", str(cases))
    for rater in raters:
        run("add_rater", "cli", rater.username)
    with pytest.raises(CommandError, match="already takes part in this study"):
        run("add_rater", "cli", raters[0].username)
    assert "R-03: 5 new cases" in run("assign_cases", "cli")
    assert "Protocol fingerprint" in run("study_status", "cli", "open")

    study = Study.objects.get(slug="cli")
    assert study.events.filter(kind=StudyEvent.Kind.RATER_ADDED).count() == 3
    for rater in study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym"):
        for n, assignment in enumerate(rater.assignments.order_by("position")):
            submit(assignment, payload_for(n + int(rater.pseudonym[2:])), active_seconds=20)
    run("study_status", "cli", "closed")

    shown = run("show_agreement", "cli")
    assert "(current)" in shown and "Depth of Analysis: alpha" in shown
    assert "Success criterion (alpha >= 0.7 on at least 3 dimensions)" in shown
    document = json.loads(run("show_agreement", "cli", "--json"))
    assert document["stale"] is False and len(document["result"]["dimensions"]) == 5

    with pytest.raises(CommandError, match="Only the study lead can unblind"):
        run("unblind", "cli", "--lead", raters[0].username)
    run("unblind", "cli", "--lead", lead.username, "--reason", "analysis")
    key = tmp_path / "key.csv"
    run("export_results", "cli", "--format", "key-csv", "-o", str(key))
    assert set(SYSTEMS) <= set(key.read_text().replace("\r", "").replace("\n", ",").split(","))
    study.refresh_from_db()
    assert study.status == Study.Status.UNBLINDED
    assert study.events.get(kind=StudyEvent.Kind.UNBLINDED).actor == lead


def test_set_rubric_lists_every_problem_and_changes_nothing(tmp_path):
    lead = UserFactory()
    run("create_study", "bad-rubric", "--name", "X", "--lead", lead.username)
    before = json.loads(run("export_rubric", "bad-rubric"))
    bad = tmp_path / "rubric.json"
    bad.write_text(json.dumps({"name": "", "dimensions": [{"key": "x", "kind": "nope"}]}))
    with pytest.raises(CommandError) as raised:
        run("set_rubric", "bad-rubric", str(bad))
    message = str(raised.value)
    assert "The rubric: name must be a non-empty text." in message
    assert "Dimension 1 (x): kind must be one of" in message
    assert message.endswith("The rubric definition has 3 problems; nothing was changed.")
    assert json.loads(run("export_rubric", "bad-rubric")) == before
    (tmp_path / "rubric.txt").write_text("{}")
    with pytest.raises(CommandError, match="Use a .json, .yaml or .yml file."):
        run("set_rubric", "bad-rubric", str(tmp_path / "rubric.txt"))


def test_study_status_refuses_with_the_lifecycle_message():
    lead = UserFactory()
    run("create_study", "empty", "--name", "X", "--lead", lead.username)
    with pytest.raises(CommandError, match="Import the test cases first."):
        run("study_status", "empty", "open")
    with pytest.raises(CommandError, match="A study that is draft cannot be closed."):
        run("study_status", "empty", "closed")


@pytest.mark.slow
def test_failures_exit_non_zero_with_the_message_on_stderr():
    """As a shell script sees them: the exit status and the message, no traceback."""
    result = manage("show_agreement", "no-such-study")
    assert result.returncode == 1
    assert result.stderr.strip() == "CommandError: There is no study 'no-such-study'."
    result = manage("study_status", "no-such-study", "finished")
    assert result.returncode == 2 and "invalid choice: 'finished'" in result.stderr
    help_text = manage("set_rubric", "--help")
    assert help_text.returncode == 0 and "docs/rubric-format.md" in help_text.stdout

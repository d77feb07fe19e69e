"""create_study and import_cases: exit codes, messages, and nothing written on error."""

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from studies.importing import cases as importing
from studies.models import BlindedLabel, Response, Study, StudyEvent, System
from studies.models import TestCase as Case

from ..factories import make_study

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "studies" / "samples"
HEADER = "id,prompt,context,stratum,response:baseline,response:improved"


def db_counts() -> dict:
    models = (Study, Case, Response, BlindedLabel, System, StudyEvent)
    return {model.__name__: model.objects.count() for model in models}


def test_create_study_makes_a_draft(lead, capsys):
    call_command("create_study", "cli-study", "--name", "From the CLI", "--lead", lead.username,
                 "--rubric", "pairwise", "--seed", "7")  # fmt: skip
    study = Study.objects.get(slug="cli-study")
    assert (study.name, study.lead, study.blinding_seed) == ("From the CLI", lead, 7)
    assert (study.status, study.rubric.preset) == (Study.Status.DRAFT, "pairwise")
    assert "Created the draft study 'cli-study'" in capsys.readouterr().out


def test_create_study_defaults_to_the_reference_rubric_and_seed_42(lead):
    call_command("create_study", "plain", "--name", "Plain", "--lead", lead.username)
    study = Study.objects.get(slug="plain")
    assert (study.rubric.preset, study.blinding_seed) == ("reference", 42)
    assert "evaluate **pairs**" in study.instructions and study.consent_text  # the whole protocol


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--name", "X", "--lead", "nobody"], "There is no user 'nobody'."),
        (["--name", "X", "--lead", "study-lead", "--seed", "-1"], "must be 0 or more"),
    ],
)
def test_create_study_refuses_bad_input(lead, arguments, message):
    before = db_counts()
    with pytest.raises(CommandError, match=message):
        call_command("create_study", "x", *arguments)
    assert db_counts() == before


def test_create_study_refuses_a_slug_in_use(lead):
    make_study(lead=lead, slug="taken", cases=1)
    before = db_counts()
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_study", "taken", "--name", "X", "--lead", lead.username)
    assert db_counts() == before


def test_import_cases_imports_a_sample(lead, capsys):
    study = make_study(lead=lead, slug="cli", cases=0, status=Study.Status.DRAFT)
    call_command("import_cases", "cli", str(SAMPLES / "cases.jsonl"))
    assert study.test_cases.count() == 3
    out = capsys.readouterr().out
    assert "Imported 3 test cases (2 systems: baseline, improved; 3 strata) into 'cli'." in out
    event = StudyEvent.objects.get(study=study, kind="cases_imported")
    assert event.actor is None and event.detail["filename"] == "cases.jsonl"


def test_import_cases_prints_every_blinding_check_hit(lead, tmp_path, capsys, monkeypatch):
    make_study(lead=lead, slug="cli", cases=0, status=Study.Status.DRAFT)
    rows = [
        'TC-1,Q?,,,"I am Claude, made by Anthropic.",Fine.',
        "TC-2,Q?,,,Fine.,As ChatGPT I think the BASELINE is weak.",
        "TC-3,Q?,,,Fine.,I was trained by a lab; my training data says so.",
    ]
    path = tmp_path / "named.csv"
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    call_command("import_cases", "cli", str(path))
    err = capsys.readouterr().err
    assert "Blinding check: 6 passage(s)" in err
    for line in [
        'TC-1, baseline: names a model or its maker ("Claude").',
        'TC-1, baseline: names a model or its maker ("Anthropic").',
        'TC-2, improved: mentions the name of a system in this study ("BASELINE").',
        'TC-2, improved: names a model or its maker ("ChatGPT").',
        'TC-3, improved: describes itself as an AI ("I was trained by").',
        'TC-3, improved: describes itself as an AI ("my training data").',
    ]:
        assert line in err, line
    # Many hits: the first ones are listed, with the total.
    monkeypatch.setattr("studies.selectors.cases.MAX_LISTED", 2)
    more = tmp_path / "more.csv"
    more.write_text(HEADER + "\n" + "\n".join(f"M-{n},Q?,,,Gemini.,Fine." for n in range(5)) + "\n")
    call_command("import_cases", "cli", str(more))
    err = capsys.readouterr().err
    assert "Blinding check: 5 passage(s)" in err and "... and 3 more" in err
    assert err.count('names a model or its maker ("Gemini")') == 2


def test_import_cases_lists_every_problem_and_writes_nothing(lead, tmp_path):
    make_study(lead=lead, slug="cli", cases=2, status=Study.Status.DRAFT)
    bad = tmp_path / "bad.csv"
    bad.write_text(f"{HEADER},notes\nTC-001,P,,,a,b,n\nTC-9,,,,a,\n", encoding="utf-8")
    before = db_counts()
    with pytest.raises(CommandError) as raised:
        call_command("import_cases", "cli", str(bad))
    assert str(raised.value).splitlines() == [
        "Row 1, column G 'notes': unknown column. Use id, prompt, context, stratum, "
        "content_warning, systems, or response:<system name> for each system.",
        "Row 2, column A 'id': the study already has a test case with the id 'TC-001'.",
        "Row 3, column B 'prompt': the prompt is empty.",
        "The file has 3 problems; nothing was imported.",
    ]
    assert db_counts() == before


@pytest.mark.parametrize(
    ("study", "file", "message"),
    [
        ("nope", "cases.csv", "There is no study 'nope'."),
        ("cli", "missing.csv", "There is no file"),
    ],
)
def test_import_cases_refuses_unknown_studies_and_files(lead, study, file, message):
    make_study(lead=lead, slug="cli", cases=0, status=Study.Status.DRAFT)
    before = db_counts()
    with pytest.raises(CommandError, match=message):
        call_command("import_cases", study, str(SAMPLES / file))
    assert db_counts() == before


def test_import_cases_refuses_a_file_too_large_and_an_open_study(lead, monkeypatch):
    make_study(lead=lead, slug="cli", cases=0, status=Study.Status.DRAFT)
    make_study(lead=lead, slug="open", cases=1, status=Study.Status.OPEN)
    before = db_counts()
    with pytest.raises(CommandError, match="frozen"):
        call_command("import_cases", "open", str(SAMPLES / "cases.csv"))
    monkeypatch.setattr(importing, "MAX_FILE_BYTES", 100)
    with pytest.raises(CommandError, match="the limit is"):
        call_command("import_cases", "cli", str(SAMPLES / "cases.csv"))
    assert db_counts() == before


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_commands_exit_non_zero_with_the_error_list_on_stderr(tmp_path):
    """Run as a script would: a real process, exit status and stderr."""
    from django.db import connection

    from ..factories import UserFactory

    if connection.vendor != "postgresql":
        pytest.skip("the subprocess reaches the test database by its PostgreSQL URL")
    UserFactory(username="cli-lead")

    from tests.processes import manage

    created = manage("create_study", "proc", "--name", "Proc", "--lead", "cli-lead")
    assert created.returncode == 0, created.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "TC-1", "prompt": "P", "responses": {"a": "x", "b": "y"}}\n{"id": "TC-2", "prompt": "P", "responses": {"a": "x"}}\n'
    )
    failed = manage("import_cases", "proc", str(bad))
    assert failed.returncode == 1
    assert "Line 2: this test case has a response from 'a' only" in failed.stderr
    assert "nothing was imported" in failed.stderr
    assert not Case.objects.filter(study__slug="proc").exists()
    imported = manage("import_cases", "proc", str(SAMPLES / "cases.csv"))
    assert imported.returncode == 0, imported.stderr
    assert Case.objects.filter(study__slug="proc").count() == 3

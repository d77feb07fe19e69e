"""A whole study driven through the Python client against a live server, as a pipeline
would: create, rubric, cases (a list and a file), raters, Assign as a job, open, (ratings
in the rating service, as raters would in the browser), progress, close, agreement checked
against an independent Krippendorff's alpha on the exported long table, unblind, key."""

import krippendorff
import pandas as pd
import pytest
from concord_client import BadRequest, PermissionDenied

from annotation.models import Assignment
from studies import selectors
from studies.models import Study, StudyEvent
from studies.services import invitations
from tests.factories import UserFactory, make_cases
from tests.payloads import SYSTEMS, payload_for, submit


def accept_invitations(raters):
    # Accepting is the invitee's step (its endpoint is being built): the service for now.
    for rater in raters:
        (invitation,) = selectors.invitations_for_user(user=rater)
        invitations.invitation_accept_personal(invitation_hash=invitation.token_hash, user=rater)


def rate_everything(slug: str) -> None:
    study = Study.objects.get(slug=slug)
    for rater in study.memberships.filter(role="rater").order_by("pseudonym"):
        for n, assignment in enumerate(rater.assignments.order_by("position")):
            submit(assignment, payload_for(n + int(rater.pseudonym[2:])), active_seconds=20)


def alpha_from_long_table(long: pd.DataFrame, dimension: str, level: str) -> float:
    """The oracle: the krippendorff package on the exported table, units (case, response)."""
    rows = long[long["dimension"] == dimension]
    table = rows.pivot_table(
        index="rater",
        columns=["test_case", "response_label"],
        values="points",
        aggfunc="first",
    )
    data = table.apply(pd.to_numeric).to_numpy(dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_a_study_from_creation_to_unblinding_through_the_client(
    concord_as, lead_user, settings, jobs_in_threads, tmp_path
):
    settings.ASSIGN_JOB_FROM = 1  # Assign runs as a job the client follows to its end
    concord = concord_as(lead_user)
    raters = [UserFactory(username=f"client-rater-{n}") for n in range(3)]

    study = concord.study_create("pipeline", "Pipeline study", description="From a script")
    assert study["status"] == "draft" and study["lead"] == "client-lead"
    assert "pipeline" in [s["slug"] for s in concord.study_list()]

    definition = concord.rubric_presets()["reference"]
    definition["name"] = "Reasoning, as piloted"
    assert concord.rubric_set("pipeline", definition)["name"] == "Reasoning, as piloted"
    assert concord.rubric_get("pipeline")["name"] == "Reasoning, as piloted"
    assert concord.study_update("pipeline", raters_per_item=3)["raters_per_item"] == 3

    cases = make_cases(8, systems=SYSTEMS)
    imported = concord.cases_import("pipeline", cases[:6])
    assert imported["imported"] == 6 and sorted(imported["systems"]) == sorted(SYSTEMS)
    # The rest as a CSV file, the format told by its name.
    header = "id,prompt," + ",".join(f"response:{s}" for s in SYSTEMS)
    lines = [header] + [
        ",".join([c["id"], c["prompt"], *(c["responses"][s] for s in SYSTEMS)]) for c in cases[6:]
    ]
    upload = tmp_path / "more.csv"
    upload.write_text("\n".join(lines) + "\n")
    assert concord.cases_import("pipeline", file=upload)["imported"] == 2
    listed = concord.cases_table("pipeline")
    assert list(listed.index) == [c["id"] for c in cases]

    for rater in raters:
        concord.rater_invite("pipeline", rater.username)
    accept_invitations(raters)
    job = concord.assign("pipeline")
    assert job["state"] == "done" and job["job"].startswith("http")
    assert job["created"] == {"R-01": 8, "R-02": 8, "R-03": 8}
    assert concord.assign("pipeline")["created"] == {}  # safe to repeat

    assert concord.study_open("pipeline")["status"] == "open"
    with pytest.raises(BadRequest) as frozen:
        concord.study_update("pipeline", blinding_seed=7)
    assert "can no longer change" in frozen.value.message

    rate_everything("pipeline")
    progress = concord.progress_table("pipeline")
    assert list(progress.index) == ["R-01", "R-02", "R-03"]
    assert progress["done"].tolist() == [8, 8, 8] and progress["total"].tolist() == [8, 8, 8]

    assert concord.study_close("pipeline", confirm=True)["status"] == "closed"
    # The recompute runs after each rating, in the background: wait until it is current.
    agreement = concord.agreement_wait("pipeline")
    assert agreement["stale"] is False and agreement["ratings"] == 48
    table = concord.agreement_table("pipeline")
    assert {"depth", "evidence"} <= set(table.index)

    long = concord.export_table("pipeline", "long-csv")
    assert set(long["rater"]) == {"R-01", "R-02", "R-03"}
    assert not long.isin(SYSTEMS).any().any()  # blinded: no system anywhere
    for dimension in ("depth", "actionability"):
        oracle = alpha_from_long_table(long, dimension, level="ordinal")
        # Stored to six decimals.
        assert table.loc[dimension, "alpha"] == pytest.approx(oracle, abs=5e-7)
    with pytest.raises(PermissionDenied):
        concord.export("pipeline", "key-csv")

    unblinded = concord.unblind("pipeline", reason="analysis")
    assert unblinded["status"] == "unblinded"
    event = Study.objects.get(slug="pipeline").events.get(kind=StudyEvent.Kind.UNBLINDED)
    assert event.actor == lead_user and event.reason == "analysis"
    key = concord.export_table("pipeline", "key-csv")
    assert list(key.columns) == ["TC-ID", "Response", "System"]
    assert set(key["System"]) == set(SYSTEMS) and len(key) == 16
    saved = concord.export_to("pipeline", "worksheet-xlsx", tmp_path / "worksheet.xlsx")
    assert saved.read_bytes()[:2] == b"PK"
    # A large export prepared as a job, waited for and downloaded: the direct file.
    direct = concord.export_to("pipeline", "long-csv", tmp_path / "long.csv")
    prepared = concord.export_prepared_to("pipeline", "long-csv", tmp_path / "prepared.csv")
    assert prepared.read_bytes() == direct.read_bytes()
    job = concord.export_prepare("pipeline", "bundle")
    assert job["state"] == "done" and job["file"]["name"] == "pipeline-report.zip"
    assert Assignment.objects.filter(test_case__study__slug="pipeline").count() == 24


def test_the_levels_of_the_oracle_match_the_rubric(concord_as, lead_user):
    """The oracle above reads depth and actionability as ordinal: the rubric says so."""
    concord = concord_as(lead_user)
    levels = {d["key"]: d.get("level") for d in concord.rubric_presets()["reference"]["dimensions"]}
    assert levels["depth"] == "ordinal" and levels["actionability"] == "ordinal"

"""Studies announce every change to what the analysis reads, and nothing else."""

from decimal import Decimal

import pytest

from studies import services
from studies.models import Membership, Study
from studies.signals import analysis_inputs_changed

from ..factories import UserFactory, make_cases, make_study

HEADER = "id,prompt,context,stratum,response:baseline,response:improved"


@pytest.fixture
def announced():
    """The (study id, reason) of every announcement made while the test runs.

    Tests clear it once their study is built, to hear only the change under test.
    """
    heard = []

    def receiver(sender, study_id, reason, **kwargs):
        heard.append((study_id, reason))

    analysis_inputs_changed.connect(receiver, weak=False)
    yield heard
    analysis_inputs_changed.disconnect(receiver)


def in_status(lead, status, **kwargs):
    return make_study(lead=lead, slug=f"s-{status}", cases=2, status=status, **kwargs)


def test_a_level_of_measurement_change_is_announced(lead, announced):
    study = in_status(lead, Study.Status.PILOT)
    announced.clear()
    services.dimension_level_set(study=study, actor=lead, key="depth", level="nominal")
    assert announced == [(study.pk, "level")]
    # Setting the level it already has changes nothing, so announces nothing.
    services.dimension_level_set(study=study, actor=lead, key="depth", level="nominal")
    assert announced == [(study.pk, "level")]


def test_the_success_criterion_is_announced_and_other_settings_are_not(lead, announced):
    study = in_status(lead, Study.Status.DRAFT)
    announced.clear()
    services.study_update(study=study, actor=lead, changes={"name": "Renamed", "description": "x"})
    assert announced == []
    services.study_update(study=study, actor=lead, changes={"success_alpha": Decimal("0.800")})
    services.study_update(study=study, actor=lead, changes={"success_min_dimensions": 2})
    assert announced == [(study.pk, "success_criterion")] * 2


def test_every_status_change_is_announced(lead, announced):
    study = in_status(lead, Study.Status.DRAFT)
    announced.clear()
    services.study_pilot_start(study=study, actor=lead)
    services.study_open(study=study, actor=lead, acknowledge_warnings=True)
    services.study_close(study=study, actor=lead)
    services.study_reopen(study=study, actor=lead)
    assert announced == [(study.pk, r) for r in ("pilot", "open", "close", "reopen")]


def test_a_refused_status_change_announces_nothing(lead, announced):
    study = in_status(lead, Study.Status.DRAFT)
    announced.clear()
    with pytest.raises(services.StudySetupError):
        services.study_close(study=study, actor=lead)
    assert announced == []


def test_test_cases_added_imported_and_removed_are_announced(lead, announced):
    study = services.study_create(slug="cases", name="Cases", lead=lead)
    announced.clear()
    services.test_cases_add(study=study, systems=["baseline", "improved"], cases=make_cases(1))
    data = f"{HEADER}\nTC-9,P,,,a,b\n".encode()
    services.test_cases_import(study=study, actor=lead, filename="more.csv", data=data)
    services.test_cases_remove_all(study=study, actor=lead)
    assert announced == [(study.pk, "cases")] * 3


def test_a_refused_import_announces_nothing(lead, announced):
    study = services.study_create(slug="cases", name="Cases", lead=lead)
    announced.clear()
    with pytest.raises(services.CaseImportError):
        services.test_cases_import(study=study, actor=lead, filename="bad.csv", data=b"id\n")
    assert announced == []


@pytest.mark.parametrize("action", ["pause", "retrain", "exclude", "reinstate"])
def test_a_decision_about_a_rater_is_announced(lead, rater, announced, action):
    study = in_status(lead, Study.Status.OPEN, raters=[rater])
    membership = Membership.objects.get(study=study, user=rater)
    if action == "reinstate":
        Membership.objects.filter(pk=membership.pk).update(status=Membership.Status.PAUSED)
    announced.clear()
    admin = UserFactory(is_staff=True)
    services.rater_status_change(membership=membership, action=action, reason="QC", actor=admin)
    assert announced == [(study.pk, "rater_status")]


def test_a_decision_that_changes_nothing_is_refused_and_not_recorded(lead, rater, announced):
    study = in_status(lead, Study.Status.OPEN, raters=[rater])
    membership = Membership.objects.get(study=study, user=rater)
    events = study.events.count()
    announced.clear()
    with pytest.raises(services.StudySetupError, match="R-01 is already active"):
        services.rater_status_change(
            membership=membership, action="reinstate", reason="QC", actor=UserFactory()
        )
    assert (study.events.count(), announced) == (events, [])


def test_a_refused_decision_announces_nothing(lead, rater, announced):
    study = in_status(lead, Study.Status.OPEN, raters=[rater])
    membership = Membership.objects.get(study=study, user=rater)
    announced.clear()
    with pytest.raises(services.StudySetupError, match="Give the reason"):
        services.rater_status_change(
            membership=membership, action="exclude", reason=" ", actor=lead
        )
    assert announced == []

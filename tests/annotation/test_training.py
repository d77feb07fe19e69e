import pytest

from annotation.models import QualificationAttempt, Rating, TrainingAnswer
from annotation.selectors import onboarding_state, qualification_next_item, training_items
from annotation.services import training
from studies.models import StudyEvent
from studies.services import study_create
from tests.payloads import full_marks_payload, zero_payload

from .support import make_item


def test_items_without_a_key_are_not_offered(study):
    make_item(study)
    assert not training_items(study=study, kind="training").exists()


def test_a_key_is_scored_with_the_rubric(study):
    item = make_item(study, key=full_marks_payload())
    assert item.key["responses"]["A"]["depth"]["points"] == 5
    assert training_items(study=study, kind="training").get() == item


def test_an_invalid_key_is_refused(study):
    item = make_item(study)
    bad = full_marks_payload()
    bad["responses"]["A"]["evidence"] = {"checked": [True]}
    with pytest.raises(training.TrainingError):
        training.training_item_key_save(item=item, payload=bad)


def test_changing_the_number_of_responses_clears_the_key(lead):
    # Before any test case is imported the study has no systems to match.
    study = study_create(slug="no-cases", name="No cases", lead=lead)
    item = training.training_item_save(
        study=study, kind="training", title="t", prompt="p", responses=["one", "two"]
    )
    item = training.training_item_key_save(item=item, payload=full_marks_payload())
    assert item.key
    item = training.training_item_save(
        study=study, item=item, kind="training", title="t", prompt="p", responses=["1", "2", "3"]
    )
    assert item.key == {}


@pytest.mark.parametrize(
    ("title", "responses"),
    [("", ["a", "b"]), ("t", []), ("t", ["only one"]), ("t", ["1", "2", "3"]), ("t", ["a", " "])],
)
def test_item_needs_a_title_and_every_response_of_a_case(study, title, responses):
    """The study's cases have two responses: so must its items, each one given."""
    with pytest.raises(training.TrainingError):
        training.training_item_save(
            study=study, kind="training", title=title, prompt="p", responses=responses
        )


def test_a_study_without_cases_yet_needs_two_to_four_responses(lead):
    study = study_create(slug="early", name="Early", lead=lead)
    for responses in (["only one"], ["1", "2", "3", "4", "5"]):
        with pytest.raises(training.TrainingError, match="between 2 and 4"):
            training.training_item_save(
                study=study, kind="training", title="t", prompt="p", responses=responses
            )


def test_a_qualification_item_keeps_no_explanation(study):
    item = training.training_item_save(
        study=study, kind="qualification", title="q", prompt="p", responses=["a", "b"],
        explanation="Would give the key away",
    )  # fmt: skip
    assert item.explanation == ""
    worked = training.training_item_save(
        study=study, kind="training", title="t", prompt="p", responses=["a", "b"],
        explanation="Why",
    )  # fmt: skip
    assert worked.explanation == "Why"


def test_training_answer_is_kept_and_replaced_and_is_never_a_rating(study, membership):
    item = make_item(study, key=full_marks_payload())
    training.training_answer_submit(rater=membership, item=item, payload=zero_payload())
    training.training_answer_submit(rater=membership, item=item, payload=full_marks_payload())
    answer = TrainingAnswer.objects.get(rater=membership, item=item)
    assert answer.answer["responses"]["B"]["depth"]["points"] == 5
    assert not Rating.objects.exists()
    assert onboarding_state(rater=membership).training_done == 1


def test_qualification_gates_until_passed(study, membership):
    items = [make_item(study, "qualification", full_marks_payload(), f"Q{n}") for n in (1, 2)]
    state = onboarding_state(rater=membership)
    assert state.blocking_step == "qualification"
    attempt = training.qualification_attempt_start(rater=membership)
    assert training.qualification_attempt_start(rater=membership) == attempt
    for item in items:
        assert qualification_next_item(rater=membership, attempt=attempt) == item
        training.qualification_answer_submit(
            rater=membership, attempt=attempt, item=item, payload=full_marks_payload()
        )
    attempt.refresh_from_db()
    assert attempt.passed is True and attempt.percent == 100
    assert attempt.detail["compared"] == 20 and attempt.detail["outside"] == []
    assert onboarding_state(rater=membership).blocking_step is None
    assert StudyEvent.objects.filter(kind="qualification_passed", membership=membership).exists()


def test_failing_every_attempt_keeps_the_gate_closed(study, membership):
    item = make_item(study, "qualification", full_marks_payload())
    training.onboarding_settings_save(study=study, max_attempts=1, tolerance=1, pass_percent=80)
    attempt = training.qualification_attempt_start(rater=membership)
    training.qualification_answer_submit(
        rater=membership, attempt=attempt, item=item, payload=zero_payload()
    )
    attempt.refresh_from_db()
    assert attempt.passed is False
    assert {"item": "Worked example", "label": "A", "dimension": "depth", "points": 0,
            "key_points": 5} in attempt.detail["outside"]  # fmt: skip
    state = onboarding_state(rater=membership)
    assert state.qualification_failed and state.blocking_step == "qualification"
    with pytest.raises(training.TrainingError, match="every attempt"):
        training.qualification_attempt_start(rater=membership)


def test_a_repeated_answer_in_an_attempt_keeps_the_first(study, membership):
    items = [make_item(study, "qualification", full_marks_payload(), f"Q{n}") for n in (1, 2)]
    attempt = training.qualification_attempt_start(rater=membership)
    for payload in (zero_payload(), full_marks_payload()):
        training.qualification_answer_submit(
            rater=membership, attempt=attempt, item=items[0], payload=payload
        )
    answer = TrainingAnswer.objects.get(attempt=attempt)
    assert answer.answer["responses"]["A"]["depth"]["points"] == 0
    assert QualificationAttempt.objects.get().finished_at is None


def test_an_answer_to_a_finished_attempt_is_refused(study, membership):
    item = make_item(study, "qualification", full_marks_payload())
    attempt = training.qualification_attempt_start(rater=membership)
    training.qualification_answer_submit(
        rater=membership, attempt=attempt, item=item, payload=full_marks_payload()
    )
    with pytest.raises(training.TrainingError, match="finished"):
        training.qualification_answer_submit(
            rater=membership, attempt=attempt, item=item, payload=full_marks_payload()
        )


def test_settings_are_checked(study):
    with pytest.raises(training.TrainingError):
        training.onboarding_settings_save(study=study, pass_percent=120)
    with pytest.raises(training.TrainingError):
        training.onboarding_settings_save(study=study, max_attempts=0)
    settings = training.onboarding_settings_save(
        study=study, pass_percent=90, practice_enabled=False
    )
    assert settings.pk and settings.pass_percent == 90
    assert onboarding_state(rater=study.memberships.filter(role="rater").first()).practice is None

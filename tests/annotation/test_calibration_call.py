"""The calibration call (protocol 4.2): the ranking of disagreement, the blinding of pilot
cases, the attendance record and the gate it opens."""

import copy
from datetime import timedelta
from itertools import combinations

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.disagreement import pairs_disagreeing
from annotation.models import CalibrationAttendance, OnboardingSettings
from annotation.selectors import calibration_sheet, onboarding_blocking_step, onboarding_state
from annotation.services import rating_submit, training
from annotation.services.calibration_call import CalibrationCallError, calibration_call_record
from annotation.services.participation import withdrawal_record
from studies.models import Membership, Study, StudyEvent
from studies.services import membership_add
from tests.factories import PASSWORD, UserFactory, make_study
from tests.payloads import full_marks_payload, payload_for

from .support import consent_all, make_item

# --- the measure, against a count of every pair -----------------------------------------


def _pairs_oracle(values):
    answered = [v for v in values if v is not None]
    pairs = list(combinations(answered, 2))
    return sum(1 for a, b in pairs if a != b), len(pairs)


@pytest.mark.parametrize(
    "values",
    [[], [1.0], [1.0, 1.0], [1.0, 2.0], [1.0, 1.0, 2.0], [1.0, 2.0, 3.0, None], [None, None],
     [0.0, 0.0, 0.0, 1.0, 1.0], [2.0, None, 2.0, 3.0, 4.0, 2.0]],
)  # fmt: skip
def test_pairs_disagreeing_counts_every_pair_that_differs(values):
    assert pairs_disagreeing(values) == _pairs_oracle(values)


# --- the ranking on hand-made qualification answers -------------------------------------


def _third_rater(study):
    membership = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    consent_all(study)
    return membership


def _answer_all(rater, items, payloads):
    attempt = training.qualification_attempt_start(rater=rater)
    for item, payload in zip(items, payloads, strict=True):
        training.qualification_answer_submit(
            rater=rater, attempt=attempt, item=item, payload=payload
        )


def _with_depth(payload, label, depth):
    changed = copy.deepcopy(payload)
    changed["responses"][label]["depth"]["items"] = [
        {"text": f"f{i}", "half": False} for i in range(depth)
    ]
    return changed


def test_qualification_items_ranked_by_the_share_of_pairs_that_disagree(study):
    study.status = Study.Status.OPEN
    study.save()
    base = full_marks_payload()
    items = [
        make_item(study, "qualification", base, title)
        for title in ("Unanimous", "One question", "Many questions")
    ]
    raters = list(study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym"))
    raters.append(_third_rater(study))
    # Three raters. "Unanimous": all alike. "One question": the second differs on Response
    # A's depth. "Many questions": the second and third differ from the first everywhere
    # the payloads differ.
    answers = {
        0: [base, base, payload_for(1)],
        1: [base, _with_depth(base, "A", 1), payload_for(2)],
        2: [base, base, payload_for(2)],
    }
    for index, rater in enumerate(raters):
        _answer_all(rater, items, answers[index])
    sheet = calibration_sheet(study=study)
    assert [item.title for item in sheet.qualification] == ["Many questions", "One question"]
    assert sheet.qualification_compared == 3
    one = sheet.qualification[1].disagreement
    assert one.raters == tuple(r.pseudonym for r in raters)
    # Of the ten questions (five dimensions on two responses), one has 2 of its 3 pairs
    # differing: a mean share of (2/3)/10.
    disputed = [q for q in one.questions if q.disagreeing]
    assert [(q.label, q.dimension, q.disagreeing, q.pairs) for q in disputed] == [
        ("A", "depth", 2, 3)
    ]
    assert one.score == pytest.approx((2 / 3) / 10)
    assert one.percent == 7
    # The one who differs is marked; the key is shown beside the answers.
    depth = disputed[0]
    assert [g.odd for g in depth.answers] == [False, True, False]
    assert depth.key is not None
    assert sheet.qualification[0].disagreement.score > one.score


def test_a_withdrawn_raters_answers_are_not_discussed(study):
    study.status = Study.Status.OPEN
    study.save()
    item = make_item(study, "qualification", full_marks_payload(), "Q")
    first, second = study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym")
    _answer_all(first, [item], [full_marks_payload()])
    _answer_all(second, [item], [payload_for(3)])
    assert [i.title for i in calibration_sheet(study=study).qualification] == ["Q"]
    withdrawal_record(rater=second, data="keep")
    sheet = calibration_sheet(study=study)
    assert sheet.qualification == [] and sheet.qualification_compared == 0


# --- pilot cases and the blinding --------------------------------------------------------


def _pilot_study(lead, raters):
    # System names no page text could hold by chance (a class name, a word).
    study = make_study(lead=lead, slug="pilot-study", cases=3, raters=raters, consented=True,
                       status=Study.Status.PILOT, systems=("sys-kestrel", "sys-osprey"))  # fmt: skip
    memberships = list(study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym"))
    for index, membership in enumerate(memberships):
        for assignment in membership.assignments.select_related("test_case"):
            # TC-002 is rated alike by both; TC-001 and TC-003 differently.
            n = 5 if assignment.test_case.case_id == "TC-002" else index + assignment.position
            rating_submit(assignment=assignment, payload=payload_for(n), any_version=True)
    return study


def test_pilot_cases_ranked_and_unlabelled_before_unblinding(lead, rater, other_rater, client):
    study = _pilot_study(lead, [rater, other_rater])
    sheet = calibration_sheet(study=study)
    assert sheet.pilot_compared == 3
    assert {item.title for item in sheet.pilot} == {"TC-001", "TC-003"}
    case = study.test_cases.get(case_id=sheet.pilot[0].title)
    texts = sorted(case.responses.values_list("text", flat=True))
    assert not sheet.pilot[0].labelled
    assert sheet.pilot[0].responses == [("", text) for text in texts]
    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("annotation:calibration_call", args=[study.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    for name in study.systems.values_list("name", flat=True):
        assert name not in html
    assert "A response" in html and "Response A: " in html  # answers keep the key's labels
    assert "The responses, not under their labels" in html


def test_pilot_ratings_stay_pilot_data_once_the_study_opens(lead, rater, other_rater):
    study = _pilot_study(lead, [rater, other_rater])
    study.status = Study.Status.OPEN
    study.opened_at = timezone.now()
    study.save()
    assert {item.title for item in calibration_sheet(study=study).pilot} == {"TC-001", "TC-003"}
    # Once open with every rating after the opening, there is no pilot data to discuss.
    study.opened_at = timezone.now() - timedelta(days=30)
    study.save()
    sheet = calibration_sheet(study=study)
    assert sheet.pilot == [] and sheet.pilot_compared == 0


def test_pilot_responses_under_their_labels_after_unblinding(lead, rater, other_rater):
    study = _pilot_study(lead, [rater, other_rater])
    study.status = Study.Status.UNBLINDED
    study.opened_at = timezone.now()
    study.save()
    item = calibration_sheet(study=study).pilot[0]
    case = study.test_cases.get(case_id=item.title)
    assert item.labelled
    assert item.responses == [
        (row.label, row.response.text) for row in case.labels.select_related("response")
    ]


# --- attendance -------------------------------------------------------------------------


@pytest.fixture
def open_study(study):
    study.status = Study.Status.OPEN
    study.save()
    return study


def test_a_call_records_attendance_and_an_event(open_study, lead, membership):
    held = timezone.now() - timedelta(hours=1)
    call = calibration_call_record(
        study=open_study, actor=lead, held_at=held, attended=[membership], note=" Depth. "
    )
    assert call.note == "Depth." and call.recorded_by == lead
    assert list(call.attendance.values_list("rater", flat=True)) == [membership.pk]
    event = StudyEvent.objects.get(kind=StudyEvent.Kind.CALIBRATION_CALL_RECORDED)
    assert event.detail["attended"] == [membership.pseudonym] and event.actor == lead


@pytest.mark.parametrize(
    "change, message",
    [
        ({"attended": []}, "at least one rater"),
        ({"held_at": timezone.now() + timedelta(days=2)}, "in the future"),
        ({"held_at": timezone.now().replace(tzinfo=None)}, "date and time"),
        ({"note": "x" * 5001}, "limited to"),
    ],
)
def test_a_call_is_validated(open_study, lead, membership, change, message):
    values = {"held_at": timezone.now(), "attended": [membership], "note": "", **change}
    with pytest.raises(CalibrationCallError, match=message):
        calibration_call_record(study=open_study, actor=lead, **values)
    assert not CalibrationAttendance.objects.exists()
    assert not StudyEvent.objects.filter(kind=StudyEvent.Kind.CALIBRATION_CALL_RECORDED).exists()


def test_only_raters_of_the_study_who_have_not_withdrawn_attend(open_study, lead, membership):
    other = make_study(lead=UserFactory(), slug="another", raters=[UserFactory()])
    outsider = other.memberships.get(role=Membership.Role.RATER)
    with pytest.raises(CalibrationCallError, match="Only raters of this study"):
        calibration_call_record(
            study=open_study, actor=lead, held_at=timezone.now(), attended=[outsider]
        )
    withdrawal_record(rater=membership, data="keep")
    with pytest.raises(CalibrationCallError, match="Only raters of this study"):
        calibration_call_record(
            study=open_study, actor=lead, held_at=timezone.now(), attended=[membership]
        )
    assert not CalibrationAttendance.objects.exists()


def test_no_call_in_a_draft_study(study, lead, membership):
    study.status = Study.Status.DRAFT
    study.save()
    with pytest.raises(CalibrationCallError, match="not started"):
        calibration_call_record(
            study=study, actor=lead, held_at=timezone.now(), attended=[membership]
        )


# --- the gate ---------------------------------------------------------------------------


def _qualified(study, membership):
    item = make_item(study, "qualification", full_marks_payload(), "Q")
    _answer_all(membership, [item], [full_marks_payload()])


def _blocking(membership):
    membership.refresh_from_db()
    state = onboarding_state(rater=membership).blocking_step
    assert onboarding_blocking_step(rater=membership) == state
    return state


def test_without_the_requirement_a_qualified_rater_rates(open_study, membership):
    _qualified(open_study, membership)
    assert not OnboardingSettings.objects.filter(study=open_study).exists()
    assert _blocking(membership) is None
    assert not onboarding_state(rater=membership).waiting_for_call


def test_a_required_call_holds_a_qualified_rater_until_attendance(open_study, lead, membership):
    training.onboarding_settings_save(study=open_study, calibration_call_required=True)
    item = make_item(open_study, "qualification", full_marks_payload(), "Q")
    assert _blocking(membership) == "qualification"
    assert not onboarding_state(rater=membership).waiting_for_call
    _answer_all(membership, [item], [full_marks_payload()])
    assert _blocking(membership) == "calibration_call"
    assert onboarding_state(rater=membership).waiting_for_call
    calibration_call_record(
        study=open_study, actor=lead, held_at=timezone.now(), attended=[membership]
    )
    assert _blocking(membership) is None


def test_a_required_call_does_not_hold_the_pilot(study, membership):
    study.status = Study.Status.PILOT
    study.save()
    training.onboarding_settings_save(study=study, calibration_call_required=True)
    _qualified(study, membership)
    assert _blocking(membership) is None
    assert onboarding_state(rater=membership).waiting_for_call


def test_the_rater_is_told_they_wait_for_the_call(open_study, lead, rater, membership, client):
    training.onboarding_settings_save(study=open_study, calibration_call_required=True)
    _qualified(open_study, membership)
    client.login(username=rater.username, password=PASSWORD)
    following = client.get(reverse("annotation:next", args=[open_study.slug]), follow=True)
    assert following.redirect_chain[-1][0] == reverse(
        "annotation:assignments", args=[open_study.slug]
    )
    html = following.content.decode()
    assert "You are waiting for the calibration call." in html
    assert reverse("annotation:next", args=[open_study.slug]) not in html
    assignment = membership.assignments.first()
    rate = client.get(reverse("annotation:rate", args=[assignment.uuid]))
    assert rate.status_code == 302
    calibration_call_record(
        study=open_study, actor=lead, held_at=timezone.now(), attended=[membership]
    )
    rate = client.get(reverse("annotation:rate", args=[assignment.uuid]))
    assert rate.status_code == 200


# --- the pages --------------------------------------------------------------------------


def test_the_lead_records_a_call_from_the_page(open_study, lead, membership, client):
    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("annotation:calibration_call", args=[open_study.slug]))
    assert "Record the call" in page.content.decode()
    url = reverse("annotation:calibration_call_record", args=[open_study.slug])
    refused = client.post(url, {"held_at": "", "attended": [membership.pk]})
    assert refused.status_code == 400 and not CalibrationAttendance.objects.exists()
    held = (timezone.localtime() - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    done = client.post(url, {"held_at": held, "attended": [membership.pk], "note": "Depth."})
    assert done.status_code == 302
    assert CalibrationAttendance.objects.get().rater == membership
    html = client.get(done.url).content.decode()
    assert membership.pseudonym in html and "Depth." in html


def test_a_coordinator_reads_the_page_but_records_nothing(open_study, membership, client):
    coordinator = UserFactory()
    membership_add(study=open_study, user=coordinator, role=Membership.Role.COORDINATOR)
    client.login(username=coordinator.username, password=PASSWORD)
    page = client.get(reverse("annotation:calibration_call", args=[open_study.slug]))
    assert page.status_code == 200
    assert "Record the call" not in page.content.decode()
    url = reverse("annotation:calibration_call_record", args=[open_study.slug])
    held = timezone.localtime().strftime("%Y-%m-%dT%H:%M")
    assert client.post(url, {"held_at": held, "attended": [membership.pk]}).status_code == 403
    assert not CalibrationAttendance.objects.exists()

"""A batch of cases per crowd participant (issue 29): a link with a batch size B gives each
new participant B sample cases with the fewest places held, up to the design's k, and no
more; a newcomer is refused politely once every case has its k."""

import hashlib
from collections import Counter
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment
from annotation.services.assignment import study_assign
from annotation.services.participants import participants_time_out
from annotation.services.skipping import case_skip
from studies.models import (
    Membership,
    Participant,
    ParticipantLink,
    QualitySettings,
    Study,
    StudyEvent,
)
from studies.models import (
    TestCase as Case,
)
from studies.selectors import study_protocol_fingerprint
from studies.services.membership import membership_add
from studies.services.participants import ParticipantError, participant_join, participant_link_save
from studies.services.tokens import api_token_create

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db(transaction=True)  # the join's after-commit steps run

LINK = {"name": "Prolific", "completion_code": "DONE1", "max_participants": "500"}


def make_link(study: Study, batch, **changes) -> ParticipantLink:
    values = {**LINK, "cases_per_participant": str(batch), **changes}
    return participant_link_save(study=study, actor=study.lead, values=values)


def join(link: ParticipantLink, pid: str) -> Membership:
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "V1", "SESSION_ID": f"S-{pid}"}
    return participant_join(link=link, params=params).participant.membership


def balanced(cases: int, k: int | None, seed: int = 42, slug=None) -> Study:
    study = make_study(cases=cases, raters=[], status=Study.Status.OPEN, seed=seed, slug=slug)
    Study.objects.filter(pk=study.pk).update(raters_per_item=k)
    study.refresh_from_db()
    return study


def held(study: Study) -> Counter:
    """Places held per sample case, counted here from the rule as the docs state it: an
    active or paused rater's assignment that is not skipped."""
    rows = Assignment.objects.filter(
        test_case__study=study,
        test_case__purpose=Case.Purpose.SAMPLE,
        rater__status__in=("active", "paused"),
    ).exclude(status="skipped")
    counts = Counter(rows.values_list("test_case__case_id", flat=True))
    for case_id in study.test_cases.values_list("case_id", flat=True):
        counts.setdefault(case_id, 0)
    return counts


def cases_of(rater: Membership) -> list[str]:
    return list(rater.assignments.order_by("position").values_list("test_case__case_id", flat=True))


def test_every_case_ends_with_exactly_k_holders_and_nobody_gets_more_than_the_batch():
    study = balanced(cases=10, k=2)
    link = make_link(study, 3)
    raters = [join(link, f"PID{n:03d}") for n in range(7)]
    # 20 places in batches of 3: six full batches and a last one of the two places left.
    assert [len(cases_of(r)) for r in raters] == [3, 3, 3, 3, 3, 3, 2]
    assert all(len(set(cases_of(r))) == len(cases_of(r)) for r in raters)
    assert set(held(study).values()) == {2}
    # The next arrival is refused before any account is made, and counts for no quota.
    users = get_user_model().objects.count()
    with pytest.raises(ParticipantError) as refused:
        join(link, "PID999")
    assert refused.value.reason == "no_places"
    assert "has all the ratings it needs" in str(refused.value)
    assert get_user_model().objects.count() == users
    assert Participant.objects.filter(link=link).count() == 7
    assert StudyEvent.objects.filter(
        study=study, kind=StudyEvent.Kind.PARTICIPANT_REFUSED, detail__why="no_places"
    ).exists()


def test_the_fewest_held_cases_go_first_so_each_case_is_covered_once_before_twice():
    study = balanced(cases=6, k=3)
    link = make_link(study, 2)
    first_round = [join(link, f"PID{n}") for n in range(3)]
    assert sorted(c for r in first_round for c in cases_of(r)) == sorted(held(study))
    assert set(held(study).values()) == {1}


def test_the_order_is_seeded_and_reproducible():
    def batches(seed, slug):
        study = balanced(cases=12, k=1, seed=seed, slug=slug)
        link = make_link(study, 3)
        return [sorted(cases_of(join(link, f"P{n}"))) for n in range(4)]

    once = batches(42, "seeded-a")
    assert batches(42, "seeded-b") == once
    assert batches(7, "seeded-c") != once
    # The first batch: the three cases first in the order the seed and the case id give.
    ids = Study.objects.get(slug="seeded-a").test_cases.values_list("case_id", flat=True)
    tie = {c: hashlib.blake2b(f"42:batch:{c}".encode(), digest_size=8).digest() for c in ids}
    assert once[0] == sorted(sorted(ids, key=tie.__getitem__)[:3])
    # Between them the four batches cover the twelve cases, each once.
    assert sorted(c for batch in once for c in batch) == sorted(
        Study.objects.get(slug="seeded-a").test_cases.values_list("case_id", flat=True)
    )


def test_the_full_design_gives_the_least_held_cases_and_never_refuses():
    study = balanced(cases=3, k=None)
    link = make_link(study, 2)
    raters = [join(link, f"PID{n}") for n in range(4)]
    assert [len(cases_of(r)) for r in raters] == [2, 2, 2, 2]
    assert sorted(held(study).values()) == [2, 3, 3]


def test_a_participant_gets_their_share_of_gold_items_and_attention_checks():
    study = balanced(cases=8, k=1)
    gold = list(study.test_cases.order_by("position").values_list("pk", flat=True)[6:])
    Case.objects.filter(pk__in=gold).update(purpose=Case.Purpose.GOLD, key_shown_at=timezone.now())
    # One gold item for two sample cases: 34% of three screens, rounded.
    QualitySettings.objects.update_or_create(study=study, defaults={"gold_percent": 34})
    rater = join(make_link(study, 2), "PIDGOLD")
    purposes = Counter(rater.assignments.values_list("test_case__purpose", flat=True))
    assert purposes == {Case.Purpose.SAMPLE: 2, Case.Purpose.GOLD: 1}
    # Never first: the gold item comes among the sample cases.
    assert rater.assignments.order_by("position").first().test_case.purpose == "sample"


def test_assign_and_the_automatic_top_up_leave_batch_participants_at_their_batch():
    study = balanced(cases=6, k=2)
    link = make_link(study, 2)
    participant = join(link, "PIDBATCH")
    mine = set(cases_of(participant))
    staff = [membership_add(study=study, user=UserFactory(), role="rater") for _ in range(2)]
    study_assign(study=study)
    assert set(cases_of(participant)) == mine
    # The participant's two cases count towards their k: the others need one more each.
    assert set(held(study).values()) == {2}
    assert sum(len(cases_of(r)) for r in staff) == 6 * 2 - 2


def test_a_skipped_case_is_not_handed_to_a_batch_participant():
    study = balanced(cases=4, k=1)
    staff = membership_add(study=study, user=UserFactory(), role="rater")
    study_assign(study=study)
    # Nothing is free for a newcomer until the staff rater skips a case.
    link = make_link(study, 1)
    with pytest.raises(ParticipantError):
        join(link, "PIDEARLY")
    first = staff.assignments.order_by("position").first()
    outcome = case_skip(assignment=first)
    assert not outcome.reassigned_to
    newcomer = join(link, "PIDLATE")
    assert cases_of(newcomer) == [first.test_case.case_id]


def test_released_cases_go_to_the_next_arrival_first():
    study = balanced(cases=4, k=2)
    link = make_link(study, 2, timeout_minutes="30")
    idle, busy = join(link, "PIDIDLE"), join(link, "PIDBUSY")
    assert set(held(study).values()) == {1}
    long_ago = timezone.now() - timedelta(minutes=31)
    Participant.objects.filter(membership=idle).update(joined_at=long_ago)
    assert participants_time_out(study_id=study.pk) == 1
    released = set(cases_of(idle))
    newcomer = join(link, "PIDNEW")
    assert set(cases_of(newcomer)) == released
    assert not released & set(cases_of(busy))


def test_a_full_study_releases_an_idle_participants_cases_to_the_newcomer():
    study = balanced(cases=4, k=1)
    link = make_link(study, 2, timeout_minutes="30")
    idle = join(link, "PIDIDLE")
    join(link, "PIDBUSY")
    Participant.objects.filter(membership=idle).update(
        joined_at=timezone.now() - timedelta(minutes=31)
    )
    newcomer = join(link, "PIDNEW")  # the study was full: the idle one's cases move on
    assert set(cases_of(newcomer)) == set(cases_of(idle))
    assert Participant.objects.get(membership=idle).status == Participant.Status.TIMED_OUT


def test_the_refusal_page_is_polite_and_no_server_error():
    study = balanced(cases=1, k=1)
    link = make_link(study, 1)
    join(link, "PIDFIRST")
    url = reverse("studies:participant_join", args=[link.token])
    page = Client().post(url, {"PROLIFIC_PID": "PIDSECOND", "STUDY_ID": "V", "SESSION_ID": "S2"})
    assert page.status_code == 400
    assert b'data-reason="no_places"' in page.content
    assert b"please return it" in page.content.lower()
    # The first participant still resumes.
    again = Client().post(
        url, {"PROLIFIC_PID": "PIDFIRST", "STUDY_ID": "V1", "SESSION_ID": "S-PIDFIRST"}
    )
    assert again.status_code == 302


@pytest.mark.parametrize(
    ("value", "stored"), [("", None), ("1", 1), ("10000", 10_000), (" 25 ", 25)]
)
def test_the_batch_size_is_optional_and_bounded(value, stored):
    study = balanced(cases=2, k=1)
    assert make_link(study, value).cases_per_participant == stored


@pytest.mark.parametrize("value", ["0", "10001", "-3", "two", "1.5"])
def test_a_bad_batch_size_is_refused_and_nothing_is_saved(value):
    study = balanced(cases=2, k=1)
    with pytest.raises(ParticipantError, match="cases per participant"):
        make_link(study, value)
    assert not ParticipantLink.objects.exists()


def test_the_protocol_fingerprint_does_not_depend_on_the_batch():
    study = balanced(cases=4, k=2)
    before = study_protocol_fingerprint(study=study)
    link = make_link(study, 2)
    join(link, "PIDFP")
    participant_link_save(
        study=study, actor=study.lead, values={**LINK, "cases_per_participant": "3"}, link=link
    )
    study.refresh_from_db()
    assert study_protocol_fingerprint(study=study) == before


def test_the_lead_sets_the_batch_on_the_page_and_through_the_api():
    study = balanced(cases=2, k=1)
    lead = Client()
    lead.force_login(study.lead)
    page = reverse("studies:participant_links", args=[study.slug])
    response = lead.post(page, {**LINK, "preset": "prolific", "cases_per_participant": "5"})
    assert response.status_code == 302
    link = ParticipantLink.objects.get()
    assert link.cases_per_participant == 5
    assert b"5 cases each" in lead.get(page).content
    _, secret = api_token_create(user=study.lead, name="tests")
    api = reverse("api:participant_link", args=[study.slug, link.uuid])

    def patch(body):
        return Client().patch(
            api, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {secret}"
        )

    changed = patch({"cases_per_participant": None})
    assert changed.status_code == 200, changed.content
    assert changed.json()["cases_per_participant"] is None
    assert patch({"cases_per_participant": 7}).json()["cases_per_participant"] == 7
    bad = patch({"cases_per_participant": 0})
    assert bad.status_code == 400
    assert "cases per participant" in bad.content.decode()
    link.refresh_from_db()
    assert link.cases_per_participant == 7

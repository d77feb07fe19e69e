"""Twenty participants arriving at once through one link, one id twice (issue 29): one
participant per id, unique pseudonyms, no server error, every page a redirect onward."""

from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment
from studies.models import Membership, Participant, Study
from studies.services.participants import participant_link_save

from ..annotation.test_locks import together
from ..factories import make_study

# A connection per arrival: twenty at most, one test at a time on one test process, so that
# with the other test processes' connections they stay under PostgreSQL's 100 ("too many
# clients"; fifty arrivals passed it on a 2-core machine, the backends of one test's threads
# not all gone when the next began). Twenty threads meet at one barrier: the lock is what
# keeps them apart, as it would fifty.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("many-connections")]

ARRIVALS = 20


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database with row locks and concurrent connections")


def test_twenty_first_visits_at_once_one_duplicate_give_19_participants():
    study = make_study(cases=2, raters=[], status=Study.Status.OPEN)
    link = participant_link_save(
        study=study,
        actor=study.lead,
        values={"name": "burst", "completion_code": "DONE1", "max_participants": "100"},
    )
    url = reverse("studies:participant_join", args=[link.token])
    # The last arrival repeats the first one's id and session (a double click, two tabs).
    ids = [f"PID{n:03d}" for n in range(ARRIVALS - 1)] + ["PID000"]

    def visit(pid):
        def run():
            client = Client()
            return client.post(
                url, {"PROLIFIC_PID": pid, "STUDY_ID": "V1", "SESSION_ID": f"S-{pid}"}
            ).status_code

        return run

    runs = together(*(visit(pid) for pid in ids))
    assert [run.error for run in runs] == [None] * ARRIVALS
    assert [run.result for run in runs] == [302] * ARRIVALS  # joined or resumed, never a 500
    assert Participant.objects.filter(link=link).count() == ARRIVALS - 1
    raters = Membership.objects.filter(study=study, role=Membership.Role.RATER)
    pseudonyms = list(raters.values_list("pseudonym", flat=True))
    assert len(pseudonyms) == len(set(pseudonyms)) == ARRIVALS - 1
    assert sorted(pseudonyms) == [f"R-{n:02d}" for n in range(1, ARRIVALS)]
    # Every participant got the full design's cases, once.
    per_rater = {r.pk: Assignment.objects.filter(rater=r).count() for r in raters}
    assert set(per_rater.values()) == {2}


def held_per_case(study) -> Counter:
    """Places held per case: assignments not skipped (a time-out marks released ones so)."""
    rows = Assignment.objects.filter(test_case__study=study).exclude(status="skipped")
    return Counter(rows.values_list("test_case_id", flat=True))


def test_twenty_arrivals_at_once_for_twelve_batches_of_two_fill_every_case_to_k():
    # 12 cases, 2 raters each, 2 cases per participant: 24 places, room for 12 participants.
    study = make_study(cases=12, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    link = participant_link_save(
        study=study,
        actor=study.lead,
        values={
            "name": "batches",
            "completion_code": "DONE1",
            "max_participants": "100",
            "cases_per_participant": "2",
        },
    )
    url = reverse("studies:participant_join", args=[link.token])

    def visit(pid):
        def run():
            response = Client().post(
                url, {"PROLIFIC_PID": pid, "STUDY_ID": "V1", "SESSION_ID": f"S-{pid}"}
            )
            refused = b'data-reason="no_places"' in response.content
            return response.status_code, refused

        return run

    runs = together(*(visit(f"PID{n:03d}") for n in range(ARRIVALS)))
    assert [run.error for run in runs] == [None] * ARRIVALS
    outcomes = Counter(run.result for run in runs)
    # Joined (a redirect onward) or refused politely (the page, with the reason): no 500.
    assert outcomes == {(302, False): 12, (400, True): ARRIVALS - 12}
    participants = Participant.objects.filter(link=link)
    assert participants.count() == 12
    per_rater = Counter(
        Assignment.objects.filter(rater__participant__link=link).values_list("rater_id", flat=True)
    )
    assert sorted(per_rater.values()) == [2] * 12
    assert sorted(held_per_case(study).values()) == [2] * 12
    # Nobody refused has an account or a membership.
    assert Membership.objects.filter(study=study, role=Membership.Role.RATER).count() == 12

    # Three participants go idle past the time-out; ten more arrive at once. The first to
    # find the study full releases the idle ones' six cases, which make three batches.
    idle = list(participants.order_by("pk")[:3])
    Participant.objects.filter(pk__in=[p.pk for p in idle]).update(
        joined_at=timezone.now() - timedelta(hours=2)
    )
    released = set(
        Assignment.objects.filter(rater__participant__in=idle).values_list(
            "test_case_id", flat=True
        )
    )
    late = together(*(visit(f"LATE{n:03d}") for n in range(10)))
    assert [run.error for run in late] == [None] * 10
    assert Counter(run.result for run in late) == {(302, False): 3, (400, True): 7}
    newcomers = Assignment.objects.filter(rater__participant__external_id__startswith="LATE")
    assert set(newcomers.values_list("test_case_id", flat=True)) == released
    assert newcomers.count() == 6
    assert set(held_per_case(study).values()) == {2}


def test_twenty_arrivals_at_once_on_a_link_of_eight_places_give_eight_participants():
    study = make_study(cases=2, raters=[], status=Study.Status.OPEN)
    link = participant_link_save(
        study=study,
        actor=study.lead,
        values={"name": "quota", "completion_code": "DONE1", "max_participants": "8"},
    )
    url = reverse("studies:participant_join", args=[link.token])

    def visit(pid):
        def run():
            response = Client().post(
                url, {"PROLIFIC_PID": pid, "STUDY_ID": "V1", "SESSION_ID": f"S-{pid}"}
            )
            return response.status_code, b'data-reason="full"' in response.content

        return run

    runs = together(*(visit(f"QPID{n:03d}") for n in range(ARRIVALS)))
    assert [run.error for run in runs] == [None] * ARRIVALS
    # Eight join; the others get the polite "all the participants it needs" page, no 500.
    assert Counter(run.result for run in runs) == {(302, False): 8, (400, True): ARRIVALS - 8}
    assert Participant.objects.filter(link=link).count() == 8
    pseudonyms = Membership.objects.filter(study=study, role=Membership.Role.RATER)
    assert sorted(pseudonyms.values_list("pseudonym", flat=True)) == [
        f"R-{n:02d}" for n in range(1, 9)
    ]


def test_one_id_arriving_at_two_linked_arms_at_once_joins_one_of_them():
    """Each arm's link names the other: the same participant arriving at both at the same
    instant (two tabs, two vendor studies) becomes a participant of exactly one arm, however
    the two joins interleave; the other is refused as a participant of a related study."""
    lead = make_study(cases=2, raters=[], status=Study.Status.OPEN, slug="arm-one").lead
    arm_one = Study.objects.get(slug="arm-one")
    arm_two = make_study(cases=2, raters=[], status=Study.Status.OPEN, lead=lead, slug="arm-two")
    values = {"completion_code": "DONE1", "max_participants": "100"}
    links = [
        participant_link_save(study=arm_one, actor=lead,
                              values={**values, "name": "one", "linked_studies": "arm-two"}),
        participant_link_save(study=arm_two, actor=lead,
                              values={**values, "name": "two", "linked_studies": "arm-one"}),
    ]  # fmt: skip

    def visit(link, pid):
        def arrive():
            url = reverse("studies:participant_join", args=[link.token])
            return Client().post(
                url, {"PROLIFIC_PID": pid, "STUDY_ID": "V1", "SESSION_ID": f"S-{pid}"}
            )

        return arrive

    for round_ in range(5):
        pid = f"TWICE{round_}"
        runs = together(*(visit(link, pid) for link in links))
        assert [run.error for run in runs] == [None, None]
        statuses = sorted(run.result.status_code for run in runs)
        assert statuses == [302, 400], statuses  # one joined, one refused, never a 500
        refused = next(run.result for run in runs if run.result.status_code == 400)
        assert b'data-reason="linked"' in refused.content
        assert Participant.objects.filter(external_id=pid).count() == 1

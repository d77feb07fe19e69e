"""Raters from a crowd platform: the link, joining and resuming, the codes, time-outs,
payments and erasure (issue 29), through the pages a simulated vendor sends people to."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, OnboardingSettings
from annotation.selectors.participants import bonus_for
from annotation.services.participants import participants_time_out
from studies.models import ApiToken, Membership, Participant, ParticipantLink, Study, StudyEvent
from studies.services.erasure import identity_erase
from studies.services.participants import (
    ParticipantError,
    participant_join,
    participant_link_close,
    participant_link_save,
)

from ..annotation.support import make_item
from ..factories import UserFactory, make_study
from ..payloads import payload_for

pytestmark = pytest.mark.django_db(transaction=True)  # cases are assigned after the commit

LINK = {
    "name": "Prolific pilot",
    "preset": "prolific",
    "completion_code": "C1234ABC",
    "completion_url": "https://app.prolific.com/submissions/complete?cc=C1234ABC",
    "screened_out_code": "SCREENED1",
    "screened_out_url": "https://app.prolific.com/submissions/complete?cc=SCREENED1",
    "max_participants": "10",
    "timeout_minutes": "60",
    "bonus_rule": "per_case",
    "bonus_amount": "0.25",
    "bonus_currency": "GBP",
}


def make_link(study: Study, **changes) -> ParticipantLink:
    return participant_link_save(study=study, actor=study.lead, values={**LINK, **changes})


def vendor_url(link: ParticipantLink, pid: str, session: str = "", study_id="VSTUDY1") -> str:
    """What Prolific sends: the link with the participant's ids filled in."""
    session = session or f"S-{pid}"
    path = reverse("studies:participant_join", args=[link.token])
    return f"{path}?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID={session}"


def arrive(client: Client, link: ParticipantLink, pid: str, session: str = ""):
    """Open the vendor's URL, then press Start (the form carries the ids)."""
    page = client.get(vendor_url(link, pid, session))
    assert page.status_code == 200
    fields = {name: value for name, value in page.context["carried"]}
    return client.post(reverse("studies:participant_join", args=[link.token]), fields)


@pytest.fixture
def study():
    study = make_study(cases=3, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(
        consent_text="You will rate AI responses.", consent_version=1
    )
    study.refresh_from_db()
    return study


def test_the_whole_vendor_flow_consent_qualification_rating_code_and_redirect(study):
    make_item(study, kind="qualification", key=payload_for(1))
    link = make_link(study)
    client = Client()
    joined = arrive(client, link, "5f1a2b3c4d5e6f7a8b9c0d1e")
    participant_page = reverse("annotation:participant", args=[study.slug])
    assert joined.status_code == 302 and joined["Location"] == participant_page
    participant = Participant.objects.get()
    assert participant.external_id == "5f1a2b3c4d5e6f7a8b9c0d1e"
    assert participant.vendor_study_id == "VSTUDY1"
    assert participant.membership.pseudonym == "R-01"
    assert not participant.membership.user.has_usable_password()
    # The normal onboarding: consent first.
    step = client.get(participant_page)
    assert step["Location"] == reverse("annotation:consent", args=[study.slug])
    consent = client.get(step["Location"])
    assert b"participant-decline" in consent.content
    client.post(step["Location"], {"agree": "on", "prior_knowledge": "no"})
    # Then the qualification test, answered as the key says.
    step = client.get(participant_page)
    assert step["Location"] == reverse("annotation:qualification", args=[study.slug])
    client.post(step["Location"], {"start": "1"})
    item = study.training_items.get()
    client.post(step["Location"], {"item": str(item.uuid), "payload": json.dumps(payload_for(1))})
    # Then every case, through the rating screen.
    for n in range(3):
        step = client.get(participant_page)
        step = client.get(step["Location"])  # next -> the case
        assignment = Assignment.objects.get(uuid=step["Location"].split("/")[-2])
        rated = client.post(step["Location"], {"payload": json.dumps(payload_for(n)), "version": 0})
        assert rated.status_code == 302
    assert Assignment.objects.filter(rater=participant.membership, status="submitted").count() == 3
    # The end-of-study form, then the completion code and the countdown to the vendor.
    step = client.get(participant_page)
    assert step["Location"] == reverse("annotation:feedback", args=[study.slug])
    sent = client.post(step["Location"], {"suggestions": "Clear."})
    assert sent["Location"] == participant_page
    done = client.get(participant_page)
    assert done.status_code == 200
    html = done.content.decode()
    assert 'id="completion-code">C1234ABC<' in html
    assert f'content="10;url={LINK["completion_url"]}"' in html.replace("&amp;", "&")
    assert 'id="countdown" data-seconds="10"' in html
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    assert assignment.rater_id == participant.membership_id


def test_declining_consent_screens_out_with_its_code_and_releases_the_cases(study):
    link = make_link(study)
    client = Client()
    arrive(client, link, "PIDDECLINE1")
    participant = Participant.objects.get()
    assert Assignment.objects.filter(rater=participant.membership).count() == 3
    client.post(reverse("annotation:participant_decline", args=[study.slug]))
    page = client.get(reverse("annotation:participant", args=[study.slug]))
    assert b'id="screened-out-code">SCREENED1<' in page.content
    assert LINK["screened_out_url"].replace("&", "&amp;").encode() in page.content
    participant.refresh_from_db()
    assert (participant.status, participant.screened_reason) == ("screened_out", "consent")
    held = Assignment.objects.filter(rater=participant.membership)
    assert {a.status for a in held} == {"skipped"}
    assert all(a.released_at for a in held)
    # Back on the rater's own page: the code again, not the cases.
    again = client.get(reverse("annotation:assignments", args=[study.slug]))
    assert again["Location"] == reverse("annotation:participant", args=[study.slug])


def test_failing_the_qualification_screens_out(study):
    make_item(study, kind="qualification", key=payload_for(1))
    OnboardingSettings.objects.update_or_create(study=study, defaults={"max_attempts": 1})
    link = make_link(study)
    client = Client()
    arrive(client, link, "PIDFAIL1")
    client.post(
        reverse("annotation:consent", args=[study.slug]), {"agree": "on", "prior_knowledge": "no"}
    )
    url = reverse("annotation:qualification", args=[study.slug])
    client.post(url, {"start": "1"})
    item = study.training_items.get()
    failed = client.post(url, {"item": str(item.uuid), "payload": json.dumps({})})
    assert failed["Location"] == reverse("annotation:participant", args=[study.slug])
    page = client.get(failed["Location"])
    assert b"You did not qualify" in page.content and b"SCREENED1" in page.content
    assert Participant.objects.get().screened_reason == "qualification"


def test_the_same_id_and_session_resume_on_another_device_and_another_session_is_refused(study):
    link = make_link(study)
    first = Client()
    arrive(first, link, "PIDRESUME1", session="SESSION-A")
    other_device = Client()
    resumed = arrive(other_device, link, "PIDRESUME1", session="SESSION-A")
    assert resumed.status_code == 302
    assert Participant.objects.count() == 1
    assert (
        int(other_device.session["_auth_user_id"]) == Participant.objects.get().membership.user_id
    )
    intruder = Client()
    refused = arrive(intruder, link, "PIDRESUME1", session="SESSION-B")
    assert refused.status_code == 400
    assert b'data-reason="session"' in refused.content
    assert "_auth_user_id" not in intruder.session
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.PARTICIPANT_REFUSED).count() == 1
    assert Participant.objects.count() == 1


def test_quota_closed_link_and_bad_ids_get_a_clear_page_and_change_nothing(study):
    link = make_link(study, max_participants="1")
    arrive(Client(), link, "PIDQUOTA1")
    full = arrive(Client(), link, "PIDQUOTA2")
    assert full.status_code == 400 and b'data-reason="full"' in full.content
    participant_link_close(link=link, actor=study.lead)
    closed = arrive(Client(), link, "PIDQUOTA3")
    assert b'data-reason="link_closed"' in closed.content
    # Someone who started can still finish after closing.
    assert arrive(Client(), link, "PIDQUOTA1").status_code == 302
    for bad in ("", "=cmd|calc", "x" * 101, "a\x00b"):
        with pytest.raises(ParticipantError):
            participant_join(
                link=link, params={"PROLIFIC_PID": bad, "SESSION_ID": "S1"}, signed_in=None
            )
    assert Participant.objects.count() == 1
    assert Client().get(reverse("studies:participant_join", args=["nope"])).status_code == 404


def test_a_participant_of_a_linked_study_is_refused(study):
    other = make_study(cases=2, raters=[], status=Study.Status.OPEN, lead=study.lead, slug="arm-b")
    arrive(Client(), make_link(other), "PIDARM1")
    link = make_link(study, linked_studies=f"{other.slug}")
    refused = arrive(Client(), link, "PIDARM1")
    assert b'data-reason="linked"' in refused.content
    assert not Participant.objects.filter(study=study).exists()
    assert arrive(Client(), link, "PIDARM2").status_code == 302


def test_an_idle_participant_times_out_and_the_case_goes_to_the_next_participant(study):
    Study.objects.filter(pk=study.pk).update(
        raters_per_item=1, consent_text="", disclosure_question=""
    )
    link = make_link(study)
    late, first = Client(), None
    arrive(late, link, "PIDLATE1")
    first = Participant.objects.get().membership
    held = list(Assignment.objects.filter(rater=first).order_by("position"))
    assert len(held) == 3  # k = 1 and one rater: every case is theirs
    # One submitted, then nothing for more than the time-out.
    submitted = held[0]
    late.post(
        reverse("annotation:rate", args=[submitted.uuid]),
        {"payload": json.dumps(payload_for(1)), "version": 0},
    )
    later = timezone.now() + timedelta(minutes=61)
    assert participants_time_out(now=timezone.now()) == 0  # not idle yet
    assert participants_time_out(now=later) == 1
    assert participants_time_out(now=later) == 0  # idempotent
    participant = Participant.objects.get(membership=first)
    assert participant.status == Participant.Status.TIMED_OUT
    # The late submit is told politely; the earlier rating is kept.
    moved = late.post(
        reverse("annotation:rate", args=[held[1].uuid]),
        {"payload": json.dumps(payload_for(2)), "version": 0},
    )
    assert b"moved on to another participant" in moved.content
    assert Assignment.objects.get(pk=submitted.pk).status == "submitted"
    # The next participant gets the released cases, so each case keeps its k = 1.
    arrive(Client(), link, "PIDNEXT1")
    nxt = Participant.objects.get(external_id="PIDNEXT1").membership
    assert sorted(Assignment.objects.filter(rater=nxt).values_list("test_case_id", flat=True)) == (
        sorted(a.test_case_id for a in held[1:])
    )
    ended = late.get(reverse("annotation:participant", args=[study.slug]))
    assert b'data-status="timed_out"' in ended.content


def test_payments_files_are_for_administrators_and_follow_the_bonus_rule(study):
    link = make_link(study)
    client = Client()
    arrive(client, link, "PIDPAY1")
    membership = Participant.objects.get().membership
    # Three cases of ten minutes each, in half an hour in the study.
    Participant.objects.update(joined_at=timezone.now() - timedelta(minutes=30))
    Assignment.objects.filter(rater=membership).update(
        status="submitted", active_seconds=600, submitted_at=timezone.now()
    )
    url = reverse("annotation:participant_payments", args=[study.slug, link.uuid])
    lead = Client()
    lead.force_login(study.lead)
    assert lead.get(url).status_code == 403
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    bulk = admin.get(url + "?format=prolific").content.decode()
    assert bulk == "PIDPAY1,0.75\n"
    full = admin.get(url).content.decode().splitlines()
    assert full[0] == "external_id,status,active_seconds,cases_completed,bonus_GBP"
    assert full[1] == "PIDPAY1,started,1800,3,0.75"
    assert full[-1] == "total,,1800,3,0.75"
    # The coordinators' list shows counts and URLs, never an external id.
    listing = lead.get(reverse("studies:participant_links", args=[study.slug])).content
    assert b"PIDPAY1" not in listing and link.token.encode() in listing


def test_the_bonus_rule_rounds_half_up_to_the_cent():
    link = ParticipantLink(bonus_rule="per_hour", bonus_amount=Decimal("9.00"))
    assert bonus_for(link=link, cases=0, active_seconds=1) == Decimal("0.00")
    assert bonus_for(link=link, cases=0, active_seconds=2) == Decimal("0.01")  # 0.005 up
    assert bonus_for(link=link, cases=0, active_seconds=5400) == Decimal("13.50")
    link.bonus_rule = "per_case"
    assert bonus_for(link=link, cases=3, active_seconds=0) == Decimal("27.00")


def test_identity_erasure_clears_the_vendor_ids(study):
    link = make_link(study)
    arrive(Client(), link, "PIDERASE1")
    participant = Participant.objects.get()
    identity_erase(user=participant.membership.user, reason="request", by=None)
    participant.refresh_from_db()
    assert (participant.external_id, participant.vendor_session_id) == ("", "")
    assert participant.vendor_study_id == ""
    assert participant.membership.pseudonym == "R-01"  # the pseudonym stays


def test_link_settings_are_bounded_and_only_http_urls_are_accepted(study):
    for bad in (
        {"completion_url": "javascript:alert(1)"},
        {"completion_url": "ftp://example.org/x"},
        {"max_participants": "0"},
        {"completion_code": ""},
        {"bonus_amount": "0.001"},
        {"name": "a\x00b"},
        {"preset": "custom", "participant_param": ""},
        {"linked_studies": "no-such-study"},
    ):
        with pytest.raises(ParticipantError):
            make_link(study, **bad)
    assert not ParticipantLink.objects.exists()
    link = make_link(study)
    assert len(link.token) >= 40 and link.token not in str(link.pk)


def test_the_lead_manages_links_on_the_page_and_a_coordinator_only_reads(study):
    coordinator = UserFactory()
    Membership.objects.create(study=study, user=coordinator, role=Membership.Role.COORDINATOR)
    url = reverse("studies:participant_links", args=[study.slug])
    lead = Client()
    lead.force_login(study.lead)
    made = lead.post(url, LINK)
    assert made.status_code == 302
    link = ParticipantLink.objects.get()
    page = lead.get(url).content.decode()
    assert f"/p/{link.token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in page
    other = Client()
    other.force_login(coordinator)
    assert other.get(url).status_code == 200
    assert other.post(url, LINK).status_code == 403
    close = reverse("studies:participant_link_close", args=[study.slug, link.uuid])
    assert other.post(close).status_code == 403
    assert lead.post(close).status_code == 302
    link.refresh_from_db()
    assert not link.is_open


def test_the_next_arrival_releases_the_cases_of_an_idle_participant(study):
    Study.objects.filter(pk=study.pk).update(raters_per_item=1)
    link = make_link(study, timeout_minutes="30")
    arrive(Client(), link, "PIDIDLE1")
    idle = Participant.objects.get()
    long_ago = timezone.now() - timedelta(minutes=31)
    Participant.objects.filter(pk=idle.pk).update(joined_at=long_ago)
    arrive(Client(), link, "PIDNEWCOMER1")
    idle.refresh_from_db()
    assert idle.status == Participant.Status.TIMED_OUT
    newcomer = Participant.objects.get(external_id="PIDNEWCOMER1").membership
    assert Assignment.objects.filter(rater=newcomer).count() == 3
    assert Assignment.objects.filter(rater=idle.membership, released_at__isnull=False).count() == 3


def test_a_screened_out_participant_frees_their_place(study):
    link = make_link(study, max_participants="1")
    first = Client()
    arrive(first, link, "PIDPLACE1")
    assert b'data-reason="full"' in arrive(Client(), link, "PIDPLACE2").content
    first.post(reverse("annotation:participant_decline", args=[study.slug]))
    assert arrive(Client(), link, "PIDPLACE2").status_code == 302


def test_a_participant_cannot_reach_another_participants_work_or_other_studies(study):
    link = make_link(study)
    mine, theirs = Client(), Client()
    arrive(mine, link, "PIDMINE1")
    arrive(theirs, link, "PIDTHEIRS1")
    other = Participant.objects.get(external_id="PIDTHEIRS1").membership
    their_case = Assignment.objects.filter(rater=other).first()
    assert mine.get(reverse("annotation:rate", args=[their_case.uuid])).status_code == 404
    elsewhere = make_study(cases=1, raters=[], status=Study.Status.OPEN, slug="elsewhere")
    assert mine.get(reverse("annotation:assignments", args=[elsewhere.slug])).status_code == 404
    assert mine.get(reverse("annotation:results", args=[study.slug])).status_code == 403
    assert mine.get(reverse("studies:participant_links", args=[study.slug])).status_code == 403


def test_active_time_paid_per_hour_is_never_more_than_the_time_spent_in_the_study(study):
    """Cases open side by side each let a save claim the time since it was assigned: three
    cases submitted ten minutes after joining, each claiming ten minutes, are ten minutes
    in the study, not thirty, and the per-hour bonus pays for ten."""
    Study.objects.filter(pk=study.pk).update(consent_text="", disclosure_question="")
    link = make_link(study, bonus_rule="per_hour", bonus_amount="6.00")
    client = Client()
    arrive(client, link, "PIDCLOCK1")
    participant = Participant.objects.get()
    held = Assignment.objects.filter(rater=participant.membership).order_by("position")
    assert held.count() == 3
    ten_minutes_ago = timezone.now() - timedelta(minutes=10)
    Participant.objects.filter(pk=participant.pk).update(joined_at=ten_minutes_ago)
    held.update(updated_at=ten_minutes_ago)
    for n, assignment in enumerate(held):
        rated = client.post(
            reverse("annotation:rate", args=[assignment.uuid]),
            {"payload": json.dumps(payload_for(n)), "version": 0, "active_seconds": 600},
        )
        assert rated.status_code == 302
    assert held.filter(status="submitted").count() == 3
    url = reverse("annotation:participant_payments", args=[study.slug, link.uuid])
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    row = admin.get(url).content.decode().splitlines()[1].split(",")
    assert row[:2] == ["PIDCLOCK1", "started"]
    seconds, bonus = int(row[2]), Decimal(row[4])
    assert 600 <= seconds < 900  # ten minutes and the test's own time, not 1,800
    assert bonus == bonus_for(link=link, cases=3, active_seconds=seconds) < Decimal("1.50")


def test_linking_one_arm_to_the_other_refuses_a_participant_in_either_order(study):
    """The lead links this arm's link to the other arm: a participant who took part here
    first is refused at the other arm's link as well, though that link names no study."""
    other = make_study(cases=2, raters=[], status=Study.Status.OPEN, lead=study.lead, slug="arm-c")
    other_link = make_link(other)
    link = make_link(study, linked_studies=other.slug)
    assert arrive(Client(), link, "PIDFIRSTHERE").status_code == 302
    refused = arrive(Client(), other_link, "PIDFIRSTHERE")
    assert refused.status_code == 400 and b'data-reason="linked"' in refused.content
    assert not Participant.objects.filter(study=other).exists()
    assert arrive(Client(), other_link, "PIDONLYTHERE").status_code == 302
    # An unrelated study's link is not affected by the pair.
    third = make_study(cases=1, raters=[], status=Study.Status.OPEN, lead=study.lead, slug="arm-x")
    assert arrive(Client(), make_link(third), "PIDFIRSTHERE").status_code == 302


def test_a_lead_links_only_studies_they_coordinate(study):
    """Linking refuses participants both ways, so a lead cannot name another team's study
    (and learn nothing of it: it is "not found" like a study that does not exist)."""
    theirs = make_study(cases=1, raters=[], status=Study.Status.OPEN, slug="their-arm")
    with pytest.raises(ParticipantError, match="not found"):
        make_link(study, linked_studies=theirs.slug)
    assert not ParticipantLink.objects.filter(study=study).exists()
    # A study the lead coordinates (not leads) can be linked.
    Membership.objects.create(study=theirs, user=study.lead, role=Membership.Role.COORDINATOR)
    link = make_link(study, linked_studies=theirs.slug)
    assert list(link.linked_studies.all()) == [theirs]


def test_a_participant_working_through_training_and_the_test_is_not_idle(study):
    """Cases are held from joining, but training and the qualification test come first: a
    participant answering them is active and keeps their cases past the link's time-out."""
    training_item = make_item(study, key=payload_for(1))
    qualification_item = make_item(study, kind="qualification", key=payload_for(1))
    link = make_link(study, timeout_minutes="15")
    client = Client()
    arrive(client, link, "PIDTRAINEE1")
    client.post(
        reverse("annotation:consent", args=[study.slug]), {"agree": "on", "prior_knowledge": "no"}
    )
    participant = Participant.objects.get()
    twenty_minutes_ago = timezone.now() - timedelta(minutes=20)
    Participant.objects.filter(pk=participant.pk).update(joined_at=twenty_minutes_ago)
    participant.membership.consents.update(agreed_at=twenty_minutes_ago)
    # Twenty minutes on the worked examples, the last answered just now.
    answered = client.post(
        reverse("annotation:training_item", args=[study.slug, training_item.uuid]),
        {"payload": json.dumps(payload_for(1))},
    )
    assert answered.status_code == 302 and training_item.answers.count() == 1
    assert participants_time_out() == 0
    # Then twenty minutes on the qualification test, started just now.
    TrainingAnswerModel = training_item.answers.model
    TrainingAnswerModel.objects.update(submitted_at=twenty_minutes_ago)
    started = client.post(reverse("annotation:qualification", args=[study.slug]), {"start": "1"})
    assert started.status_code == 302
    assert participant.membership.qualification_attempts.count() == 1
    assert participants_time_out() == 0
    assert qualification_item.answers.count() == 0
    participant.refresh_from_db()
    assert participant.status == Participant.Status.STARTED
    assert not Assignment.objects.filter(rater=participant.membership, released_at__isnull=False)
    # Idle for the time-out after the last of these: timed out as before.
    assert participants_time_out(now=timezone.now() + timedelta(minutes=16)) == 1


def test_a_participant_cannot_make_an_api_token(study):
    """The session is a participant's only credential: no token outlives it, and no script
    rates through the API in their name."""
    link = make_link(study)
    client = Client()
    arrive(client, link, "PIDTOKEN1")
    # The user menu offers neither tokens nor a password change (they have no password).
    page = client.get(reverse("home"))
    assert page.status_code == 200
    assert reverse("studies:tokens").encode() not in page.content
    assert reverse("password_change").encode() not in page.content
    refused = client.post(reverse("studies:tokens"), {"name": "my script"})
    assert refused.status_code == 400
    assert b"API tokens are not available" in refused.content
    assert not ApiToken.objects.exists()
    # Anyone else signed in still makes one.
    client.force_login(study.lead)
    assert reverse("studies:tokens").encode() in client.get(reverse("home")).content
    assert client.post(reverse("studies:tokens"), {"name": "pipeline"}).status_code == 200
    assert ApiToken.objects.filter(user=study.lead).count() == 1

"""The right to erasure and the retention period: a person's identity goes, their
pseudonymous data stays, and the study's numbers and files do not change."""

import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections
from django.urls import reverse
from django.utils import timezone

from studies.models import (
    IdentityErasure,
    Invitation,
    Membership,
    Study,
    StudyEvent,
    WelfareSettings,
)
from studies.retention import users_due_for_erasure
from studies.selectors import study_setup_events
from studies.services import invitations, rater_status_change, tokens
from studies.services.erasure import ErasureError, identities_purge, identity_erase
from studies.tasks import purge_identities
from tests.payloads import close_and_unblind, study_with_systems, submit_all

from ..factories import PASSWORD, UserFactory, make_study
from .erasure_support import differences, explain, study_outputs

User = get_user_model()


def person(username: str, **fields):
    return UserFactory(
        username=username,
        first_name=fields.get("first_name", "Anna"),
        last_name=fields.get("last_name", "Lindqvist"),
        email=fields.get("email", f"{username}@example.org"),
    )


def rater_of(study: Study, user) -> Membership:
    return study.memberships.get(user=user)


def every_text() -> str:
    """Every free text that could name a person: the audit trail, invitations, erasures."""
    rows = [*StudyEvent.objects.values_list("reason", "detail")]
    rows += [*Invitation.objects.values_list("invitee_name", "note")]
    rows += [*IdentityErasure.objects.values_list("reason", "detail")]
    return repr(rows).casefold()


@pytest.fixture
def rated(db, settings):
    """An unblinded study with ratings by two raters; the first has a name, an e-mail, a
    session, an API token, a personal invitation to another study and mentions in the trail."""
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    anna = person("anna.l")
    study = study_with_systems(cases=6, consented=True, raters=[anna, UserFactory()])
    rater_status_change(
        membership=rater_of(study, anna),
        action="dismiss",
        reason="Talked it over with anna.l (anna.l@example.org); fine.",
        actor=study.lead,
        flags=["speed"],
    )
    submit_all(study)
    close_and_unblind(study)
    other = make_study(slug="later", cases=1, status=Study.Status.DRAFT)
    _, link = invitations.invitation_create(study=other, created_by=other.lead, note="Anna L.")
    invitations.invitation_accept(token=link, user=anna)
    invitations.rater_invite_account(study=other, username="anna.l", actor=other.lead)
    invitations.invitation_create(study=other, created_by=other.lead, note="for Anna Lindqvist")
    _, secret = tokens.api_token_create(user=anna, name="anna's laptop")
    return {"study": study, "anna": anna, "secret": secret, "other": other}


def test_erasure_removes_the_identity_and_changes_no_number_or_file(client, rated):
    study, anna = rated["study"], rated["anna"]
    client.force_login(anna)
    signed_in = client.cookies[settings.SESSION_COOKIE_NAME].value
    since = timezone.now()
    before = study_outputs(study, since=since)

    result = identity_erase(user=anna, reason="Request by e-mail from anna.l", by=None)

    after = study_outputs(study, since=since)
    assert differences(before, after) == [], explain(before, after)
    anna.refresh_from_db()
    assert anna.username.startswith("erased-") and anna.username == result.username
    assert (anna.first_name, anna.last_name, anna.email) == ("", "", "")
    assert not anna.has_usable_password() and not anna.is_active
    # No sign-in: not with the password, not with the old session, not with the token.
    assert not client.login(username="anna.l", password=PASSWORD)
    assert not client.login(username=anna.username, password=PASSWORD)
    assert not Session.objects.filter(session_key=signed_in).exists()
    client.cookies[settings.SESSION_COOKIE_NAME] = signed_in
    assert client.get(reverse("home")).status_code == 302  # to the sign-in page
    assert tokens.api_token_user(secret=rated["secret"]) is None
    assert anna.api_tokens.get().revoked_at is not None
    # Nothing names her; her pseudonym and ratings stay.
    text = every_text()
    assert "anna.l" not in text and "lindqvist" not in text and "example.org" not in text
    membership = rater_of(study, anna)
    assert membership.pseudonym == "R-01" and membership.assignments.exists()
    erased = StudyEvent.objects.get(kind=StudyEvent.Kind.IDENTITY_ERASED, study=study)
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.IDENTITY_ERASED).count() == 2
    assert erased.membership == membership and erased.detail["pseudonym"] == "R-01"
    assert erased.reason == "Request by e-mail from [erased]"
    record = IdentityErasure.objects.get(user=anna)
    assert record.detail["pseudonyms"] == [f"R-01 in {study.slug}", "R-01 in later"]
    assert not record.automatic
    dismissed = StudyEvent.objects.get(kind=StudyEvent.Kind.RATER_FLAG_DISMISSED)
    assert dismissed.reason == "Talked it over with [erased] ([erased]); fine."
    assert Invitation.objects.filter(note="for [erased]").exists()
    # The link she used stays a link (its note gone), the personal invitation personal.
    used = Invitation.objects.get(used_by=anna)
    assert not used.is_personal and used.note == ""
    assert Invitation.objects.get(invitee_name="[erased]").is_personal


def test_a_second_erasure_does_nothing_and_says_so(rated):
    anna = rated["anna"]
    first = identity_erase(user=anna, reason="request")
    events = StudyEvent.objects.count()
    again = identity_erase(user=anna, reason="request again")
    assert again.already and not first.already
    assert "Already erased" in again.summary()
    anna.refresh_from_db()
    assert anna.username == first.username
    assert IdentityErasure.objects.count() == 1 and StudyEvent.objects.count() == events


def test_a_mention_inside_another_word_is_left_alone(db):
    study = make_study(slug="words", cases=1, raters=[person("ann", first_name="", last_name="")])
    membership = study.memberships.get(role=Membership.Role.RATER)
    rater_status_change(
        membership=membership,
        action="dismiss",
        reason="Joanna and ann agreed",
        actor=study.lead,
        flags=["speed"],
    )
    identity_erase(user=membership.user, reason="request")
    dismissed = StudyEvent.objects.get(kind=StudyEvent.Kind.RATER_FLAG_DISMISSED)
    assert dismissed.reason == "Joanna and [erased] agreed"


def test_administrators_leads_and_a_missing_reason_are_refused_and_nothing_changes(db):
    study = make_study(slug="refusals", cases=1, raters=[UserFactory(username="rita")])
    admin = UserFactory(username="boss", is_staff=True)
    rita = User.objects.get(username="rita")
    for user, reason, says in (
        (admin, "request", "administrator account"),
        (study.lead, "request", "leads a study"),
        (rita, "  ", "Give the reason"),
    ):
        with pytest.raises(ErasureError, match=says):
            identity_erase(user=user, reason=reason)
    assert not IdentityErasure.objects.exists()
    assert User.objects.filter(username__in=["boss", "rita", study.lead.username]).count() == 3


def test_the_studys_history_tells_its_coordinators_by_pseudonym_only(db):
    study = make_study(slug="history", cases=1, raters=[person("hana")])
    hana = User.objects.get(username="hana")
    admin = UserFactory(username="admin-h", is_staff=True)
    identity_erase(user=hana, reason="request of hana", by=admin)
    history = [(row["who"], row["what"]) for row in study_setup_events(study=study)]
    assert ("admin-h", "R-01: rater identity erased (request of [erased])") in history
    automatic = make_study(slug="history-2", cases=1, raters=[UserFactory(username="ivo")])
    identity_erase(user=User.objects.get(username="ivo"), reason="retention", automatic=True)
    assert study_setup_events(study=automatic)[0]["who"] == "(retention period)"


# Retention ---------------------------------------------------------------------------------


def closed(study: Study, *, days_ago: int, retention: int | None) -> Study:
    Study.objects.filter(pk=study.pk).update(
        status=Study.Status.CLOSED, closed_at=timezone.now() - timedelta(days=days_ago)
    )
    WelfareSettings.objects.update_or_create(study=study, defaults={"retention_days": retention})
    study.refresh_from_db()
    return study


@pytest.fixture
def raters(db):
    return {name: UserFactory(username=name) for name in ("due", "early", "kept", "busy", "two")}


def test_only_people_whose_every_study_has_passed_its_retention_are_due(raters):
    ended = closed(
        make_study(slug="ended", cases=1, raters=[raters["due"], raters["busy"], raters["two"]]),
        days_ago=40,
        retention=30,
    )
    closed(make_study(slug="recent", cases=1, raters=[raters["early"]]), days_ago=10, retention=30)
    closed(make_study(slug="keeps", cases=1, raters=[raters["kept"]]), days_ago=400, retention=None)
    make_study(slug="running", cases=1, raters=[raters["busy"]])  # open
    closed(make_study(slug="ended-too", cases=1, raters=[raters["two"]]), days_ago=31, retention=30)
    due = users_due_for_erasure()
    assert [user.username for user, _ in due] == ["due", "two"]
    assert due[1][1] == ["R-03 in ended", "R-01 in ended-too"]
    assert ended.lead not in [user for user, _ in due]

    listed = identities_purge(dry_run=True)
    assert len(listed) == 2 and not IdentityErasure.objects.exists()
    purge_identities()  # what beat runs each day
    erased = IdentityErasure.objects.order_by("user_id")
    assert [e.user_id for e in erased] == [raters["due"].pk, raters["two"].pk]
    assert all(e.automatic and e.reason == "retention period ended" for e in erased)
    assert users_due_for_erasure() == []
    assert "studies.tasks.purge_identities" in {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }


# Commands ----------------------------------------------------------------------------------


def test_the_erase_identity_command_prints_what_it_erased_and_fails_clearly(db, capsys):
    study = make_study(slug="cmd", cases=1, raters=[person("carla")])
    call_command("erase_identity", "carla", "--reason", "request of 1 December")
    out = capsys.readouterr().out
    assert out.startswith("carla is now erased-") and f"R-01 in {study.slug}" in out
    assert "1 account" in out and "API tokens" in out
    with pytest.raises(CommandError, match="There is no user 'nobody'"):
        call_command("erase_identity", "nobody", "--reason", "x")
    with pytest.raises(CommandError, match="administrator account"):
        call_command("erase_identity", UserFactory(is_staff=True).username, "--reason", "x")
    with pytest.raises(CommandError, match="reason"):
        call_command("erase_identity", "carla")


def test_purge_identities_lists_whom_it_erases(raters, capsys):
    closed(make_study(slug="p", cases=1, raters=[raters["due"]]), days_ago=9, retention=7)
    call_command("purge_identities", "--dry-run")
    assert (
        capsys.readouterr().out
        == "Would erase the identity of R-01 in p.\nWould erase 1 identity.\n"
    )
    assert not IdentityErasure.objects.exists()
    call_command("purge_identities")
    out = capsys.readouterr().out
    assert out.startswith("Erased the identity of R-01 in p as erased-")
    assert out.endswith("Erased 1 identity.\n")
    call_command("purge_identities")
    assert capsys.readouterr().out == "Erased 0 identities.\n"


# The administrators' page ------------------------------------------------------------------


def test_an_administrator_erases_a_rater_after_confirming(client, db):
    study = make_study(slug="page", cases=1, raters=[person("dora")])
    admin = UserFactory(username="admin-a", is_staff=True)
    url = reverse("studies:erasure")
    client.force_login(admin)
    assert "No identity has been erased yet" in client.get(url).content.decode()

    missing = client.post(url, {"username": "dora", "reason": ""})
    assert missing.status_code == 400 and not IdentityErasure.objects.exists()
    check = client.post(url, {"username": "dora@example.org", "reason": "her request"})
    assert check.status_code == 200 and not IdentityErasure.objects.exists()
    page = check.content.decode()
    assert "Erase this identity?" in page and "R-01" in page and study.name in page
    done = client.post(url, {"username": "dora", "reason": "her request", "confirm": "yes"})
    assert done.status_code == 302
    record = IdentityErasure.objects.get()
    assert record.erased_by == admin and record.reason == "her request"
    listing = client.get(url).content.decode()
    assert record.user.username in listing and "R-01 in page" in listing
    assert "dora" not in listing


def test_coordinators_never_reach_the_erasure_page(client, db):
    study = make_study(slug="coord", cases=1, raters=[person("eve")])
    client.force_login(study.lead)
    url = reverse("studies:erasure")
    assert client.get(url).status_code == 403
    assert client.post(url, {"username": "eve", "reason": "x", "confirm": "yes"}).status_code == 403
    assert not IdentityErasure.objects.exists()


def test_an_unknown_account_or_an_administrator_is_refused_on_the_page(client, db):
    admin = UserFactory(username="admin-b", is_staff=True)
    client.force_login(admin)
    url = reverse("studies:erasure")
    unknown = client.post(url, {"username": "ghost", "reason": "r", "confirm": "yes"})
    assert unknown.status_code == 400 and "There is no account" in unknown.content.decode()
    staff = client.post(url, {"username": "admin-b", "reason": "r", "confirm": "yes"})
    assert staff.status_code == 400 and "administrator rights" in staff.content.decode()
    assert not IdentityErasure.objects.exists()


# At the same time ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_erasures_at_once_erase_once():
    if connection.vendor != "postgresql":
        pytest.skip("needs row locks and concurrent connections")
    frank = person("frank")
    make_study(slug="first", cases=1, raters=[frank])
    make_study(slug="second", cases=1, raters=[frank])
    barrier = threading.Barrier(2)
    results, errors = [], []

    def erase():
        try:
            barrier.wait(timeout=30)
            results.append(identity_erase(user=frank, reason="request"))
        except Exception as error:  # the test asserts there were none
            errors.append(error)
        finally:
            connections.close_all()

    runs = [threading.Thread(target=erase, daemon=True) for _ in range(2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=60)
    assert not errors and len(results) == 2
    assert sorted(result.already for result in results) == [False, True]
    assert IdentityErasure.objects.count() == 1
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.IDENTITY_ERASED).count() == 2
    frank.refresh_from_db()
    assert frank.username == next(r.username for r in results if not r.already)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_commands_as_a_shell_sees_them():
    """Help, a clear message and a non-zero exit status; a success exits 0."""
    from tests.processes import manage

    for command, says in (
        ("erase_identity", "right to erasure"),
        ("purge_identities", "--dry-run"),
    ):
        shown = manage(command, "--help")
        assert shown.returncode == 0 and says in " ".join(shown.stdout.split())
    unknown = manage("erase_identity", "nobody", "--reason", "request")
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == "CommandError: There is no user 'nobody'."
    no_reason = manage("erase_identity", "nobody")
    assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
    UserFactory(username="gina")
    erased = manage("erase_identity", "gina", "--reason", "request")
    assert erased.returncode == 0 and erased.stdout.startswith("gina is now erased-")
    again = manage("purge_identities", "--dry-run")
    assert (again.returncode, again.stdout) == (0, "Would erase 0 identities.\n")

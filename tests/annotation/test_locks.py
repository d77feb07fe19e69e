"""Writes that run at the same time: no rater waits for a long import, no deadlock, and a
double submit is answered as a success. Real threads on PostgreSQL (``studies.locks``)."""

import threading

import pytest
from django.db import connection, connections

from annotation import services, worksheets
from annotation.models import Assignment, ConsentRecord, Rating
from annotation.services import rating_imports
from annotation.services.participation import consent_record, withdrawal_record
from studies.errors import ApplicationError
from studies.models import Invitation, Membership, Study, StudyEvent
from studies.services import invitations, study_close
from tests.payloads import full_marks_payload, payload_for

from ..factories import UserFactory, make_study
from .test_worksheets import export_bytes

pytestmark = pytest.mark.django_db(transaction=True)

JOIN = 60  # seconds: generous, only so that a broken lock fails the test instead of hanging


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database with row locks and concurrent connections")


class Run(threading.Thread):
    """Call ``target`` in a thread with its own connection; keeps the result or the error."""

    def __init__(self, target, *, start: threading.Barrier | None = None):
        super().__init__(daemon=True)
        self.target, self.barrier = target, start
        self.result = self.error = None

    def run(self):
        try:
            if self.barrier is not None:
                self.barrier.wait(timeout=JOIN)
            self.result = self.target()
        except Exception as error:  # each test asserts what it allows
            self.error = error
        finally:
            connections.close_all()


def together(*targets):
    """Run the targets at the same moment; wait for all; return the finished runs."""
    barrier = threading.Barrier(len(targets))
    runs = [Run(target, start=barrier) for target in targets]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=JOIN)
    assert not any(run.is_alive() for run in runs), "a write never finished (a deadlock?)"
    return runs


def refused_or_done(run) -> bool:
    """Finished, or refused with a message for the user: never a 500-kind error."""
    return run.error is None or isinstance(run.error, ApplicationError)


def answers(rater: Membership) -> dict:
    return {
        a.test_case_id: payload_for(n)
        for n, a in enumerate(Assignment.objects.filter(rater=rater).order_by("pk"))
    }


@pytest.fixture
def busy_study():
    study = make_study(slug="busy", cases=30, raters=[UserFactory(), UserFactory()])
    return study, study.memberships.get(pseudonym="R-01"), study.memberships.get(pseudonym="R-02")


@pytest.fixture
def held_import(monkeypatch):
    """Makes a worksheet import stop after its first case until ``release`` is set."""
    held, release = threading.Event(), threading.Event()
    store = rating_imports._submissions_store

    def slow_store(**kwargs):
        result = store(**kwargs)
        if kwargs["source"] == Assignment.Source.WORKSHEET and not held.is_set():
            held.set()
            release.wait(timeout=JOIN)
        return result

    # Where the worksheet import looks it up.
    monkeypatch.setattr(rating_imports, "_submissions_store", slow_store)
    return held, release


# A long import does not hold the raters up -----------------------------------------------


def test_an_autosave_completes_while_a_worksheet_import_in_the_same_study_runs(
    busy_study, held_import
):
    study, r01, r02 = busy_study
    held, release = held_import
    importing = Run(
        lambda: services.ratings_import(
            rater=r01, answers=answers(r01), actor=study.lead, source_name="big.csv"
        )
    )
    importing.start()
    try:
        assert held.wait(timeout=JOIN)
        case = r02.assignments.first()
        for save in (
            lambda: services.draft_save(assignment=case, payload={}, expected_version=0),
            lambda: services.rating_submit(
                assignment=case, payload=full_marks_payload(), expected_version=1
            ),
        ):
            rater_write = Run(save)
            rater_write.start()
            rater_write.join(timeout=JOIN)
            assert not rater_write.is_alive(), "the rater's save waited for the import"
            assert rater_write.error is None
        assert importing.is_alive()  # still held mid-run: the save did not wait for it
    finally:
        release.set()
        importing.join(timeout=JOIN)
    assert importing.error is None
    assert Rating.objects.filter(assignment__rater=r01).count() == 30 * 2
    assert Rating.objects.filter(assignment__rater=r02).count() == 2


def test_closing_the_study_waits_for_a_running_import_and_no_rating_follows_it(
    busy_study, held_import
):
    study, r01, r02 = busy_study
    held, release = held_import
    importing = Run(
        lambda: services.ratings_import(
            rater=r01, answers=answers(r01), actor=study.lead, source_name="big.csv"
        )
    )
    importing.start()
    try:
        assert held.wait(timeout=JOIN)
        closing = Run(lambda: study_close(study=study, actor=study.lead))
        closing.start()
        closing.join(timeout=2)
        # The import holds the study shared: the close cannot have gone through.
        assert closing.is_alive()
        assert Study.objects.get(pk=study.pk).status == Study.Status.OPEN
        # A close waiting its turn does not hold raters up either.
        case = r02.assignments.last()
        saving = Run(lambda: services.draft_save(assignment=case, payload={}, expected_version=0))
        saving.start()
        saving.join(timeout=JOIN)
        assert not saving.is_alive() and saving.error is None
    finally:
        release.set()
        importing.join(timeout=JOIN)
        closing.join(timeout=JOIN)
    assert importing.error is None and closing.error is None
    assert Rating.objects.filter(assignment__rater=r01).count() == 30 * 2
    kinds = list(
        StudyEvent.objects.filter(study=study).order_by("pk").values_list("kind", flat=True)
    )
    assert kinds.index("worksheet_imported") < kinds.index("closed")
    with pytest.raises(services.RatingClosedError):
        services.rating_submit(
            assignment=r02.assignments.first(), payload=full_marks_payload(), expected_version=0
        )
    with pytest.raises(services.RatingClosedError):
        services.ratings_import(rater=r01, answers=answers(r01), actor=None, source_name="x")


# The deadlock pairs ---------------------------------------------------------------------


def test_an_import_and_the_raters_own_submits_at_once(busy_study):
    """Import (study, rater, assignments) against submits of the same rater's cases."""
    study, r01, _ = busy_study
    for round_ in range(3):
        cases = list(r01.assignments.order_by("-pk")[:3])  # the import locks these last
        payload = payload_for(round_ + 7)
        runs = together(
            lambda: services.ratings_import(
                rater=r01, answers=answers(r01), actor=None, source_name="sheet.csv"
            ),
            *[
                lambda case=case, payload=payload: services.rating_submit(
                    assignment=case, payload=payload, expected_version=case.version
                )
                for case in cases
            ],
        )
        assert all(refused_or_done(run) for run in runs), [run.error for run in runs]
        assert runs[0].error is None
        for case in Assignment.objects.filter(rater=r01):
            assert case.status == Assignment.Status.SUBMITTED
            assert case.ratings.count() == 2
        for case in cases:
            case.refresh_from_db()


@pytest.mark.parametrize("data", ["keep", "delete"])
def test_a_withdrawal_and_submits_at_once(busy_study, data):
    study, _, r02 = busy_study
    cases = list(r02.assignments.order_by("pk")[:4])
    runs = together(
        lambda: withdrawal_record(rater=r02, data=data, reason=""),
        *[
            lambda case=case: services.rating_submit(
                assignment=case, payload=full_marks_payload(), expected_version=0
            )
            for case in cases
        ],
    )
    assert all(refused_or_done(run) for run in runs), [run.error for run in runs]
    assert runs[0].error is None
    for run in runs[1:]:  # a submit either came first, or found the rater withdrawn
        assert run.error is None or isinstance(run.error, services.RatingClosedError)
    r02.refresh_from_db()
    assert r02.status == Membership.Status.WITHDRAWN
    kept = Rating.objects.filter(assignment__rater=r02).count()
    submitted_first = sum(1 for run in runs[1:] if run.error is None)
    assert kept == (0 if data == "delete" else 2 * submitted_first)


def test_invitation_accepts_of_links_and_of_personal_invitations_at_once_join_distinctly():
    study = make_study(slug="joins", cases=2)
    tokens = [invitations.invitation_create(study=study, created_by=study.lead)[1] for _ in "abc"]
    joining = [UserFactory() for _ in tokens]
    invited = [UserFactory() for _ in range(3)]
    for user in invited:
        invitations.rater_invite_account(study=study, username=user.username, actor=study.lead)
    hashes = {
        invitation.invitee_id: invitation.token_hash
        for invitation in Invitation.objects.filter(study=study, invitee__in=invited)
    }
    runs = together(
        *[
            lambda token=token, user=user: invitations.invitation_accept(token=token, user=user)
            for token, user in zip(tokens, joining, strict=True)
        ],
        *[
            lambda user=user: invitations.invitation_accept_personal(
                invitation_hash=hashes[user.pk], user=user
            )
            for user in invited
        ],
    )
    assert [run.error for run in runs] == [None] * 6
    pseudonyms = sorted(run.result.pseudonym for run in runs)
    assert pseudonyms == [f"R-{n:02d}" for n in range(1, 7)]
    assert study.memberships.filter(role=Membership.Role.RATER).count() == 6


# Double submits -------------------------------------------------------------------------


def test_a_double_clicked_consent_records_one_consent():
    study = make_study(slug="consent", cases=1, raters=[UserFactory()])
    rater = study.memberships.get(pseudonym="R-01")
    runs = together(*[lambda: consent_record(rater=rater, agreed=True, prior_knowledge=False)] * 2)
    assert [run.error for run in runs] == [None, None]
    assert runs[0].result.pk == runs[1].result.pk
    assert ConsentRecord.objects.filter(rater=rater).count() == 1
    assert StudyEvent.objects.filter(study=study, kind="rater_consented").count() == 1


def test_two_coordinators_inviting_the_same_person_at_once_invite_them_once():
    study = make_study(slug="adds", cases=1)
    person = UserFactory()
    runs = together(
        *[
            lambda: invitations.rater_invite_account(
                study=study, username=person.username, actor=study.lead
            )
        ]
        * 2
    )
    assert [run.error for run in runs] == [None, None]
    [invitation] = Invitation.objects.filter(study=study, invitee=person)
    invitations.invitation_accept_personal(invitation_hash=invitation.token_hash, user=person)
    assert list(study.memberships.filter(user=person).values_list("pseudonym", flat=True)) == [
        "R-01"
    ]


def test_the_same_worksheet_imported_twice_at_once_is_recorded_once(busy_study):
    study, r01, _ = busy_study
    data = export_bytes(study, "worksheet-csv", rater="R-01").decode("utf-8-sig")
    data = data.replace(",,,,,,,,", ",0,0,0,0,0,0,Low,").encode()
    runs = together(
        *[
            lambda: worksheets.worksheet_import(
                study=study, pseudonym="R-01", filename="sheet.csv", data=data
            )
        ]
        * 2
    )
    assert [run.error for run in runs] == [None, None]
    assert sorted(run.result.updated for run in runs) == [0, 30]  # the second found the first
    assert Rating.objects.filter(assignment__rater=r01).count() == 30 * 2
    assert StudyEvent.objects.filter(study=study, kind="worksheet_imported").count() == 2
    assert not r01.assignments.filter(revisions__isnull=False).exists()


def test_a_double_clicked_invitation_join_adds_the_person_once():
    study = make_study(slug="join-twice", cases=1)
    token = invitations.invitation_create(study=study, created_by=study.lead)[1]
    person = UserFactory()
    runs = together(*[lambda: invitations.invitation_accept(token=token, user=person)] * 2)
    assert [run.error for run in runs] == [None, None]
    assert runs[0].result.pk == runs[1].result.pk
    assert study.memberships.get(user=person).pseudonym == "R-01"
    # Someone else cannot use the spent link.
    with pytest.raises(invitations.InvitationError):
        invitations.invitation_accept(token=token, user=UserFactory())

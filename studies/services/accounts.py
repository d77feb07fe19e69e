"""Accounts an administrator makes for raters (the API's ``accounts/``, issue 26).

The account is made for one study and joins it as a rater at once: an administrator
already sees everything in every study, so there is no consent of someone else's to ask
(unlike a coordinator naming an existing account, which only invites it). The account
gets no password: hashing one costs most of a second by design, and no administrator
should know a rater's password. The person sets their own through a one-time link
(``password_set_link_parts``), as after a password reset.
"""

import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from studies.access import COORDINATORS_GROUP
from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import Membership, Study, StudyEvent

from .membership import membership_add

MAX_USERNAME = 150
USERNAME_TAKEN = "An account with that username exists already."


def _clean_username(username: str) -> str:
    accounts = get_user_model()
    username = (username or "").strip()
    if not username:
        raise StudySetupError("Give the new account's username.")
    if len(username) > MAX_USERNAME:
        raise StudySetupError(f"A username has at most {MAX_USERNAME} characters.")
    try:
        accounts.username_validator(username)
    except ValidationError as error:
        raise StudySetupError(" ".join(error.messages)) from None
    # Case-insensitive, as Django's own sign-up form: "Ana" and "ana" are one person.
    if accounts.objects.filter(**{f"{accounts.USERNAME_FIELD}__iexact": username}).exists():
        raise StudySetupError(USERNAME_TAKEN)
    return username


def _clean_email(email: str) -> str:
    email = (email or "").strip()
    if len(email) > 254:
        raise StudySetupError("An email address has at most 254 characters.")
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise StudySetupError("That is not an email address.") from None
    return email


@transaction.atomic
def rater_account_create(
    *, study: Study, username: str, email: str = "", actor: User
) -> Membership:
    """Make an account without a password and add it to ``study`` as a rater (the next
    pseudonym), recorded in the study's history; all or nothing."""
    if not actor.is_staff:
        raise StudySetupError("Only administrators create accounts.")
    username, email = _clean_username(username), _clean_email(email)
    # The study first (the lock order: an account is new, so no other lock holds it).
    study = study_lock(study.pk, exclusive=True)
    if study.is_closed:
        raise StudySetupError("The study is closed; no one can join it now.")
    try:
        # The username was free when checked; the same one asked for at once (a retry,
        # another administrator) may be taken in between, and the unique index says so.
        with transaction.atomic():
            user = get_user_model().objects.create_user(
                username=username, email=email, password=None
            )
    except IntegrityError:
        raise StudySetupError(USERNAME_TAKEN) from None
    membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
    # The history names the pseudonym, never the account: coordinators read it.
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.RATER_ACCOUNT_CREATED,
        membership=membership,
    )
    return membership


def imported_rater_create(*, study: Study, name: str) -> Membership:
    """A rater known only by a file's name (ratings imported by system): a pseudonymous
    member without a usable account (inactive, no password), the name kept as
    ``Membership.external_name`` (which identity erasure clears)."""
    user = get_user_model().objects.create_user(
        username=f"imported-{uuid.uuid4().hex[:20]}", password=None, is_active=False
    )
    membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
    membership.external_name = name
    membership.save(update_fields=["external_name"])
    return membership


def demo_account_ensure(*, username: str, password_hash: str, staff: bool = False) -> User:
    """The demo's account ``username`` (made with ``password_hash`` if new, an administrator
    if ``staff``; the demo's coordinator joins the Coordinators group); safe to run twice."""
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"is_staff": staff, "is_superuser": staff}
    )
    if created:
        user.password = password_hash
        user.save(update_fields=["password"])
    if username == "coordinator":
        user.groups.add(Group.objects.get_or_create(name=COORDINATORS_GROUP)[0])
    return user


def password_set_link_parts(*, user: User) -> tuple[str, str]:
    """(uidb64, token) for Django's password-reset confirmation page: the one-time link
    with which a new account's person chooses a password. It stops working once used,
    and after ``PASSWORD_RESET_TIMEOUT``."""
    return urlsafe_base64_encode(force_bytes(user.pk)), default_token_generator.make_token(user)

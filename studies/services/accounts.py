"""Accounts an administrator makes for raters (the API's ``accounts/``, issue 26).

The account is made for one study and joins it as a rater at once: an administrator
already sees everything in every study, so there is no consent of someone else's to ask
(unlike a coordinator naming an existing account, which only invites it). The account
gets no password: hashing one costs most of a second by design, and no administrator
should know a rater's password. The person sets their own through a one-time link
(``password_set_link_parts``), as after a password reset, which is e-mailed to them and
never shown to the administrator: an administrator reads the texts by system, and with the
link they could sign in as the rater and read the same texts under their labels (issue 38).
"""

import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
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
    if not email:
        # The link to choose a password goes to the person, never to the administrator.
        raise StudySetupError(
            "Give the person's e-mail address: the link with which they choose their "
            "password is sent there (no one else is shown it)."
        )
    if len(email) > 254:
        raise StudySetupError("An email address has at most 254 characters.")
    try:
        validate_email(email)
    except ValidationError:
        raise StudySetupError("That is not an email address.") from None
    return email


@transaction.atomic
def rater_account_create(
    *, study: Study, username: str, email: str, actor: User, site: str
) -> Membership:
    """Make an account without a password and add it to ``study`` as a rater (the next
    pseudonym), recorded in the study's history, and e-mail the person the one-time link
    with which they choose their password (``site``: "https://host", the link's origin),
    once the account is committed; all or nothing."""
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
    membership = membership_add(
        study=study,
        user=user,
        role=Membership.Role.RATER,
        joined_via=Membership.JoinedVia.ACCOUNT_MADE,
        joined_by=actor,
    )
    # The history names the pseudonym, never the account: coordinators read it.
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.RATER_ACCOUNT_CREATED,
        membership=membership,
    )
    transaction.on_commit(lambda: password_link_send(user=user, site=site))
    return membership


def password_link_send(*, user: User, site: str) -> None:
    """E-mail a new account's person the one-time link to choose their password."""
    uid, token = password_set_link_parts(user=user)
    context = {"user": user, "site": site, "uid": uid, "token": token}
    send_mail(
        subject="Your Concord account: choose your password",
        message=render_to_string("registration/account_created_email.txt", context),
        from_email=None,
        recipient_list=[user.email],
    )


def imported_rater_create(*, study: Study, name: str) -> Membership:
    """A rater known only by a file's name (ratings imported by system): a pseudonymous
    member without a usable account (inactive, no password), the name kept as
    ``Membership.external_name`` (which identity erasure clears)."""
    user = get_user_model().objects.create_user(
        username=f"imported-{uuid.uuid4().hex[:20]}", password=None, is_active=False
    )
    membership = membership_add(
        study=study, user=user, role=Membership.Role.RATER, joined_via=Membership.JoinedVia.IMPORTED
    )
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

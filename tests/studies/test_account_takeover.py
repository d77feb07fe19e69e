"""No one who reads the texts by system takes over a rater (issue 38).

An administrator (and a study's coordinators) sees which system wrote each response; with
a rater's or adjudicator's password or session they would read the same texts under their
labels, and so hold the key. The test enumerates every way an account can gain a password
or a session: every URL of the resolver and every operation of the API's served schema
whose name or path speaks of passwords, tokens, sessions, sign-in, invitations, accounts
or joining, and every URL of the admin site. An administrator then tries each against a
rater and an adjudicator of an open study: every enumerated URL with GET and with a POST
whose body names the victims (their user name, an address the administrator controls, a
password the administrator knows), and the routes that took a rater over before this
issue with the exact bodies that did. Afterwards nothing of the victims' may have changed
or reached the administrator: their passwords and addresses, their sessions and tokens,
and no answer or e-mail to the administrator carries a link to set their password.

A new path joins the sweep by its name, without anyone naming it; it must also be given
a line in ``WHY`` (why it cannot hand over a password or a session), so that someone
thinks about it once.
"""

import json
import re
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from studies.models import ApiToken, Membership, Study
from studies.services import tokens
from studies.services.invitations import invitation_create
from studies.services.membership import membership_add
from studies.services.participants import participant_link_save
from tests.factories import UserFactory, make_study
from tests.urls_enumeration import project_urls, schema_operations

WORDS = re.compile(
    r"password|token|session|log_?in|log_?out|sign[-_]?(in|up)|invit|account|join|"
    r"participant|impersonat|hijack|become|su_?user|set[-_]password",
    re.IGNORECASE,
)
PASSWORDS = {"ana": "ana's own Passphrase 71", "adj": "adj's own Passphrase 72"}
BOSS_PASSWORD = "the boss's Passphrase 9"
BOSS_MAIL = "boss@example.org"
# What an administrator would send, everywhere a body is taken.
ATTACK_FIELDS = {
    "username": "ana",
    "email": BOSS_MAIL,
    "password": BOSS_PASSWORD,
    "password1": "taken Over Passphrase 5",
    "password2": "taken Over Passphrase 5",
    "new_password1": "taken Over Passphrase 5",
    "new_password2": "taken Over Passphrase 5",
    "usable_password": "true",
    "old_password": BOSS_PASSWORD,
    "study": "takeover",
    "role": "rater",
    "user": "ana",
    "name": "ana",
}

# Why each enumerated path cannot hand an administrator a rater's password or session.
# The sweep below tries every one of them all the same.
OWN_ACCOUNT = "acts on the signed-in account only"
WHY = {
    "login": "signs in with the account's own password only",
    "admin_login": "signs in with the account's own password only",
    "admin:login": "signs in with the account's own password only",
    "logout": OWN_ACCOUNT,
    "admin:logout": OWN_ACCOUNT,
    "password_change": OWN_ACCOUNT,
    "password_change_done": OWN_ACCOUNT,
    "admin:password_change": OWN_ACCOUNT,
    "admin:password_change_done": OWN_ACCOUNT,
    "password_reset": "e-mails the link to the address on file, which no administrator "
    "can change for a rater (AccountAdmin)",
    "password_reset_done": "a page of text",
    "password_reset_confirm": "needs the e-mailed token",
    "password_reset_complete": "a page of text",
    "admin:auth_user_password_change": "refused for raters and adjudicators of a study not "
    "yet unblinded (AccountAdmin)",
    "admin:auth_user_change": "the e-mail address is read-only for them (AccountAdmin)",
    "admin:auth_user_add": "a new account: a second identity, not a takeover (docs/blinding.md)",
    "admin:auth_user_changelist": "a list",
    "admin:auth_user_history": "a list",
    "admin:auth_user_delete": "removes an account; gives no session",
    "admin:studies_apitoken_changelist": "a list, without secrets",
    "admin:studies_apitoken_add": "tokens are made by their owner only (no add permission)",
    "admin:studies_apitoken_change": "read-only",
    "admin:studies_apitoken_history": "a list",
    "admin:studies_apitoken_delete": "no delete permission",
    "studies:tokens": "makes a token for the signed-in account only",
    "studies:token_revoke": OWN_ACCOUNT,
    "api:accounts": "a new account's password link is e-mailed to the person, never answered",
    "api:invitation_accept": "joins the token's owner; an administrator is refused as a rater",
    "studies:invitation": "joins the signed-in account (an administrator is refused) or a new "
    "one: a second identity; a study may refuse open links (bound_invitations_only)",
    "studies:invitation_respond": "the invitee's own personal invitation only",
    "studies:invitation_revoke": "removes an unused link",
    "api:invitations": "makes a link for a new person: a second identity (see above)",
    "api:invitation_revoke": "removes an unused link",
    "annotation:invitation_create": "makes a link for a new person: a second identity",
    "studies:participant_join": "makes a new participant or resumes one with the vendor's "
    "session id; refused to a browser signed in as an administrator or coordinator",
    "studies:participant_links": "the lead's settings",
    "studies:participant_link": "the lead's settings",
    "studies:participant_link_close": "closes a link",
    "api:participant_links": "the lead's settings",
    "api:participant_link": "the lead's settings",
    "api:participant_link_close": "closes a link",
    "api:participant_payments": "vendor ids and sums; no session id",
    "annotation:participant": "the signed-in participant's own page",
    "annotation:participant_decline": OWN_ACCOUNT,
    "annotation:participant_finish": OWN_ACCOUNT,
    "annotation:participant_payments": "vendor ids and sums; no session id",
    "annotation:session_restored": "a page of text after signing in again",
}


def _enumerated() -> list[tuple[str, object]]:
    """Every resolver URL whose name or route speaks of passwords, sessions, ...; and every
    admin URL (the admin is where staff reach other people's accounts)."""
    chosen = []
    for name, pattern in project_urls():
        text = f"{name or ''} {pattern.pattern}"
        if (name or "").startswith("admin:") or WORDS.search(text):
            chosen.append((name or "admin:", pattern))
    return chosen


def _needs_reason(name: str) -> bool:
    # Admin URLs of models that are not accounts or tokens are swept but need no line.
    return not name.startswith("admin:") or bool(WORDS.search(name) or "auth_user" in name)


@pytest.fixture
def world(db):
    lead = UserFactory(username="takeover-lead")
    boss = UserFactory(username="boss", email=BOSS_MAIL, is_staff=True, is_superuser=True)
    boss.set_password(BOSS_PASSWORD)
    boss.save()
    study = make_study(lead=lead, slug="takeover", cases=2, status=Study.Status.OPEN)
    victims = {}
    for name, role in (("ana", Membership.Role.RATER), ("adj", Membership.Role.ADJUDICATOR)):
        user = UserFactory(username=name, email=f"{name}@example.org")
        user.set_password(PASSWORDS[name])
        user.save()
        membership_add(study=study, user=user, role=role)
        tokens.api_token_create(user=user, name="own")
        victims[name] = user
    invitation, invitation_token = invitation_create(study=study, created_by=lead)
    link = participant_link_save(
        study=study,
        actor=lead,
        values={"name": "crowd", "completion_code": "DONE", "max_participants": "5"},
    )
    return {
        "study": study, "boss": boss, "victims": victims, "link": link,
        "invitation_token": invitation_token, "token_hash": invitation.token_hash,
    }  # fmt: skip


def _args(pattern, world) -> dict:
    ana = world["victims"]["ana"]
    values = {
        "slug": "takeover",
        "id": str(ana.pk),
        "object_id": str(ana.pk),
        "uidb64": urlsafe_base64_encode(force_bytes(ana.pk)),
        "token": world["invitation_token"],
        "token_hash": world["token_hash"],
        "link_token": world["link"].token,
        "link_uuid": str(world["link"].uuid),
        "token_uuid": str(ApiToken.objects.filter(user=ana).first().uuid),
        "app_label": "auth",
    }
    return {name: values.get(name, str(uuid.uuid4())) for name in pattern.pattern.regex.groupindex}


def _url(name, pattern, world) -> str | None:
    args = _args(pattern, world)
    if name == "admin:":
        return "/admin/anything/"
    try:
        return reverse(name, kwargs=args)
    except Exception:  # a route whose converters these values do not fit
        return None


def _signed_in_boss(world) -> Client:
    client = Client()
    # As stored now: the sweep changes the boss's own password (password_change).
    world["boss"].refresh_from_db()
    client.force_login(world["boss"])
    return client


def _assert_nothing_taken(world, *, seen: list[str]):
    """The victims' passwords, addresses, sessions and tokens as they were, and no link to
    set their password in anything the administrator saw or was sent."""
    uids = {urlsafe_base64_encode(force_bytes(v.pk)) for v in world["victims"].values()}
    for name, victim in world["victims"].items():
        victim.refresh_from_db()
        assert victim.check_password(PASSWORDS[name]), f"{name}'s password was changed"
        assert victim.email == f"{name}@example.org", f"{name}'s address was changed"
        assert ApiToken.objects.filter(user=victim).count() == 1, f"a token was made for {name}"
    for message in mail.outbox:
        body = message.body
        if any(f"/reset/{uid}/" in body for uid in uids):
            assert BOSS_MAIL not in message.to, "a link to set a victim's password reached boss"
    boss_uid = urlsafe_base64_encode(force_bytes(world["boss"].pk))
    for text in seen:
        # Anyone's link but the boss's own: a victim's, or a new rater's (api:accounts).
        for uid in re.findall(r"/accounts/password/reset/([\w-]+)/[\w-]+/", text):
            assert uid == boss_uid, "a link to set someone else's password was shown"


def test_every_path_to_a_password_or_session_is_listed_with_its_reason(world):
    names = sorted({name for name, _ in _enumerated() if _needs_reason(name)})
    unlisted = [name for name in names if name not in WHY]
    assert not unlisted, (
        f"New paths to a password or session: {unlisted}. Say in WHY why none of them can "
        "hand an administrator a rater's password or session (the sweep tries each)."
    )
    stale = sorted(set(WHY) - set(names))
    assert not stale, f"WHY names paths that no longer exist: {stale}"


def test_an_administrator_sweeping_every_path_takes_over_no_rater(world):
    boss = world["boss"]
    victims = {v.pk for v in world["victims"].values()}
    client = _signed_in_boss(world)
    _, secret = tokens.api_token_create(user=boss, name="boss")
    seen: list[str] = []
    swept = 0
    for name, pattern in _enumerated():
        url = _url(name, pattern, world)
        if url is None or name.endswith("_delete"):
            continue  # deleting an account is not taking it over (and the sweep needs it)
        for method in ("get", "post"):
            response = getattr(client, method)(url, ATTACK_FIELDS if method == "post" else None)
            seen.append(response.content.decode(errors="replace"))
            session_user = client.session.get("_auth_user_id")
            assert session_user is None or int(session_user) not in victims, (name, method)
            if session_user is None or int(session_user) != boss.pk:
                client = _signed_in_boss(world)  # signed out, or in as someone new
        swept += 1
    # The API's schema operations, with the administrator's token.
    schema = client.get("/api/v1/openapi.json").json()
    for method, path, operation in schema_operations(schema):
        if not WORDS.search(f"{path} {operation.get('operationId', '')}"):
            continue
        url = re.sub(r"\{(\w+)\}", lambda m: _path_value(m[1], world), path)
        # A new user name: the account the answer might hand over is the new rater's.
        body = {**ATTACK_FIELDS, "username": "newcomer"}
        response = client.generic(
            method, url, json.dumps(body), "application/json",
            HTTP_AUTHORIZATION=f"Bearer {secret}",
        )  # fmt: skip
        seen.append(response.content.decode(errors="replace"))
        swept += 1
    assert swept > 60
    _assert_nothing_taken(world, seen=seen)


def _path_value(name, world) -> str:
    return {
        "slug": "takeover",
        "token": world["invitation_token"],
        "token_hash": world["token_hash"],
        "link_uuid": str(world["link"].uuid),
    }.get(name, str(uuid.uuid4()))


def test_the_admin_refuses_to_set_a_raters_password_or_address(world):
    """The two admin routes of issue 38, with the bodies that worked before: the password
    form, and the change form's e-mail address (a reset link then went to the boss)."""
    client = _signed_in_boss(world)
    for name, victim in world["victims"].items():
        new = "taken Over Passphrase 5"
        url = reverse("admin:auth_user_password_change", args=[victim.pk])
        refused = client.post(url, {"password1": new, "password2": new, "usable_password": "true"})
        assert refused.status_code == 302
        page = client.get(refused["Location"])
        assert "no administrator may set its password" in page.content.decode()
        change = client.post(
            reverse("admin:auth_user_change", args=[victim.pk]),
            {
                "username": name, "email": BOSS_MAIL, "first_name": "", "last_name": "",
                "is_active": "on", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            },
        )  # fmt: skip
        assert change.status_code == 302
        client.post(reverse("password_reset"), {"email": BOSS_MAIL})
    _assert_nothing_taken(world, seen=[])
    # Once the study is unblinded, the key is no secret: the admin helps as for anyone.
    Study.objects.filter(pk=world["study"].pk).update(status=Study.Status.UNBLINDED)
    ana = world["victims"]["ana"]
    url = reverse("admin:auth_user_password_change", args=[ana.pk])
    new = "helped Passphrase 6"
    client.post(url, {"password1": new, "password2": new, "usable_password": "true"})
    ana.refresh_from_db()
    assert ana.check_password(new)


def test_a_browser_signed_in_as_an_administrator_does_not_become_a_participant(world):
    client = _signed_in_boss(world)
    url = reverse("studies:participant_join", args=[world["link"].token])
    refused = client.post(url, {"PROLIFIC_PID": "boss1", "STUDY_ID": "s", "SESSION_ID": "x"})
    assert refused.status_code == 400
    assert "participant link is for participants" in refused.content.decode()
    assert int(client.session["_auth_user_id"]) == world["boss"].pk
    assert not get_user_model().objects.filter(username__startswith="participant-").exists()

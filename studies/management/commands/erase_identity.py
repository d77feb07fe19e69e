from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from studies.errors import ApplicationError
from studies.services.erasure import identity_erase


class Command(BaseCommand):
    help = (
        "The right to erasure for one person, across every study: their username, names, "
        "e-mail, password, sessions, API tokens and invitation names are erased, and the "
        "audit trail's mentions of them. Their pseudonymous ratings and the audit trail "
        "stay. Running it again for an erased account does nothing and says so."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="the account to erase (an erased-… name too)")
        parser.add_argument(
            "--reason",
            required=True,
            help="why (e.g. 'request by e-mail of 2026-11-30'); recorded, so do not name them",
        )

    def handle(self, *args, username, reason, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"There is no user '{username}'.")
        try:
            result = identity_erase(user=user, reason=reason)
        except ApplicationError as error:
            raise CommandError(str(error)) from None
        if result.already:
            self.stdout.write(f"{username}: {result.summary()}")
            return
        self.stdout.write(f"{username} is now {result.username}. {result.summary()}")

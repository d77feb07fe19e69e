from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from studies.models import Study
from studies.services.unblinding import UnblindingError, study_unblind


class Command(BaseCommand):
    help = (
        "Unblind a closed study, as its lead: the exports then name the system of every "
        "response. Recorded in the study's history; it cannot be undone."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--lead", required=True, help="username of the study lead")
        parser.add_argument("--reason", default="", help="a note for the audit trail")

    def handle(self, *args, study, lead, reason="", **options):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        user = get_user_model().objects.filter(username=lead).first()
        if user is None:
            raise CommandError(f"There is no user '{lead}'.")
        if len(reason) > 1000 or "\x00" in reason:
            raise CommandError("Keep the reason under 1,000 characters, without NUL.")
        try:
            target = study_unblind(study=target, actor=user, reason=reason)
        except UnblindingError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"'{target.slug}' is unblinded ({target.unblinded_at:%Y-%m-%d %H:%M} UTC). "
            "Export the key with: manage.py export_results "
            f"{target.slug} --format key-csv -o key.csv"
        )

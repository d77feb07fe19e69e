from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from studies.errors import ApplicationError
from studies.models import Study
from studies.services import rater_add


class Command(BaseCommand):
    help = (
        "Add an existing account to a study as a rater, with the next pseudonym (recorded in "
        "the study's history). On the pages, raters join by invitation instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("username", help="the account to add")

    def handle(self, *args, study, username, **options):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"There is no user '{username}'.")
        try:
            membership = rater_add(study=target, user=user, actor=None)
        except ApplicationError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"Added {username} to '{target.slug}' as rater {membership.pseudonym}. "
            f"Give them cases with: manage.py assign_cases {target.slug}"
        )

from django.core.management.base import BaseCommand, CommandError

from annotation.assignment import AssignmentDesignError, design_summary, study_assign
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Give the study's active raters their test cases under its assignment design, as "
        "the raters page's Assign button does. Safe to run again: nothing assigned changes."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")

    def handle(self, *args, study, **options):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        try:
            created = study_assign(study=target, actor=None)
        except AssignmentDesignError as error:
            raise CommandError(str(error)) from None
        if not created:
            self.stdout.write("Every rater already has their cases; nothing changed.")
            return
        for pseudonym, count in sorted(created.items()):
            self.stdout.write(f"{pseudonym}: {count} new case{'s' if count != 1 else ''}")
        self.stdout.write(f"Design: {design_summary(study=target)}.")

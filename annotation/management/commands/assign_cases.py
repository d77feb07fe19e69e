from django.core.management.base import BaseCommand, CommandError

from annotation.assignment_jobs import assignment_job_start
from annotation.services.assignment import design_summary
from jobs.models import Job
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Give the study's active raters their test cases under its assignment design, as "
        "the raters page's Assign button does (here always inside this command, whatever "
        "the study's size). Safe to run again: nothing assigned changes."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")

    def handle(self, *args, study, **options):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        job = assignment_job_start(study=target, actor=None, inline=True)
        if job.is_active:
            raise CommandError(
                "An assignment of this study is running (started from the raters page or "
                "the API); run the command again once it has finished."
            )
        if job.state != Job.State.DONE:
            raise CommandError(job.error)
        created = job.result.get("created", {})
        if not created:
            self.stdout.write("Every rater already has their cases; nothing changed.")
            return
        for pseudonym, count in sorted(created.items()):
            self.stdout.write(f"{pseudonym}: {count} new case{'s' if count != 1 else ''}")
        self.stdout.write(f"Design: {design_summary(study=target)}.")

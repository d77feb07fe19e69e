from django.core.management.base import BaseCommand, CommandError

from studies.errors import ApplicationError
from studies.models import Study
from studies.selectors import study_unfinished_work
from studies.services import TRANSITIONS

# The status asked for, and the transitions that reach it (closed -> open is "reopen").
TARGETS = {"pilot": ("pilot",), "open": ("open", "reopen"), "closed": ("close",)}


class Command(BaseCommand):
    help = (
        "Move a study to pilot, open or closed, with the same checks as the settings page "
        "(opening freezes the protocol; a closed study can be opened again until unblinded)."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("status", choices=sorted(TARGETS), help="the status to move to")
        parser.add_argument(
            "--acknowledge-warnings",
            action="store_true",
            help="open although the blinding check found passages that may name a system",
        )

    def handle(self, *args, study, status, acknowledge_warnings=False, **options):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        names = TARGETS[status]
        # The transition that starts where the study is; else the first, whose service
        # refuses with the lifecycle's own message.
        name = next((n for n in names if TRANSITIONS[n].allowed_from(target)), names[0])
        kwargs = {"study": target, "actor": None}
        if name == "open":
            kwargs["acknowledge_warnings"] = acknowledge_warnings
        # Closing from the command line is confirmed by running it; it says what it left.
        unfinished = study_unfinished_work(study=target) if name == "close" else None
        try:
            target = TRANSITIONS[name].service(**kwargs)
        except ApplicationError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"'{target.slug}': {TRANSITIONS[name].done}")
        for sentence in unfinished.sentences() if unfinished else []:
            self.stdout.write(f"Left undone: {sentence}")
        if target.is_open:
            self.stdout.write(f"Protocol fingerprint: {target.protocol_fingerprint}")

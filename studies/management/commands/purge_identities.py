from django.core.management.base import BaseCommand

from studies.services.erasure import identities_purge


class Command(BaseCommand):
    help = (
        "Erase the identities whose retention period has ended: people all of whose studies "
        "are closed, set a retention period and closed longer ago than it (what the daily "
        "beat task runs). Lists each person by the pseudonyms they held."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="list whom it would erase; erase no one"
        )

    def handle(self, *args, dry_run, **options):
        done = identities_purge(dry_run=dry_run)
        verb = "Would erase" if dry_run else "Erased"
        for pseudonyms, result in done:
            held = "; ".join(pseudonyms)
            name = f" as {result.username}" if result is not None else ""
            self.stdout.write(f"{verb} the identity of {held}{name}.")
        self.stdout.write(f"{verb} {len(done)} identit{'y' if len(done) == 1 else 'ies'}.")

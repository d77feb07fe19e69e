from django.core.management.base import BaseCommand

from agreement.demo import pairwise_demo_load


class Command(BaseCommand):
    help = "Load the pairwise demo study with an LLM judge's outputs (idempotent; after load_demo)."
    # `make run` migrates first, which runs the checks; running them again costs seconds.
    requires_system_checks: list[str] = []

    def handle(self, *args, **options):
        self.stdout.write(pairwise_demo_load())

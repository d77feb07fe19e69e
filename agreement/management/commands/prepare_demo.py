from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Migrate, then load both demo studies (load_demo, load_judge_demo), in one process: "
        "what `make run` does (idempotent)."
    )
    # Starting Django costs seconds (SciPy, Celery, the admin); `make run` used to pay it three
    # times. runserver runs the system checks next, so they are not run here as well.
    requires_system_checks: list[str] = []

    def handle(self, *args, **options):
        verbosity = options["verbosity"]
        call_command("migrate", interactive=False, verbosity=verbosity, stdout=self.stdout)
        call_command("load_demo", verbosity=verbosity, stdout=self.stdout)
        call_command("load_judge_demo", verbosity=verbosity, stdout=self.stdout)

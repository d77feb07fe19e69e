from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from studies.errors import ApplicationError
from studies.models import Study
from studies.rubric.files import definition_read
from studies.services import rubric_replace


class Command(BaseCommand):
    help = (
        "Replace a study's rubric with a definition from a .json, .yaml or .yml file (the "
        "format is in docs/rubric-format.md; export_rubric writes one). All or nothing, and "
        "only before the study opens."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("file", help="the rubric definition (.json, .yaml or .yml)")

    def handle(self, *args, study, file, **options):
        target = Study.objects.select_related("rubric").filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        try:
            definition = definition_read(Path(file))
            target = rubric_replace(study=target, actor=None, definition=definition)
        except ApplicationError as error:
            raise CommandError("\n".join([*error.problems, str(error)])) from None
        dimensions = target.rubric.dimensions.count()
        self.stdout.write(
            f"'{target.slug}' now has the rubric '{target.rubric.name}' ({dimensions} "
            f"dimension{'s' if dimensions != 1 else ''}, {target.rubric.max_total} points)."
        )

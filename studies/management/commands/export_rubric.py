from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from studies.models import Study
from studies.presets import PRESETS
from studies.rubric.definition import definition_of, preset_definition
from studies.rubric.files import definition_text


class Command(BaseCommand):
    help = (
        "Write a study's rubric, or a preset, as a definition set_rubric and the API accept "
        "(JSON or YAML; docs/rubric-format.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="?", help="the study's slug (or use --preset)")
        parser.add_argument("--preset", choices=sorted(PRESETS), help="export a preset instead")
        parser.add_argument("--format", choices=("json", "yaml"), default="json", dest="fmt")
        parser.add_argument("-o", "--output", help="the file to write (default: standard output)")

    def handle(self, *args, study=None, preset=None, fmt="json", output=None, **options):
        if (study is None) == (preset is None):
            raise CommandError("Name a study or a --preset (one of the two).")
        if preset is not None:
            definition = preset_definition(preset)
        else:
            target = Study.objects.select_related("rubric").filter(slug=study).first()
            if target is None:
                raise CommandError(f"There is no study '{study}'.")
            definition = definition_of(target.rubric)
        text = definition_text(definition, fmt=fmt)
        if output is None:
            self.stdout.write(text, ending="")
            return
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"Could not write {output}: {error.strerror}.") from None
        self.stdout.write(f"Wrote the rubric '{definition['name']}' to {output}.")

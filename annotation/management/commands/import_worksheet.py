from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.worksheets import MAX_BYTES, WorksheetError, worksheet_import
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Import a rater's filled-in worksheet (.csv or .xlsx): all or nothing; every problem "
        "is listed with its row and column."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("file", help="path to the .csv or .xlsx worksheet")
        parser.add_argument("--rater", required=True, help="the rater's pseudonym, e.g. R-03")
        parser.add_argument(
            "--check", action="store_true", help="only check the file; write nothing"
        )

    def handle(self, *args, study, file, rater, check=False, **options):
        target = Study.objects.select_related("rubric").filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"There is no file {file}.")
        if path.stat().st_size > MAX_BYTES:
            raise CommandError(
                f"The file is larger than {MAX_BYTES // 2**20} MB.\nNothing was imported."
            )
        try:
            result = worksheet_import(
                study=target,
                pseudonym=rater,
                filename=path.name,
                data=path.read_bytes(),
                dry_run=check,
            )
        except WorksheetError as error:
            count = len(error.problems)
            lines = [str(problem) for problem in error.problems]
            lines.append(
                f"The file has {count} problem{'s' if count != 1 else ''}; nothing was imported."
            )
            raise CommandError("\n".join(lines)) from None
        verb = "Checked" if check else "Imported"
        skipped = f"; {len(result.skipped)} blank test cases skipped" if result.skipped else ""
        if result.skips:
            skipped += f"; {result.skips} marked skipped by the rater"
        self.stdout.write(
            f"{verb} {result.cases} test cases for {result.rater} in '{target.slug}' "
            f"({result.created} newly assigned, {result.updated} replaced{skipped})."
        )

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import exports
from studies.errors import ApplicationError
from studies.models import Membership, Study


class Command(BaseCommand):
    help = (
        "Export a study's results: the raters' worksheet (CSV or .xlsx), the long table for "
        "analysis, the data dictionary or, once unblinded, the key."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--format", required=True, choices=exports.FORMATS, dest="fmt")
        parser.add_argument("-o", "--output", required=True, help="the file to write")
        parser.add_argument("--rater", help="only this rater's worksheet (pseudonym, e.g. R-01)")

    def handle(self, *args, study, fmt, output, rater=None, **options):
        target = Study.objects.select_related("rubric").filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        if rater is not None:
            if fmt not in (exports.WORKSHEET_CSV, exports.WORKSHEET_XLSX):
                raise CommandError("--rater applies to the worksheet formats only.")
            if not target.memberships.filter(role=Membership.Role.RATER, pseudonym=rater).exists():
                raise CommandError(f"There is no rater {rater} in '{target.slug}'.")
        if fmt == exports.KEY_CSV and not target.is_unblinded:
            raise CommandError("The key can be exported only after the study is unblinded.")
        path = Path(output)
        partial = path.with_name(path.name + ".partial")
        try:
            with partial.open("wb") as file:
                exports.export_write(study=target, fmt=fmt, file=file, rater=rater)
            partial.replace(path)
        except OSError as error:
            partial.unlink(missing_ok=True)
            raise CommandError(f"Could not write {output}: {error.strerror}.") from None
        except ApplicationError as error:
            partial.unlink(missing_ok=True)
            raise CommandError(str(error)) from None
        self.stdout.write(f"Wrote {fmt} of '{target.slug}' to {path}.")

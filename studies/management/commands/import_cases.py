from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from studies.importing.cases import size_problem
from studies.models import Study
from studies.selectors import study_identity_report, study_next_case_position
from studies.services import CaseImportError, StudySetupError, test_cases_import


class Command(BaseCommand):
    help = (
        "Import test cases from a .csv, .jsonl or .xlsx file into a study (all or nothing; "
        "every problem is listed with its row or line and column)."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("file", help="path to the .csv, .jsonl or .xlsx file")

    def handle(self, *args, study, file, **options):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"There is no file {file}.")
        too_large = size_problem(path.stat().st_size)
        if too_large:
            raise CommandError(f"{too_large}\nNothing was imported.")
        start = study_next_case_position(study=target)
        try:
            parsed = test_cases_import(study=target, actor=None, filename=path.name, data=path)
        except CaseImportError as error:
            raise CommandError("\n".join([*error.problems, str(error)])) from None
        except StudySetupError as error:
            raise CommandError(str(error)) from None
        for line in parsed.warning_lines():
            self.stderr.write(f"Warning: {line}")
        self._identity_mentions(target, start)
        strata = len(parsed.strata)
        self.stdout.write(
            f"Imported {parsed.case_count} test cases ({len(parsed.systems)} systems: "
            f"{', '.join(parsed.systems)}; {strata} strat{'um' if strata == 1 else 'a'}) "
            f"into '{target.slug}'."
        )

    def _identity_mentions(self, study: Study, start: int) -> None:
        """Every passage of the imported texts that may say which system or model wrote it."""
        report = study_identity_report(study=study, from_position=start)
        if not report["count"]:
            return
        self.stderr.write(
            f"Blinding check: {report['count']} passage(s) may say which system or model "
            "wrote a response; read each and edit the text if it gives the system away:"
        )
        for mention in report["listed"]:
            self.stderr.write(f"  {mention} {mention.snippet}")
        if report["count"] > len(report["listed"]):
            self.stderr.write(
                f"  ... and {report['count'] - len(report['listed'])} more "
                f"(the first {len(report['listed'])} are listed)."
            )

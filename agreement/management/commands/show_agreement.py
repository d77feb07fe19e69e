import json

from django.core.management.base import BaseCommand, CommandError
from django.core.serializers.json import DjangoJSONEncoder

from agreement.selectors import agreement_is_stale, study_agreement
from studies.models import Study


def _number(value, digits=3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


class Command(BaseCommand):
    help = (
        "Print a study's stored agreement result (Krippendorff's alpha per dimension with "
        "its interval, and the success criterion), and whether it is current."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the whole stored result"
        )

    def handle(self, *args, study, as_json=False, **options):
        target = Study.objects.select_related("rubric").filter(slug=study).first()
        if target is None:
            raise CommandError(f"There is no study '{study}'.")
        agreement = study_agreement(study=target)
        stale = agreement_is_stale(study=target, agreement=agreement)
        result = agreement.result or {}
        if as_json:
            document = {
                "study": target.slug,
                "computed_at": agreement.computed_at,
                "stale": stale,
                "intervals_pending": bool(result.get("intervals_pending")),
                "ratings": agreement.n_ratings,
                "result": result,
            }
            self.stdout.write(json.dumps(document, cls=DjangoJSONEncoder, indent=2))
            return
        if not result.get("dimensions"):
            self.stdout.write(f"No agreement computed yet for '{target.slug}'.")
            return
        when = f"{agreement.computed_at:%Y-%m-%d %H:%M} UTC"
        freshness = "out of date, a recompute is on its way" if stale else "current"
        self.stdout.write(f"Agreement for '{target.slug}', computed {when} ({freshness}).")
        if result.get("intervals_pending"):
            self.stdout.write("The bootstrap intervals are still being computed.")
        for d in result["dimensions"]:
            self.stdout.write(
                f"  {d['name']}: alpha {_number(d['alpha'])} [{_number(d['low'])}, "
                f"{_number(d['high'])}], {d['n_units']} units, {d['n_raters']} raters "
                f"({d['level']})"
            )
        success = result.get("success") or {}
        if success:
            verdict = "PASSED" if success["passed"] else "NOT MET"
            self.stdout.write(
                f"Success criterion (alpha >= {success['alpha']} on at least "
                f"{success['min_dimensions']} dimensions): {verdict} "
                f"({len(success['passing'])} passing)."
            )

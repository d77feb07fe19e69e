"""The rater-welfare settings page (protocol section 3): exposure limits and content warnings
per stratum, pay and its check against the raters' active times, recruitment, retention.

Here rather than in ``studies`` because the pay check reads the raters' active times,
which the rating side keeps; the settings themselves are written by
``studies.services.welfare``.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from annotation.selectors.pay import PHASES, pay_check
from studies import access
from studies.errors import ApplicationError
from studies.models import WelfareSettings
from studies.selectors import skips_handed_on, welfare_settings_for, welfare_strata_table
from studies.services import welfare as service

# A form field is cut to this before the service reads it (and refuses it as too long).
MAX_FIELD = service.MAX_TEXT + 1


def _posted(request, rows: list[dict], *, frozen: bool) -> tuple[dict, list[dict]]:
    """The settings and strata rows the form sends; frozen fields are not sent."""
    names = [
        name for name in service.WELFARE_FIELDS if not (frozen and name in service.FROZEN_FIELDS)
    ]
    values = {name: request.POST.get(name, "")[:MAX_FIELD] for name in names}
    strata = []
    if not frozen:
        for index, row in enumerate(rows):
            strata.append(
                {
                    "stratum": row["stratum"],
                    "content_warning": request.POST.get(f"warning-{index}", "")[:MAX_FIELD],
                    "daily_minutes": request.POST.get(f"minutes-{index}", "")[:MAX_FIELD],
                }
            )
    return values, strata


@login_required
def welfare_settings(request, slug):
    """Coordinators read and change the study's rater-welfare settings."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    settings = welfare_settings_for(study=study)
    rows = welfare_strata_table(study=study)
    values = {name: getattr(settings, name) for name in service.WELFARE_FIELDS}
    problems: list[str] = []
    status = 200
    if request.method == "POST":
        posted, strata = _posted(request, rows, frozen=study.is_frozen)
        version = study.consent_version
        try:
            service.welfare_settings_update(
                study=study, actor=request.user, values=posted, strata=strata
            )
        except ApplicationError as error:
            messages.error(request, str(error))
            problems = error.problems
            # The page shows what was sent, to be corrected.
            values |= posted
            for row, sent in zip(rows, strata, strict=False):
                row["content_warning"] = sent["content_warning"]
                row["daily_minutes"] = sent["daily_minutes"]
            status = 400
        else:
            messages.success(request, "The rater welfare settings are saved.")
            study.refresh_from_db(fields=["consent_version"])
            if study.consent_version != version:
                messages.info(
                    request,
                    "The information sheet now states a new warning or limit: raters who "
                    "agreed to the earlier sheet are asked to agree again before rating on.",
                )
            return redirect("annotation:welfare", slug=study.slug)
    check = pay_check(study=study)
    return render(
        request,
        "annotation/coordinator/welfare.html",
        {
            "study": study,
            "values": values,
            "strata": rows,
            "frozen": study.is_frozen,
            "skips_handed_on": skips_handed_on(study=study),
            "problems": problems,
            "bases": WelfareSettings.PayBasis.choices,
            "bounds": {
                "minutes": service.MINUTES_BOUNDS,
                "retention": service.RETENTION_BOUNDS,
                "min_cell": service.MIN_CELL_BOUNDS,
                "pay_max": service.PAY_MAX,
                "minimum_max": service.MINIMUM_HOURLY_MAX,
                "text": service.MAX_TEXT,
            },
            "check": check,
            "phases": [
                {"key": key, "name": name, "warnings": check.warnings(key)} for key, name in PHASES
            ],
        },
        status=status,
    )

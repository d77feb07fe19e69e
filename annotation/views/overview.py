from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation import selectors
from annotation.selectors.pay import pay_check
from studies import access
from studies.selectors import study_case_summary, study_setup_checklist


@login_required
def study_overview(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return render(
        request,
        "studies/overview.html",
        {
            "study": study,
            # What is left to set up, while the study has not opened.
            "checklist": study_setup_checklist(study=study)
            if study.is_draft or study.is_pilot
            else None,
            "raters": selectors.rater_progress_table(study=study),
            "cases": selectors.case_progress_page(study=study, number=request.GET.get("page")),
            # The test cases counted apart from the quality items listed with them.
            "summary": study_case_summary(study=study),
            "adjudication": selectors.adjudication_counts(study=study),
            # Once main-study times come in: where the pay falls under the minimum hourly.
            "pay_warnings": pay_check(study=study).warnings("main") if study.opened_at else [],
        },
    )

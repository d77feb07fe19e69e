"""A placeholder for the adjudication queue page, so that its links resolve; the
adjudication screen's own module replaces this file."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.selectors import adjudication_counts
from studies import access


@login_required
def adjudication_queue(request, slug):
    study, membership = access.get_study_for_user(request.user, slug, role=access.ADJUDICATOR)
    return render(
        request,
        "annotation/adjudication_queue_stub.html",
        {"study": study, "membership": membership, "counts": adjudication_counts(study=study)},
    )

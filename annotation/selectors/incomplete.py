"""Submitted ratings that lack a required answer (issue 39): stored before a submit had to
answer every required dimension. Reported to the lead, never rewritten: their answers stay
as the rater gave them, and the analysis reads the unanswered parts as missing."""

from dataclasses import dataclass

from annotation.models import Assignment, Rating
from studies.models import Study
from studies.rubric import answers_missing


@dataclass(frozen=True)
class IncompleteRatings:
    """How many submitted cases lack a required answer, and whose (pseudonym -> cases)."""

    cases: int
    by_rater: dict[str, int]

    @property
    def raters(self) -> list[str]:
        return sorted(self.by_rater)


def incomplete_ratings(*, study: Study) -> IncompleteRatings:
    """The study's submitted cases (any purpose or phase) lacking a required answer, asked
    of the kinds (``studies.rubric.answers_missing``); one read of the answers."""
    dimensions = study.rubric.scoring_dimensions()
    if not any(d.required for d in dimensions):
        return IncompleteRatings(cases=0, by_rater={})
    submitted = Assignment.objects.filter(
        test_case__study=study, status=Assignment.Status.SUBMITTED
    ).values_list("pk", "rater__pseudonym", "case_scores")
    cases = {pk: (pseudonym, case or {}) for pk, pseudonym, case in submitted}
    responses: dict[int, dict] = {pk: {} for pk in cases}
    rows = Rating.objects.filter(assignment_id__in=list(cases)).values_list(
        "assignment_id", "label", "scores"
    )
    for assignment_id, label, scores in rows.iterator():
        responses[assignment_id][label] = scores or {}
    by_rater: dict[str, int] = {}
    for pk, (pseudonym, case) in cases.items():
        if answers_missing(dimensions, responses[pk], case):
            by_rater[pseudonym] = by_rater.get(pseudonym, 0) + 1
    return IncompleteRatings(cases=sum(by_rater.values()), by_rater=by_rater)

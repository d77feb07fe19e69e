"""Agreement's item of a study's set-up checklist (``studies.setup_checklist``)."""

from agreement.models import AnalysisPlan
from studies.models import Study
from studies.setup_checklist import ChecklistItem


def setup_checklist_analysis_plan(*, study: Study) -> list[ChecklistItem]:
    """Whether the analysis plan names the primary question: decided before the ratings
    come in, it is a question, not a result looked for afterwards."""
    measure = AnalysisPlan.objects.filter(study=study).values_list("primary_measure", flat=True)
    chosen = bool(measure.first())
    return [
        ChecklistItem(
            order=60,
            title="Analysis plan (primary question)",
            done=chosen,
            detail=(
                "The primary question is chosen."
                if chosen
                else "Not named yet: the protocol's analysis plan names it before the ratings "
                "come in. Without one the report has no primary question and corrects every "
                "question with Holm's method."
            ),
            url_name="agreement:report",
            anchor="#primary-question",
        )
    ]

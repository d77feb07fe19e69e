"""7.3's action: a dimension that misses its agreement target has every disagreement
adjudicated from now on, once the lead confirms it with a reason.

The switch itself is the studies app's (``adjudication_rule_switch``: the rule's
``switched_*``, and a study event the report lists as a deviation); this checks, against
the stored agreement result, that the dimension did miss the target. The next refresh of
the adjudication queue applies it (``annotation.services.adjudication_queue``).
"""

from django.contrib.auth.models import User

from agreement.selectors import dimensions_missing_target, study_agreement
from studies.models import AdjudicationRule, Study
from studies.services.adjudication_rules import AdjudicationRuleError, adjudication_rule_switch


def adjudication_switch_for_missed_target(
    *, study: Study, actor: User | None, dimension_key: str, reason: str
) -> AdjudicationRule:
    """Switch the dimension to "every disagreement"; refused unless the stored result
    shows it below the study's success α."""
    if dimension_key not in dimensions_missing_target(agreement=study_agreement(study=study)):
        raise AdjudicationRuleError(
            "Only a dimension whose α is below the study's target can be switched to every "
            "disagreement."
        )
    return adjudication_rule_switch(
        study=study, actor=actor, dimension_key=dimension_key, reason=reason
    )

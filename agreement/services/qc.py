"""Writes that act on the QC rules' findings: the automatic pause of a failing rater."""

from agreement.qc.checks import quality_checks
from agreement.selectors import qc_quality_answers, qc_rules, rater_reinstated_at
from studies.models import Membership, Study
from studies.services import rater_pause_automatic


def quality_enforce(*, study: Study) -> list[str]:
    """Pause, automatically, every active rater whose gold answers fail QC-001; returns
    their pseudonyms. Only answers since a rater's last reinstatement count, so an
    administrator's reinstatement gives them a fresh start rather than an instant pause."""
    rules = qc_rules(study=study)
    since = rater_reinstated_at(study=study)
    answers = [
        a for a in qc_quality_answers(study=study) if a.submitted_at > since.get(a.rater, "")
    ]
    active = dict(
        study.memberships.filter(
            role=Membership.Role.RATER, status=Membership.Status.ACTIVE
        ).values_list("pseudonym", "pk")
    )
    paused = []
    for rater, check in quality_checks(answers, rules).items():
        gold = check["gold"]
        if rater not in active or not gold["pause"]:
            continue
        reason = (
            f"Gold accuracy {gold['accuracy']:.0%} on {gold['items']} gold items, below "
            f"{rules.gold_pass_share:.0%} (QC-001)."
        )
        evidence = {
            "items": gold["items"],
            "accuracy": round(gold["accuracy"], 4),
            "missed": gold["missed"][:50],
        }
        if rater_pause_automatic(
            membership_id=active[rater], rule="QC-001", reason=reason, evidence=evidence
        ):
            paused.append(rater)
    return paused

"""What the study's quality rates give each rater: the set-up checklist's item on gold items
and attention checks (``studies.setup_checklist``), with a warning when an item reaches
nobody (one attention check per 50 items, with 20 items per rater, rounds to none)."""

from math import ceil

from studies.models import Membership, Study
from studies.selectors import quality_settings_for, study_case_summary
from studies.setup_checklist import ChecklistItem

from ..services.assignment import quality_counts


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def sample_cases_per_rater(*, study: Study, cases: int) -> tuple[int, str]:
    """(sample cases each rater is planned to get, how that was worked out): a participant
    link's batch, k raters per case shared among the raters joined (at least k), or every
    case in the full design."""
    batches = [
        size
        for size in study.participant_links.filter(closed_at__isnull=True).values_list(
            "cases_per_participant", flat=True
        )
        if size
    ]
    if batches:
        size = min(min(batches), cases)
        return size, f"each participant's batch of {size}"
    k = study.raters_per_item
    if not k:
        return cases, f"all {cases} test cases"
    raters = study.memberships.filter(
        role=Membership.Role.RATER, status=Membership.Status.ACTIVE
    ).count()
    share = ceil(cases * k / max(raters, k)) if cases else 0
    return share, f"about {share} test cases each ({k} raters per case, {max(raters, k)} raters)"


def quality_rates_per_rater(*, study: Study) -> dict:
    """The gold items and attention checks each rater will see under the study's rates,
    and what reaches nobody: {"cases", "basis", "gold", "attention", "gold_each",
    "attention_each", "warnings"}."""
    summary = study_case_summary(study=study)
    cases, gold, attention = summary["cases"], summary["gold"], summary["attention"]
    settings = quality_settings_for(study=study)
    per_rater, basis = sample_cases_per_rater(study=study, cases=cases)
    gold_each, attention_each = quality_counts(
        sample_count=per_rater,
        gold_percent=settings.gold_percent,
        attention_every=settings.attention_every,
    )
    gold_each, attention_each = min(gold_each, gold), min(attention_each, attention)
    warnings = []
    for have, each, what, rate in (
        (gold, gold_each, "gold item", f"{settings.gold_percent}% of each rater's screens"),
        (
            attention,
            attention_each,
            "attention check",
            f"one per {settings.attention_every} items",
        ),
    ):
        if have and not each:
            warnings.append(
                f"No rater will see {'the' if have == 1 else 'any of the'} "
                f"{_plural(have, what)}: {rate} rounds to none with {basis}. Raise the "
                "rate on the Gold & attention page, or remove the item."
            )
    return {
        "cases": cases,
        "basis": basis,
        "gold": gold,
        "attention": attention,
        "gold_each": gold_each,
        "attention_each": attention_each,
        "warnings": warnings,
    }


def setup_checklist_quality(*, study: Study) -> list[ChecklistItem]:
    """The set-up checklist's item on quality items: how many there are, what the rates give
    each rater, and a warning when one reaches nobody."""
    rates = quality_rates_per_rater(study=study)
    gold, attention = rates["gold"], rates["attention"]
    if not (gold or attention):
        detail = (
            "None yet: gold items and attention checks let quality control find a rater who drifts."
        )
    else:
        detail = (
            f"{_plural(gold, 'gold item')} and {_plural(attention, 'attention check')}, "
            "counted apart from the test cases. Each rater will see "
            f"{_plural(rates['gold_each'], 'gold item')} and "
            f"{_plural(rates['attention_each'], 'attention check')} among {rates['basis']}."
        )
    return [
        ChecklistItem(
            order=30,
            title="Quality items",
            done=bool(gold or attention),
            detail=detail,
            url_name="studies:quality",
            optional=True,
            warning=" ".join(rates["warnings"]),
        )
    ]

"""The demo study's gold items and attention checks, so the quality-control page shows
something real: three gold items with adjudicated answers and two attention checks.

The demo raters' plausible scores meet the gold items' answers but not the attention
checks' (they score the instructed text like any other response), so the QC page shows
their attention flags with the evidence.
"""

from studies.models import Study
from studies.services import test_cases_add
from studies.services.quality import (
    ExpectedCell,
    attention_check_create,
    expected_answers_set,
    quality_settings_update,
)

GOLD_CASES = [
    {
        "id": "TC-101",
        "stratum": "policy",
        "prompt": "Should a mid-sized city replace its bus fleet with electric buses this year?",
        "responses": {
            "baseline": "Yes. Electric buses are cleaner, so the city should buy them now.",
            "improved": (
                "It depends on four things: the charging capacity of the depots, the fleet's "
                "age, the grid's carbon intensity and the financing available. Evidence from "
                "cities that switched shows lower running costs but high upfront cost. "
                "Alternatives: a phased replacement, or hybrids on the longest routes. "
                "Recommendation: pilot two routes, audit depot power, then phase in over five "
                "years; review the costs after the first winter; publish the results."
            ),
        },
    },
    {
        "id": "TC-102",
        "stratum": "operations",
        "prompt": "Our support queue doubled after a product launch. What should we do first?",
        "responses": {
            "baseline": "Hire more support staff.",
            "improved": (
                "Look at what the tickets are about before adding people: the launch may have "
                "one confusing step, a bug, or missing documentation; staffing, tooling and "
                "response-time targets matter too, and the trend over the next weeks. Ticket "
                "tags and the launch's release notes are the evidence to read. Alternatives "
                "are temporary help from the product team, or a known-issues page. "
                "Recommendation: tag a day's tickets, fix the top cause, publish a help "
                "article and measure the queue for a week."
            ),
        },
    },
    {
        "id": "TC-103",
        "stratum": "policy",
        "prompt": "Should the lab require code review for every analysis script?",
        "responses": {
            "baseline": "No, it slows people down.",
            "improved": (
                "Weigh the error rate in past analyses, the reviewers' time, the stakes of "
                "each analysis, the team's size and how often scripts are reused. Published "
                "retractions from coding errors are evidence that review pays for high-stakes "
                "work. Alternatives: review only scripts behind a publication, or pair "
                "programming. Recommendation: require review for anything published, offer it "
                "for the rest, and check in three months whether errors fell."
            ),
        },
    },
]
# The adjudicated answers: the strong response lists six or more factors and meets every
# evidence criterion; the weak one lists a few factors at most.
GOLD_KEY = [
    ("improved", "depth", "5 ±1 band"),
    ("baseline", "depth", "0 ±1 band"),
    ("improved", "evidence", "yes;yes;any"),
]


def demo_quality_items_add(*, study: Study, actor) -> None:
    """Add the demo's gold items and attention checks, and rates that give every demo rater
    all of them (the demo has only eight sample cases). Before the study opens."""
    quality_settings_update(
        study=study, values={"gold_percent": 25, "attention_every": 5}, actor=actor
    )
    systems = list(study.systems.order_by("name").values_list("name", flat=True))
    test_cases_add(study=study, systems=systems, cases=GOLD_CASES)
    gold_ids = [case["id"] for case in GOLD_CASES]
    for test_case in study.test_cases.filter(case_id__in=gold_ids).order_by("position"):
        expected_answers_set(
            test_case=test_case,
            purpose="gold",
            cells=[ExpectedCell(*cell) for cell in GOLD_KEY],
            explanation=(
                "The stronger response names several distinct factors and supports them "
                "with evidence; the weaker one names one or none."
            ),
            actor=actor,
        )
    for number, prompt in enumerate(
        ("How should we plan next quarter's hiring?", "Is a four-day week worth a trial?"),
        start=1,
    ):
        attention_check_create(
            study=study, case_id=f"TC-2{number:02d}", prompt=prompt, text="", actor=actor
        )

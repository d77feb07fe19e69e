"""The study's set-up: the studies a coordinator runs, what is done and what is missing
before it starts, and whether what raters see can still change."""

from collections import Counter

from django.db.models import Count, Q
from django.utils import timezone

from ..activity import UnfinishedWork, rating_activity, unfinished_work
from ..models import (
    AdjudicationRule,
    Membership,
    Study,
    TestCase,
)
from ..rubric import RubricValueError
from ..setup_checklist import ChecklistItem, SetupChecklist, checklist_items_registered
from .rubric import adjudication_rules_table


def coordinated_studies(*, user):
    if not user.is_authenticated:
        return Study.objects.none()
    scope = Q(lead=user) | Q(memberships__user=user, memberships__role=Membership.Role.COORDINATOR)
    if user.is_staff:
        scope = Q()
    return Study.objects.filter(scope).distinct().order_by("name")


def study_rating_started(*, study: Study) -> bool:
    """Whether a rater has started (a saved draft) or submitted a test case."""
    return rating_activity(study=study).started


def study_setup_locked_reason(*, study: Study) -> str:
    """Why what raters see can no longer change, in plain words; "" while it still can."""
    if study.is_frozen:
        return (
            f"The study is {study.get_status_display().lower()}, so its rubric, test cases, "
            "blinding and instructions are frozen."
        )
    if study_rating_started(study=study):
        return (
            "Raters have started rating (cases have been saved or submitted), so what they "
            "see can no longer change."
        )
    return ""


def study_unfinished_work(*, study: Study) -> UnfinishedWork:
    """What closing the study now would leave undone (the Close page and the API ask)."""
    return unfinished_work(study=study)


def study_has_assignments(*, study: Study) -> bool:
    return rating_activity(study=study).assigned


def study_case_summary(*, study: Study) -> dict:
    """The test cases (the sample) by stratum, and apart from them the quality items."""
    # Counted by the database: one row per stratum, whatever the number of cases.
    strata = Counter(
        dict(
            study.test_cases.in_sample()
            .order_by()
            .values_list("stratum")
            .annotate(count=Count("pk"))
        )
    )
    by_purpose = dict(
        study.test_cases.exclude(purpose=TestCase.Purpose.SAMPLE)
        .order_by()
        .values_list("purpose")
        .annotate(count=Count("pk"))
    )
    return {
        "cases": sum(strata.values()),
        "gold": by_purpose.get(TestCase.Purpose.GOLD, 0),
        "attention": by_purpose.get(TestCase.Purpose.ATTENTION, 0),
        # Quality items taken back: their key was shown, so they count nowhere (issue 38).
        "left_out": by_purpose.get(TestCase.Purpose.LEFT_OUT, 0),
        "systems": list(study.systems.values_list("name", flat=True)),
        "strata": sorted((name, count) for name, count in strata.items() if name),
        "unstratified": strata.get("", 0),
    }


def study_setup_checklist(*, study: Study) -> SetupChecklist:
    """What the study needs before it starts, each item done or missing with the page where
    it is set up: the Overview of a draft and the Open page show this one list."""
    summary = study_case_summary(study=study)
    cases, gold, attention = summary["cases"], summary["gold"], summary["attention"]
    strata = len(summary["strata"])
    dimensions = study.rubric.dimensions.count()
    raters = study.memberships.filter(
        role=Membership.Role.RATER, status=Membership.Status.ACTIVE
    ).count()
    needed = study.raters_per_item or 1
    items = [
        ChecklistItem(
            order=10,
            title="Test cases",
            done=bool(cases),
            detail=(
                f"{cases} test case{'s' if cases != 1 else ''}"
                + (f" in {strata} strata" if strata > 1 else "")
                + (
                    f", and {gold} gold item{'s' if gold != 1 else ''} and {attention} "
                    f"attention check{'s' if attention != 1 else ''} counted apart"
                    if gold or attention
                    else ""
                )
                + "."
                if cases
                else "None yet: import them from a CSV or JSONL file."
            ),
            url_name="studies:cases",
        ),
        ChecklistItem(
            order=20,
            title="Rubric",
            done=bool(dimensions),
            detail=(
                f"{dimensions} dimension{'s' if dimensions != 1 else ''}."
                if dimensions
                else "No dimension yet: add at least one, or start from a preset."
            ),
            url_name="studies:rubric",
        ),
        ChecklistItem(
            order=40,
            title="Raters",
            done=raters >= needed,
            detail=(
                f"{raters} rater{'s' if raters != 1 else ''} joined"
                + (f"; the design needs at least {needed}." if raters < needed else ".")
                if raters
                else "No rater has joined yet: invite them by username or by link."
            ),
            url_name="annotation:raters",
        ),
        ChecklistItem(
            order=70,
            title="Assignment",
            done=raters >= needed,
            detail=(
                (
                    f"{study.raters_per_item} raters per test case, balanced"
                    if study.raters_per_item
                    else "Every rater rates every test case"
                )
                + (
                    f" (adaptive: up to {study.raters_per_item_max} where the ratings disagree)"
                    if study.adaptive_raters
                    else ""
                )
                + ": each rater gets their cases automatically when the study starts, and "
                "raters who join later when they join."
                + (
                    ""
                    if raters >= needed
                    else f" It needs at least {needed} rater{'s' if needed != 1 else ''}."
                )
            ),
            url_name="studies:edit",
        ),
    ]
    items.append(_adjudication_item(study))
    items += checklist_items_registered(study=study)
    return SetupChecklist(items=sorted(items, key=lambda item: item.order))


def _adjudication_item(study: Study) -> ChecklistItem:
    """The adjudication rules: which dimensions go to an adjudicator, and a warning when an
    adjudicator is invited (or has joined) while every rule is "Never" (their queue would
    stay empty, and the rules freeze when the study opens)."""
    set_rules = [
        row["name"]
        for row in adjudication_rules_table(study=study)
        if row["trigger"] != AdjudicationRule.Trigger.NEVER
    ]
    adjudicators = (
        study.memberships.filter(role=Membership.Role.ADJUDICATOR).exists()
        or study.invitations.filter(
            role=Membership.Role.ADJUDICATOR,
            used_at__isnull=True,
            declined_at__isnull=True,
            expires_at__gt=timezone.now(),
        ).exists()
    )
    if set_rules:
        detail = f"Cases go to an adjudicator on {', '.join(set_rules)}."
    else:
        detail = (
            'Every rule is "Never": a case goes to adjudication only when the lead sends it '
            "by hand."
        )
    warning = ""
    if adjudicators and not set_rules:
        warning = (
            'An adjudicator is invited, but every adjudication rule is "Never": their queue '
            "stays empty unless cases are sent by hand. The rules freeze when the study opens."
        )
    return ChecklistItem(
        order=58,
        title="Adjudication rules",
        done=bool(set_rules),
        detail=detail,
        url_name="studies:adjudication_rules",
        optional=True,
        warning=warning,
    )


def study_open_problems(*, study: Study) -> list[str]:
    """What stops the study from starting a pilot or opening, in plain words."""
    problems = []
    if not study.test_cases.exists():
        problems.append("Import the test cases first.")
    dimensions = list(study.rubric.dimensions.all())
    if not dimensions:
        problems.append("Add at least one dimension to the rubric.")
    # A dimension comparing two responses needs every case to have exactly two (the study
    # may have more systems, each case comparing two of them).
    cases_not_pairs = (
        study.test_cases.annotate(n_responses=Count("responses")).exclude(n_responses=2).count()
    )
    for dimension in dimensions:
        try:
            scoring = dimension.scoring()
        except RubricValueError as error:
            problems.append(f"Rubric: {error}")
            continue
        if scoring.compares_two and cases_not_pairs:
            problems.append(
                f"{dimension.name} compares two responses, but {cases_not_pairs} test case(s) "
                "do not have exactly two."
            )
    if dimensions and study.success_min_dimensions > len(dimensions):
        problems.append(
            f"The success criterion needs alpha on {study.success_min_dimensions} dimensions, "
            f"but the rubric has {len(dimensions)}. Lower it in the settings."
        )
    return problems

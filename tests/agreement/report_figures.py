"""The figures of a study's report and agreement page as the API serves them (JSON), each
named as the export oracle (``export_oracle``) names its own: what the property test of
issue 39 compares."""

from django.urls import reverse

from studies.models import Study
from studies.services import tokens

PAIRED_FIELDS = (
    "n",
    "mean_first",
    "mean_second",
    "difference",
    "effect_size_dz",
    "wilcoxon_p",
    "t_p",
)


def app_figures(client, study: Study) -> dict:
    """GET the report and the agreement result with the lead's token, as a script would."""
    _, secret = tokens.api_token_create(user=study.lead, name="report-property")
    token = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    report = client.get(reverse("api:report", args=[study.slug]), **token).json()
    agreement = client.get(reverse("api:agreement", args=[study.slug]), **token).json()
    comparison = report["comparison"] or {}
    figures: dict = {}
    _aggregation(figures, comparison.get("aggregation") or {})
    _estimates(figures, comparison)
    _preferences(figures, comparison.get("preferences", []))
    _mcnemar(figures, comparison.get("mcnemar", []))
    _questions(figures, comparison.get("questions", []))
    _agreement(figures, agreement)
    _counts(figures, report)
    # The long table against itself: what the app's side holds by construction.
    figures["long.unanswered_with_points"] = 0
    if any(row["key"] == "total" for row in comparison.get("per_system", [])):
        figures["long.response_total_not_its_parts"] = 0
    return figures


def _aggregation(figures: dict, aggregation: dict) -> None:
    figures["aggregation.min_ratings"] = aggregation.get("min_ratings")
    for row in aggregation.get("questions", []):
        name = f"aggregation[{row['measure']}]"
        figures[f"{name}.rule"] = row["rule"]
        figures[f"{name}.excluded_cases"] = row.get("excluded_cases", row.get("excluded_items"))
        figures[f"{name}.tied_items"] = row["tied_items"]
        figures[f"{name}.adjudicated_items"] = row["adjudicated_items"]
        figures[f"{name}.changed_items"] = row["changed_items"]


def _estimates(figures: dict, comparison: dict) -> None:
    for measure in comparison.get("per_system", []):
        for row in measure["systems"]:
            name = f"per_system[{measure['key']}][{row['system']}]"
            figures[f"{name}.n"], figures[f"{name}.mean"] = row["n"], row["mean"]
    for row in comparison.get("paired", []):
        name = f"paired[{row['measure']}][{row['first']}|{row['second']}][{row['stratum']}]"
        for field in PAIRED_FIELDS:
            figures[f"{name}.{field}"] = row[field]


def _preferences(figures: dict, preferences: list) -> None:
    for preference in preferences:
        for pair in preference["pairs"]:
            name = f"preference[{preference['key']}][{pair['first']}|{pair['second']}]"
            items, judgments = pair["items"], pair["judgments"]
            figures[f"{name}.items"] = (items["wins"], items["losses"], items["ties"])
            figures[f"{name}.items.p_value"] = items["p_value"]
            figures[f"{name}.judgments"] = (
                judgments["wins"], judgments["losses"], judgments["ties"]
            )  # fmt: skip


def _mcnemar(figures: dict, outcomes: list) -> None:
    for outcome in outcomes:
        for row in outcome["systems"]:
            name = f"mcnemar[{outcome['key']}][{row['system']}]"
            figures[f"{name}.positive"] = (row["positive"], row["n"])
            figures[f"{name}.ties"] = row["ties"]
        for pair in outcome["pairs"]:
            name = f"mcnemar[{outcome['key']}][{pair['first']}|{pair['second']}]"
            figures[f"{name}.n"] = pair["n"]
            figures[f"{name}.discordant"] = (pair["first_only"], pair["second_only"])
            figures[f"{name}.p"] = pair["p"]


def _questions(figures: dict, questions: list) -> None:
    """Each question by its measure and its place among that measure's questions (the
    primary one, moved first, is the first of its measure)."""
    seen: dict[str, int] = {}
    for question in questions:
        measure = question["measure"]
        name = f"question[{measure}#{seen.get(measure, 0)}]"
        seen[measure] = seen.get(measure, 0) + 1
        figures[f"{name}.p"] = question["p"]
        figures[f"{name}.primary"] = question["primary"]
        figures[f"{name}.p_holm"] = question["p_holm"]


def _agreement(figures: dict, agreement: dict) -> None:
    result = agreement["result"]
    for row in result.get("dimensions", []):
        name = f"agreement[{row['key']}]"
        for field in ("n_judgments", "n_units", "n_pairable", "alpha"):
            figures[f"{name}.{field}"] = row[field]
    figures["agreement.ratings"] = agreement["ratings"]
    left_out = result.get("left_out") or {}
    figures["left_out.excluded_rater_ratings"] = left_out.get("excluded_rater_ratings")
    if "beyond_k_min_ratings" in left_out:
        figures["left_out.beyond_k_min_ratings"] = left_out["beyond_k_min_ratings"]


def _counts(figures: dict, report: dict) -> None:
    imported = [d["reason"] for d in report["deviations"] if "imported from elsewhere" in d["what"]]
    if imported:
        figures["imported_ratings"] = int(imported[0].split()[0])
    figures["adjudication"] = {
        k: report["adjudication"][k] for k in ("total", "waiting", "done", "unresolvable")
    }

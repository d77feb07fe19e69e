"""The study report: every section a paper needs, the protocol's reporting checklist, and
the numbers of ``results.json`` (one dict, read by the page, the bundle and the file).

Before unblinding the report names no system and shows no estimate: only label-free
counts and the agreement, which never reads a system.
"""

from django.db.models import Count

from agreement.analysis.jobs import AnalysisPending, analysis_shown, robustness_analysis
from agreement.report.raters import raters_item
from agreement.selectors import agreement_is_stale, study_agreement
from agreement.selectors.monitor import monitor_report
from agreement.services.plan import (
    aggregation_choices,
    aggregation_get,
    plan_setting_named,
    primary_measure_get,
    primary_measure_named,
)
from annotation.models import ConsentRecord, QualificationAttempt, StudyFeedback
from annotation.selectors import incomplete_ratings
from annotation.selectors.adaptive import adaptive_summary
from annotation.selectors.adjudicated_labels import adjudication_counts
from annotation.selectors.imported import (
    imported_raters_per_case,
    imported_ratings_count,
    rubric_rates_responses,
)
from annotation.selectors.profile import profile_summary
from annotation.selectors.skips import study_skip_summary
from jobs.models import Job
from studies.exposure import exposure_limits
from studies.models import Membership, Study, StudyEvent, TestCase
from studies.selectors import rubric_for_display

# Edits after the study opened that a report lists as deviations from the frozen protocol.
DEVIATION_KINDS = (
    StudyEvent.Kind.SETTINGS_CHANGED,
    StudyEvent.Kind.CASES_IMPORTED,
    StudyEvent.Kind.CASES_REMOVED,
    StudyEvent.Kind.RUBRIC_CHANGED,
    StudyEvent.Kind.REOPENED,
    StudyEvent.Kind.ADMIN_CHANGED,
    # 7.3's action: a dimension below its target switched to every disagreement.
    StudyEvent.Kind.ADJUDICATION_SWITCHED,
)
EXCLUSION_KINDS = (
    StudyEvent.Kind.RATER_EXCLUDED,
    StudyEvent.Kind.RATER_REINSTATED,
    StudyEvent.Kind.RATER_PAUSED,
    StudyEvent.Kind.RATER_SENT_TO_RETRAINING,
)
CHECKLIST = (
    ("systems", "Systems and versions evaluated"),
    ("sampling", "Item sampling method and strata, with counts"),
    ("instructions", "Exact instructions, rubric and interface"),
    ("raters", "Rater number, recruitment, expertise, training and pay"),
    ("ethics", "Ethics review and consent process"),
    ("blinding", "Blinding and randomisation procedure"),
    ("aggregation", "Ratings per item and aggregation rule"),
    ("agreement", "Agreement statistic per criterion with interval"),
    ("quality", "Quality control results and exclusions with counts"),
    ("estimates", "Estimates with intervals, tests and corrections"),
    ("deviations", "Deviations from the protocol, with reasons"),
    ("release", "Release of anonymised ratings"),
)
MAX_LISTED = 500


def _when(value) -> str | None:
    return value.isoformat() if value else None


def study_report(*, study: Study) -> dict:
    """Everything the report shows, JSON-ready; system names only after unblinding."""
    unblinded = study.is_unblinded
    agreement = study_agreement(study=study)
    result = agreement.result or {}
    raters = _raters(study)
    withdrawn = [rater["pseudonym"] for rater in raters if rater["status"] == "withdrawn"]
    systems = study.systems.order_by("name").values_list("name", flat=True)
    report = {
        "study": _study_section(study),
        "unblinded": unblinded,
        "systems": list(systems) if unblinded else [],
        "n_systems": study.systems.count(),
        "sampling": _sampling(study),
        "instructions": study.instructions,
        "rubric": _rubric(study),
        "raters": raters,
        "raters_item": raters_item(study=study, raters=raters),
        # Protocol 4.1's characteristics: aggregate counts only, small cells suppressed.
        "profile": profile_summary(study=study),
        "blinding": _blinding(study, unblinded=unblinded),
        "design": _design(study),
        "agreement": _agreement(study, agreement, result, unblinded=unblinded),
        "quality": {
            "flags": result.get("qc", {}),
            "decisions": _exclusions(study),
            "skips": _skips(study),
        },
        "summary": result.get("summary"),
        "comparison": result.get("comparison") if unblinded else None,
        "comparison_failed": bool(result.get("comparison_failed")) and unblinded,
        "robustness": _robustness(study, result.get("comparison")) if unblinded else None,
        "deviations": _deviations(study, result, withdrawn=withdrawn),
        "primary_named": primary_measure_named(study=study),
        "primary": _primary(study, result.get("comparison") if unblinded else None),
        # Monitored collection of the primary question: symmetric until unblinding.
        "monitor": monitor_report(
            study=study, comparison=result.get("comparison") if unblinded else None
        ),
        "aggregation": _aggregation(study),
        "adjudication": adjudication_counts(
            study=study, case_ids=list(study.test_cases.in_sample().values_list("pk", flat=True))
        ),
        "feedback": _feedback(study),
        "exposure": _exposure(study),
    }
    report["checklist"] = _checklist(report, study)
    return report


def _study_section(study: Study) -> dict:
    return {
        "name": study.name,
        "slug": study.slug,
        "status": study.get_status_display(),
        "description": study.description,
        "opened_at": _when(study.opened_at),
        "closed_at": _when(study.closed_at),
        "unblinded_at": _when(study.unblinded_at),
        "protocol_fingerprint": study.protocol_fingerprint,
    }


def _sampling(study: Study) -> list[dict]:
    strata = (
        study.test_cases.values("purpose", "stratum")
        .annotate(n=Count("pk"))
        .order_by("purpose", "stratum")
    )
    return [
        {"purpose": row["purpose"], "stratum": row["stratum"], "n_cases": row["n"]}
        for row in strata
    ]


def _exposure(study: Study) -> dict | None:
    """The daily exposure limits raters were held to, as the protocol states them; None
    when the study set none."""
    limits = exposure_limits(study=study)
    return limits.document() if limits else None


def _rubric(study: Study) -> list[dict]:
    keys = ("key", "name", "kind", "scope", "max", "level", "options", "criteria")
    return [
        {key: d[key] for key in keys} | {"bands": d["band_labels"]}
        for d in rubric_for_display(rubric=study.rubric)
    ]


def _raters(study: Study) -> list[dict]:
    """Each rater by pseudonym: status, consent (with prior knowledge), qualification."""
    raters = (
        study.memberships.filter(role=Membership.Role.RATER)
        .order_by("pseudonym")
        .values_list("pk", "pseudonym", "status")
    )
    consents = {
        rater_id: prior
        for rater_id, prior in ConsentRecord.objects.filter(
            rater__study=study, rater__role=Membership.Role.RATER
        )
        .order_by("rater_id", "version")
        .values_list("rater_id", "prior_knowledge")
    }
    qualified = dict(
        QualificationAttempt.objects.filter(rater__study=study, passed__isnull=False)
        .order_by("rater_id", "number")
        .values_list("rater_id", "passed")
    )
    return [
        {
            "pseudonym": pseudonym,
            "status": status,
            "prior_knowledge": consents.get(pk),
            "consented": pk in consents,
            "qualified": qualified.get(pk),
        }
        for pk, pseudonym, status in raters
    ]


def _blinding(study: Study, *, unblinded: bool) -> dict:
    return {
        # Like the exports' data dictionary: with the public procedure the seed could
        # help rebuild the key, so it is given only once the key is public.
        "seed": study.blinding_seed if unblinded else None,
        "side_mode": study.get_side_mode_display(),
        "procedure": "docs/blinding.md: labels A, B, ... shuffled per test case from the "
        "study's seed; each rater's case order shuffled; the key kept apart until "
        "unblinding.",
    }


def _aggregation(study: Study) -> dict:
    """The analysis plan's aggregation: each question's rule, the minimum of valid ratings
    per item, and whether they were set before the study opened. Label-free: the counts of
    excluded, tied and adjudicated items come with the estimates, after unblinding."""
    plan = aggregation_get(study=study)
    return {
        "questions": [
            {
                "key": row["key"],
                "name": row["name"],
                "rule": row["rule"],
                "rule_name": dict(row["rules"])[row["rule"]],
                "default": row["rule"] == row["default"],
                "analysed_apart": row["apart"],
            }
            for row in aggregation_choices(study=study)
        ],
        "min_ratings": plan["min_ratings"],
        "min_ratings_set": plan["min_ratings_set"],
        "named": plan_setting_named(study=study, fields=("aggregation", "min_ratings")),
    }


def _primary(study: Study, comparison: dict | None) -> dict:
    """The analysis plan's primary question: its measure ("" = none named) and whether the
    estimates ask it (a measure no longer in the rubric is not asked: no question is then
    reported uncorrected)."""
    questions = (comparison or {}).get("questions") or []
    return {
        "measure": primary_measure_get(study=study),
        "asked": any(question.get("primary") for question in questions),
    }


def _raters_per_item_text(study: Study) -> str:
    """The design as it is: a fixed k balanced over the raters, or every rater on every
    case (no fixed k); for ratings imported from a file, what the file gave each case."""
    k = study.raters_per_item
    counts = imported_raters_per_case(study_id=study.pk)
    if counts:
        low, high = min(counts), max(counts)
        spread = f"{low}" if low == high else f"{low} to {high}"
        parts = ", ".join(
            f"{raters} on {cases} case{'s' if cases != 1 else ''}"
            for raters, cases in counts.items()
        )
        setting = f"; the study's setting says {k}" if k and (low, high) != (k, k) else ""
        return (
            f"Ratings imported from a file: {spread} rater{'s' if high != 1 else ''} per "
            f"test case ({parts}){setting}"
        )
    if k:
        return f"{k} rater{'s' if k != 1 else ''} per test case, assigned balanced"
    return "Every rater rates every test case (no fixed number of raters per case)"


def _design(study: Study) -> dict:
    return {
        "raters_per_item": study.raters_per_item,
        "raters_per_item_text": _raters_per_item_text(study),
        "aggregation": "per test case and system, each question's rule (below; the total "
        "score is always the mean of the raters' totals); items with fewer valid ratings "
        "than the minimum are excluded and counted",
        "success_alpha": float(study.success_alpha),
        "success_min_dimensions": study.success_min_dimensions,
        "adaptive": _adaptive(study),
    }


def _adaptive(study: Study) -> dict | None:
    """The adaptive design's account: k_min to k_max, the cases that got extra raters, and
    the ratings saved against k_max on every case; None in a fixed design. Counts only."""
    summary = adaptive_summary(study=study)
    if summary is None:
        return None
    return {
        "k_min": summary.k_min,
        "k_max": summary.k_max,
        "text": (
            f"Adaptive design: {summary.k_min} to {summary.k_max} raters per test case. Every "
            f"case got {summary.k_min} raters; one more rater at a time, up to "
            f"{summary.k_max}, where its ratings so far disagreed by the dimension's "
            "aggregation rule or triggered its adjudication rule. Agreement is computed on "
            f"the first {summary.k_min} ratings of each case; the labels and the comparison "
            "of systems read every rating."
        ),
        "cases": summary.cases,
        "extended": summary.extended,
        "by_raters": [
            {"raters": raters, "cases": cases} for raters, cases in summary.by_raters.items()
        ],
        "ratings": summary.ratings,
        "ratings_at_k_max": summary.k_max * summary.cases,
        "saved": summary.saved,
    }


def _agreement(study: Study, agreement, result: dict, *, unblinded: bool) -> dict:
    return {
        "computed_at": _when(agreement.computed_at),
        "stale": agreement_is_stale(study=study, agreement=agreement),
        "intervals_pending": bool(result.get("intervals_pending")),
        "dimensions": result.get("dimensions", []),
        "success": result.get("success"),
        "left_out": result.get("left_out") or {},
        "bootstrap": _without_seed(result.get("bootstrap"), keep=unblinded),
    }


def _robustness(study: Study, comparison: dict | None) -> dict:
    """The mixed-effects robustness check beside the primary estimates (after unblinding):
    as its job kept it for the data as they are, or that it is not computed yet. A read."""
    from agreement.analysis.robustness import robustness_rows  # the statistics load numpy

    shown = analysis_shown(analysis=robustness_analysis(study=study))
    if isinstance(shown, AnalysisPending):
        status = shown.status or {}
        ended = status.get("state") in (Job.State.FAILED, Job.State.STOPPED)
        return {
            "computed": False,
            "running": shown.job is not None and not ended,
            "error": status.get("error", "") if ended else "",
        }
    return {
        "computed": True,
        "available": bool(shown.get("available")),
        "reason": shown.get("reason", ""),
        "alpha": shown.get("alpha"),
        "rows": robustness_rows(shown, comparison),
    }


def _deviations(study: Study, result: dict, *, withdrawn: list[str]) -> list[dict]:
    """Edits after opening, pilot data left out and withdrawals: departures from the plan."""
    deviations = []
    if study.opened_at:
        events = study.events.filter(kind__in=DEVIATION_KINDS, created_at__gt=study.opened_at)
        deviations = [
            {"when": _when(e.created_at), "what": e.get_kind_display(), "reason": e.reason}
            for e in events.order_by("created_at")[:MAX_LISTED]
        ]
    left_out = result.get("left_out") or {}
    if left_out.get("other_phase_ratings"):
        deviations.append(
            {
                "when": None,
                "what": "Pilot data left out of the analysis",
                "reason": f"{left_out['other_phase_ratings']} ratings from the pilot",
            }
        )
    if withdrawn:
        deviations.append({"when": None, "what": "Raters withdrew", "reason": ", ".join(withdrawn)})
    left = list(
        study.test_cases.filter(purpose=TestCase.Purpose.LEFT_OUT)
        .order_by("position")
        .values_list("case_id", flat=True)[: MAX_LISTED + 1]
    )
    if left:
        listed = ", ".join(left[:MAX_LISTED]) + (", ..." if len(left) > MAX_LISTED else "")
        deviations.append(
            {
                "when": None,
                "what": "Cases left out of the sample",
                "reason": "quality items taken back, whose key had been shown by system: " + listed,
            }
        )
    incomplete = incomplete_ratings(study=study)
    if incomplete.cases:
        deviations.append(
            {
                "when": None,
                "what": "Ratings lacking a required answer",
                "reason": f"{incomplete.cases} submitted case"
                f"{'s' if incomplete.cases != 1 else ''} lacking a required answer, by "
                f"{', '.join(incomplete.raters)} (submitted before answers were required; "
                "kept as given: the unanswered parts are missing, and so are those totals)",
            }
        )
    imported = imported_ratings_count(study_id=study.pk)
    if imported:
        # A rubric of preferences only records a verdict per rater and case (issue 39).
        what = "ratings" if rubric_rates_responses(study_id=study.pk) else "verdicts"
        deviations.append(
            {
                "when": None,
                "what": "Ratings imported from elsewhere",
                "reason": f"{imported} {what} imported from elsewhere, not blinded by Concord",
            }
        )
    return deviations


def _skips(study: Study) -> dict:
    """Skipped cases (protocol 3), counted apart from ratings: per case, rater, stratum
    and reason, the cases left short of k, and raters who skip much of a stratum."""
    summary = study_skip_summary(study=study)
    return {
        "total": summary.total,
        "cases": len(summary.per_case),
        # Most skipped first; the report lists the first MAX_LISTED.
        "per_case": [
            {"case": case_id, "stratum": stratum, "skips": count}
            for case_id, stratum, count in summary.per_case[:MAX_LISTED]
        ],
        "handed_on": summary.handed_on,
        "k_unmet": summary.k_unmet,
        "per_rater": dict(summary.per_rater),
        "per_stratum": dict(summary.per_stratum),
        "reasons": dict(summary.reasons),
        "heavy": [
            {"rater": h.rater, "stratum": h.stratum, "skipped": h.skipped, "assigned": h.assigned}
            for h in summary.heavy
        ],
    }


def _exclusions(study: Study) -> list[dict]:
    """The coordinators' decisions about raters (exclusions, pauses), with their reasons."""
    events = study.events.select_related("membership").filter(kind__in=EXCLUSION_KINDS)
    return [
        {
            "when": _when(e.created_at),
            "rater": e.membership.pseudonym if e.membership else "",
            "decision": e.get_kind_display(),
            "reason": e.reason,
        }
        for e in events.order_by("created_at")[:MAX_LISTED]
    ]


def _without_seed(bootstrap: dict | None, *, keep: bool) -> dict | None:
    if not bootstrap or keep:
        return bootstrap
    return {key: value for key, value in bootstrap.items() if key != "seed"}


def _feedback(study: Study) -> dict:
    """Raters' end-of-study feedback: clarity per dimension counted, texts listed."""
    rows = StudyFeedback.objects.filter(rater__study=study).select_related("rater")
    clarity: dict[str, dict[str, int]] = {}
    comments = []
    for feedback in rows.order_by("rater__pseudonym")[:MAX_LISTED]:
        for key, answer in (feedback.dimensions or {}).items():
            if isinstance(answer, dict) and answer.get("clarity"):
                counts = clarity.setdefault(key, {"clear": 0, "mostly": 0, "unclear": 0})
                if answer["clarity"] in counts:
                    counts[answer["clarity"]] += 1
        for field in ("suggestions", "patterns", "notes"):
            text = getattr(feedback, field)
            if text:
                comments.append({"rater": feedback.rater.pseudonym, "about": field, "text": text})
    return {"n": rows.count(), "clarity": clarity, "comments": comments}


def _checklist(report: dict, study: Study) -> list[dict]:
    """The protocol's reporting checklist (section 10), each item done or missing."""
    agreement = report["agreement"]
    comparison = report["comparison"]
    done = {
        "systems": bool(report["systems"]),
        "sampling": bool(report["sampling"]),
        "instructions": bool(report["rubric"]) and bool(study.protocol_fingerprint),
        "raters": not report["raters_item"]["missing"],
        "ethics": bool(study.consent_text) and any(r["consented"] for r in report["raters"]),
        "blinding": True,
        "aggregation": True,
        "agreement": bool(agreement["dimensions"]) and bool(agreement["bootstrap"]),
        "quality": bool(agreement["computed_at"]),
        "estimates": bool(comparison) and bool(comparison.get("questions")),
        "deviations": bool(study.opened_at),
        "release": report["unblinded"],
    }
    why = {
        "systems": "named after unblinding",
        "raters": "needs " + "; ".join(report["raters_item"]["missing"]),
        "instructions": "the protocol is frozen when the study opens",
        "ethics": "needs a consent text and raters' consent",
        "agreement": "needs ratings and their intervals",
        "quality": "needs ratings",
        "estimates": "computed after unblinding",
        "deviations": "listed once the study has opened",
        "release": "the anonymised exports are released after unblinding",
    }
    return [
        {
            "key": key,
            "item": label,
            "done": done[key],
            "missing": "" if done[key] else why.get(key, ""),
        }
        for key, label in CHECKLIST
    ]

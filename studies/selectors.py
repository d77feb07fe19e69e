"""Reads for coordinators."""

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User
from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.utils import timezone

from . import protocol
from .activity import rating_activity
from .bulk_rows import batches
from .exposure import exposure_limits
from .importing.cases import ParsedCases, parse_cases
from .importing.identity_check import (
    MAX_LISTED,
    IdentityScanner,
    Mention,
    find_identity_mentions,
)
from .importing.read_ahead import read_ahead
from .importing.tabular import Source
from .models import (
    AdjudicationRule,
    ApiToken,
    BlindedLabel,
    ExpectedAnswer,
    IdentityMention,
    Invitation,
    Membership,
    ProfileQuestion,
    QualitySettings,
    StratumSetting,
    Study,
    StudyEvent,
    TestCase,
    WelfareSettings,
)
from .protocol_parts import protocol_parts
from .rubric import RubricValueError
from .setup_checklist import ChecklistItem, SetupChecklist, checklist_items_registered


def coordinated_studies(*, user):
    if not user.is_authenticated:
        return Study.objects.none()
    scope = Q(lead=user) | Q(memberships__user=user, memberships__role=Membership.Role.COORDINATOR)
    if user.is_staff:
        scope = Q()
    return Study.objects.filter(scope).distinct().order_by("name")


def rubric_for_display(*, rubric) -> list[dict]:
    """Everything the rating form and its help need about each dimension."""
    dimensions = []
    for dimension in rubric.dimensions.all():
        scoring = dimension.scoring()
        # What every dimension may carry; the kind's own settings come from its class.
        config = dimension.config
        dimensions.append(
            {
                "key": dimension.key,
                "name": dimension.name,
                "kind": dimension.kind,
                "scope": scoring.scope,
                "max": scoring.max_points,
                "measure": config.get("measure", ""),
                "example": config.get("example", ""),
                "edge_cases": config.get("edge_cases", ""),
                # unit, item, half_weight_hint, bands, band_labels, criteria.
                **scoring.rating_help(),
                # Scales, categories and pairwise labels: [{"value", "label", "anchor"}].
                "options": scoring.display_options(),
                "counts_in_total": scoring.max_points > 0,
                "lists_items": scoring.lists_items,
                "level": dimension.level,
            }
        )
    return dimensions


# --- Study set-up ------------------------------------------------------------------------


def case_content_warnings(*, test_case: TestCase) -> list[str]:
    """The warnings a rater reads before this case's prompt and responses: its stratum's
    (``StratumSetting``), then its own, each once. The one place this rule lives.

    A warning belongs to the case, never to one of its responses: it says nothing about
    which system wrote what.
    """
    stratum_warning = (
        StratumSetting.objects.filter(study_id=test_case.study_id, stratum=test_case.stratum)
        .values_list("content_warning", flat=True)
        .first()
    )
    warnings = [(stratum_warning or "").strip(), test_case.content_warning.strip()]
    return list(dict.fromkeys(w for w in warnings if w))


def skips_handed_on(*, study: Study) -> bool:
    """Whether the study's design gives a skipped case to another rater: the balanced
    design (k raters per test case) does; where every rater rates every test case there is
    no one to give it to, so the case has one rating fewer. The one place this rule lives:
    the skip itself (``annotation.services.skipping``) and every text that tells raters
    and coordinators what a skip does ask it."""
    return bool(study.raters_per_item)


def information_sheet_additions(*, study: Study) -> list[str]:
    """What the information sheet says on the study's behalf about content and welfare
    (protocol 3), as the rater reads it before consenting, and as their consent records it.

    The content warnings of the strata (their texts, never the strata's names), that some
    cases carry a warning of their own, the right to skip any case, and the daily limits.
    """
    additions = []
    warnings = (
        StratumSetting.objects.filter(study=study)
        .exclude(content_warning="")
        .order_by("stratum")
        .values_list("content_warning", flat=True)
    )
    for warning in dict.fromkeys(w.strip() for w in warnings if w.strip()):
        additions.append(f"Some cases come with this content warning, shown before them: {warning}")
    if study.test_cases.exclude(content_warning="").exists():
        additions.append("Some cases carry a content warning of their own, shown before them.")
    handed_on = (
        "a skipped case is offered to another rater"
        if skips_handed_on(study=study)
        else "every rater rates every case in this study, so a skipped case is not given "
        "to anyone else"
    )
    additions.append(
        "You may skip any case, with or without a reason, before or after reading it; "
        f"{handed_on}, and skipping never counts against you."
    )
    limits = exposure_limits(study=study)
    if limits.daily_minutes is not None:
        additions.append(
            f"You rate for at most {_minutes_text([limits.daily_minutes])} of active time a "
            "day in this study; the app tells you when you can go on."
        )
    if limits.strata:
        # Each limit, never the stratum it belongs to (a stratum's name may say too much).
        additions.append(
            "Some kinds of cases have a daily limit of their own: "
            f"{_minutes_text(sorted(set(limits.strata.values())))} of active time a day; once "
            "you reach a limit, the app offers you other cases or tells you when you can go on."
        )
    return additions


def _minutes_text(values: list[int]) -> str:
    """ "45 minutes", "1 minute", "30 or 45 minutes", "15, 30 or 45 minutes"."""
    numbers = [str(value) for value in values]
    listed = numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} or {numbers[-1]}"
    return f"{listed} minute{'' if values == [1] else 's'}"


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
        "systems": list(study.systems.values_list("name", flat=True)),
        "strata": sorted((name, count) for name, count in strata.items() if name),
        "unstratified": strata.get("", 0),
    }


def test_cases_preview(
    *,
    study: Study,
    filename: str,
    data: Source,
    sink: Callable[[dict], None] | None = None,
    ahead: bool = False,
) -> ParsedCases:
    """Check a file against the study (its ids and systems); writes nothing itself.

    ``data`` is the file's bytes or its path; ``sink`` as for ``parse_cases``. ``ahead``:
    the file is read and checked in a thread of its own (``read_ahead``), a few chunks
    ahead of the sink, which runs in the caller's thread (an import that writes each case
    overlaps the reading with its writes).
    """
    existing_ids = set(study.test_cases.values_list("case_id", flat=True))
    study_systems = list(study.systems.values_list("name", flat=True))

    def read(into: Callable[[dict], None] | None) -> ParsedCases:
        return parse_cases(
            filename=filename,
            data=data,
            existing_ids=existing_ids,
            study_systems=study_systems,
            sink=into,
        )

    if ahead and sink is not None:
        return read_ahead(read, sink)
    return read(sink)


def study_protocol_chunks(*, study: Study) -> Iterator[bytes]:
    """The frozen protocol document as canonical JSON, a piece at a time: its test cases,
    the bulk of it, are read and written a chunk at a time, so that memory stays flat
    whatever their number (held whole, 10,000 cases of 2 KB peaked at 132 MB; now 6 MB)."""
    dimensions = list(study.rubric.dimensions.order_by("position"))
    head = {
        "format": protocol.FORMAT,
        "instructions": study.instructions,
        "rubric": [
            {
                "key": d.key,
                "name": d.name,
                "kind": d.kind,
                "level": d.level,
                "config": d.config,
            }
            for d in dimensions
        ],
        "blinding": {
            "seed": study.blinding_seed,
            # The secret itself, not a hash of it: without it the fingerprint could be
            # brute-forced over the 2^n possible keys by someone who knows the texts.
            "secret": study.blinding_secret,
            "side_mode": study.side_mode,
            "systems": sorted(study.systems.values_list("name", flat=True)),
        },
        "success_criterion": {
            "alpha": f"{study.success_alpha:.3f}",
            "min_dimensions": study.success_min_dimensions,
        },
        "quality_control": _quality_document(study),
        # How the rating screen asks for the answer (frozen with the rest, see
        # ``services.PROTOCOL_FIELDS``).
        "rating_screen": {
            "explanation_first": study.explanation_first,
            "case_layout": study.case_layout,
        },
    }
    adjudication = _adjudication_document(study, [d.key for d in dimensions])
    # Only when a rule asks for adjudication: a study without rules keeps the document
    # (and the fingerprint) it had before adjudication existed.
    if adjudication:
        head["adjudication"] = adjudication
    # Likewise the daily exposure limits, only when the study sets one.
    limits = exposure_limits(study=study)
    if limits:
        head["exposure"] = limits.document()
    # And the adaptive design, only in a study that has one.
    adaptive = study.adaptive_raters
    if adaptive:
        head["adaptive_raters"] = {"k_min": adaptive[0], "k_max": adaptive[1]}
    # And the strata's content warnings, which raters read before those cases.
    warnings = (
        StratumSetting.objects.filter(study=study)
        .exclude(content_warning="")
        .order_by("stratum")
        .values_list("stratum", "content_warning")
    )
    if warnings:
        head["content_warnings"] = [
            {"stratum": stratum, "content_warning": warning} for stratum, warning in warnings
        ]
    # The parts the apps above own (``protocol_parts``), each only when the study has it.
    head.update(protocol_parts(study=study))
    return protocol.canonical_json_chunks(
        head, last="test_cases", items=_protocol_test_cases(study)
    )


def _adjudication_document(study: Study, keys: list[str]) -> list[dict]:
    """The adjudication rules as planned, in rubric order: the dimensions whose rule is
    not "never" (7.3's switch is a deviation recorded apart, never part of the plan)."""
    rules = {
        rule.dimension_key: rule
        for rule in AdjudicationRule.objects.filter(study=study).exclude(
            trigger=AdjudicationRule.Trigger.NEVER
        )
    }
    return [
        {
            "dimension": key,
            "trigger": rules[key].trigger,
            "values": rules[key].values,
            "tolerance": rules[key].tolerance,
        }
        for key in keys
        if key in rules
    ]


PROTOCOL_CHUNK = 2000


def _protocol_test_cases(study: Study) -> Iterator[dict]:
    """The test cases in order, each with its response texts by blinded label. Read as
    tuples, not model instances: at 10,000 cases the instances were most of the cost."""
    cases = study.test_cases.order_by("position").values_list(
        "pk", "case_id", "prompt", "context", "stratum", "content_warning"
    )
    for chunk in batches(cases.iterator(chunk_size=PROTOCOL_CHUNK), PROTOCOL_CHUNK):
        yield from _protocol_cases_with_texts(chunk)


def _protocol_cases_with_texts(chunk: list[tuple]) -> Iterator[dict]:
    texts: dict[int, dict[str, str]] = {}
    labels = BlindedLabel.objects.filter(test_case_id__in=[case[0] for case in chunk])
    for test_case_id, label, text in labels.values_list("test_case_id", "label", "response__text"):
        texts.setdefault(test_case_id, {})[label] = text
    for pk, case_id, prompt, context, stratum, warning in chunk:
        case = {
            "id": case_id,
            "prompt": prompt,
            "context": context,
            "stratum": stratum,
            "responses": texts.get(pk, {}),
        }
        if warning:  # only where there is one: a case without keeps its former document
            case["content_warning"] = warning
        yield case


def quality_settings_for(*, study: Study) -> QualitySettings:
    """The study's quality rules; the protocol template's defaults when none were saved."""
    return QualitySettings.objects.filter(study=study).first() or QualitySettings(study=study)


def welfare_settings_for(*, study: Study) -> WelfareSettings:
    """The study's rater-welfare settings; the defaults (nothing set) when none were saved."""
    return WelfareSettings.objects.filter(study=study).first() or WelfareSettings(study=study)


def study_strata(*, study: Study) -> list[str]:
    """The strata of the study's test cases ("" for cases without one), in order."""
    return sorted(set(study.test_cases.values_list("stratum", flat=True).distinct()))


def welfare_strata_table(*, study: Study) -> list[dict]:
    """One row per stratum of the study's cases: its content warning and daily limit, and
    how many test cases it has."""
    counts = dict(
        study.test_cases.values("stratum").annotate(n=Count("pk")).values_list("stratum", "n")
    )
    saved = {s.stratum: s for s in StratumSetting.objects.filter(study=study)}
    return [
        {
            "stratum": stratum,
            "n_cases": counts[stratum],
            "content_warning": saved[stratum].content_warning if stratum in saved else "",
            "daily_minutes": saved[stratum].daily_minutes if stratum in saved else None,
        }
        for stratum in sorted(counts)
    ]


# Words in a test case id that would tell a rater the case is a quality item.
QUALITY_ID_WORDS = ("gold", "attention", "check", "control", "quality", "qc", "trap", "catch")
_DIGITS = re.compile(r"\d+")


def quality_ids_standing_out(*, study: Study) -> list[str]:
    """The gold items' and attention checks' ids that a rater could tell from the sample's.

    Raters' pages never show test case ids, but offline worksheets do. An id stands out
    when it holds a word such as "gold" or "check", or when its form (digits aside:
    "TC-017" is "tc-#") is that of no sample case's id.
    """
    quality = list(
        study.test_cases.exclude(purpose=TestCase.Purpose.SAMPLE)
        .order_by("position")
        .values_list("case_id", flat=True)
    )
    if not quality:
        return []
    sample = study.test_cases.filter(purpose=TestCase.Purpose.SAMPLE).values_list(
        "case_id", flat=True
    )
    forms = {_DIGITS.sub("#", case_id.lower()) for case_id in sample.iterator(chunk_size=5000)}
    return [
        case_id
        for case_id in quality
        if _DIGITS.sub("#", case_id.lower()) not in forms
        or any(word in case_id.lower() for word in QUALITY_ID_WORDS)
    ]


def _quality_document(study: Study) -> dict:
    settings = quality_settings_for(study=study)
    rules = {
        f.name: getattr(settings, f.name)
        for f in QualitySettings._meta.concrete_fields
        if f.name not in ("id", "study")
    }
    rules["position_alpha"] = f"{settings.position_alpha:.3f}"
    items = (
        ExpectedAnswer.objects.filter(test_case__study=study)
        .exclude(test_case__purpose=TestCase.Purpose.SAMPLE)
        .order_by("test_case__position")
        .values_list("test_case__case_id", "test_case__purpose", "answers", "explanation")
    )
    return {
        "rules": rules,
        "items": [
            {"id": case_id, "purpose": purpose, "expected": answers, "explanation": text}
            for case_id, purpose, answers, text in items
        ],
    }


def study_protocol_fingerprint(*, study: Study) -> str:
    return protocol.chunks_fingerprint(study_protocol_chunks(study=study))


# The blinding check lists this many passages, then says how many more there are.
MENTIONS_SHOWN = MAX_LISTED


def study_identity_mentions(
    *, study: Study, limit: int | None = None, from_position: int = 0
) -> list[Mention]:
    """Passages that may name their system or model, as stored when the texts were imported
    (see ``studies.importing.identity_check`` and ``services.identity_mentions_rescan``).

    Ordered by case and system name, never through the blinded labels: listed in label
    order, the first warning of a case would always be Response A's, and the coordinator
    knows which system wrote each text. Within a response, in the scanner's order.
    """
    rows = (
        IdentityMention.objects.filter(
            response__test_case__study=study, response__test_case__position__gte=from_position
        )
        .order_by("response__test_case__position", "response__system__name", "pk")
        .values_list(
            "response__test_case__case_id", "response__system__name", "reason", "matched", "snippet"
        )
    )
    if limit is not None:
        rows = rows[:limit]
    return [
        Mention(case_id=case_id, system=system, reason=reason, matched=matched, snippet=snippet)
        for case_id, system, reason, matched, snippet in rows
    ]


def study_identity_mention_counts(*, study: Study) -> tuple[int, int]:
    """How many passages the blinding check found, and in how many responses."""
    counts = IdentityMention.objects.filter(response__test_case__study=study).aggregate(
        passages=Count("pk"), responses=Count("response", distinct=True)
    )
    return counts["passages"], counts["responses"]


def study_next_case_position(*, study: Study) -> int:
    """The position the next imported test case takes (as the import's writer numbers
    them): the cases an import adds start here."""
    return study.test_cases.count()


def study_identity_report(*, study: Study, from_position: int = 0) -> dict:
    """The blinding check's hits in the cases from ``from_position`` on (an import's), for
    the command and the API: the total, and the first ``MAX_LISTED`` with their phrase."""
    total = IdentityMention.objects.filter(
        response__test_case__study=study, response__test_case__position__gte=from_position
    ).count()
    listed = study_identity_mentions(study=study, limit=MAX_LISTED, from_position=from_position)
    return {"count": total, "listed": listed}


def study_blinding_check(*, study: Study) -> dict:
    """What the blinding check shows on a page: the first passages and how many there are."""
    passages, _ = study_identity_mention_counts(study=study)
    shown = study_identity_mentions(study=study, limit=MENTIONS_SHOWN) if passages else []
    return {"mentions": shown, "mention_count": passages, "mentions_more": passages - len(shown)}


def test_cases_check(*, study: Study, filename: str, data: Source) -> tuple[ParsedCases, dict]:
    """An upload's check and the blinding check of its texts, in one pass over the file that
    keeps no case beyond the first few (``parsed.cases`` is empty): what the preview shows,
    as ``test_cases_preview`` and ``test_cases_preview_blinding_check`` would show it."""
    known = set(study.systems.values_list("name", flat=True))
    scanners: list[IdentityScanner] = []

    def scan(scanner: IdentityScanner, case: dict) -> None:
        for name in sorted(case["responses"]):
            scanner.scan(case["id"], name, case["responses"][name])

    def sink(case: dict) -> None:
        if not scanners:  # a CSV file's first case has every system of the file
            systems = sorted(known | set(case["responses"]))
            scanners.append(IdentityScanner(systems=systems, keep=MENTIONS_SHOWN))
        scan(scanners[0], case)

    parsed = test_cases_preview(study=study, filename=filename, data=data, sink=sink)
    scanner = scanners[0] if scanners else None
    wanted = known | set(parsed.systems)
    if parsed.ok and scanner is not None and not wanted <= scanner.systems:
        # A system first seen after the first case (a JSONL file, an arena-style study):
        # its name is looked for in every text, in a second pass.
        scanner = IdentityScanner(systems=sorted(wanted), keep=MENTIONS_SHOWN)
        test_cases_preview(
            study=study, filename=filename, data=data, sink=lambda case: scan(scanner, case)
        )
    mentions = scanner.mentions if scanner is not None else []
    count = scanner.count if scanner is not None else 0
    check = {
        "mentions": mentions,
        "mention_count": count,
        "mentions_more": count - len(mentions),
        # The names the texts were scanned for: the import stores these mentions instead of
        # scanning again when they are all here and the study's systems are these.
        "systems": sorted(scanner.systems) if scanner is not None else [],
    }
    return parsed, check


def case_upload_kept_mentions(*, study: Study, upload) -> tuple[list[Mention], list[str]] | None:
    """Every mention the upload's check found, with the systems it looked for, while the
    study is as it was then and none was left out of the kept preview; else None."""
    kept = cache.get(case_upload_preview_key(study=study, upload=upload))
    if kept is None:
        return None
    _, check = kept
    if check["mentions_more"] or "systems" not in check:
        return None
    return check["mentions"], check["systems"]


def case_upload_preview_key(*, study: Study, upload) -> str:
    """Where an upload's checked preview is kept: it holds while the study's cases and
    systems are as they were when the file was checked (any import or removal since, and
    the key changes: the file is checked again)."""
    cases = study.test_cases.aggregate(count=Count("pk"), last=Max("pk"))
    systems = ",".join(sorted(study.systems.values_list("name", flat=True)))
    state = hashlib.sha256(f"{cases['count']}:{cases['last']}:{systems}".encode()).hexdigest()
    return f"case-upload-preview:{upload.uuid}:{state[:32]}"


def case_upload_preview(*, study: Study, upload) -> tuple[ParsedCases, dict]:
    """The preview of a kept upload: as checked when it was uploaded, if the study has not
    changed since, else the file checked again (``test_cases_check``)."""
    kept = cache.get(case_upload_preview_key(study=study, upload=upload))
    if kept is not None:
        return kept
    return test_cases_check(study=study, filename=upload.filename, data=Path(upload.file.path))


def test_cases_preview_blinding_check(*, study: Study, parsed: ParsedCases) -> dict:
    """The blinding check of a file not yet imported, shown in its preview as
    ``study_blinding_check`` shows it after import: by case, then system name."""
    systems = sorted(set(parsed.systems) | set(study.systems.values_list("name", flat=True)))
    responses = (
        (case["id"], name, case["responses"][name])
        for case in parsed.cases
        for name in sorted(case["responses"])
    )
    found = find_identity_mentions(responses=responses, systems=systems)
    shown = found[:MENTIONS_SHOWN]
    more = len(found) - len(shown)
    return {"mentions": shown, "mention_count": len(found), "mentions_more": more}


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
            order=30,
            title="Quality items",
            done=bool(gold or attention),
            detail=(
                f"{gold} gold item{'s' if gold != 1 else ''} and {attention} attention "
                f"check{'s' if attention != 1 else ''}, counted apart from the test cases."
                if gold or attention
                else "None yet: gold items and attention checks let quality control find a "
                "rater who drifts."
            ),
            url_name="studies:quality",
            optional=True,
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
    items += checklist_items_registered(study=study)
    return SetupChecklist(items=sorted(items, key=lambda item: item.order))


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


# The part of the audit trail shown on the settings page.
SETUP_EVENTS = (
    StudyEvent.Kind.CREATED,
    StudyEvent.Kind.SETTINGS_CHANGED,
    StudyEvent.Kind.CASES_IMPORTED,
    StudyEvent.Kind.CASES_REMOVED,
    StudyEvent.Kind.RUBRIC_CHANGED,
    StudyEvent.Kind.PILOT_STARTED,
    StudyEvent.Kind.OPENED,
    StudyEvent.Kind.CLOSED,
    StudyEvent.Kind.REOPENED,
    StudyEvent.Kind.ADMIN_CHANGED,
    StudyEvent.Kind.WORKSHEET_IMPORTED,
    StudyEvent.Kind.RATER_PAUSED,
    StudyEvent.Kind.RATER_SENT_TO_RETRAINING,
    StudyEvent.Kind.RATER_EXCLUDED,
    StudyEvent.Kind.RATER_REINSTATED,
    StudyEvent.Kind.RATER_FLAG_DISMISSED,
    StudyEvent.Kind.QUALITY_SETTINGS_CHANGED,
    StudyEvent.Kind.EXPECTED_ANSWERS_SET,
    StudyEvent.Kind.EXPECTED_ANSWERS_IMPORTED,
    StudyEvent.Kind.ATTENTION_CHECK_ADDED,
    StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED,
    StudyEvent.Kind.JUDGE_TEMPLATE_SAVED,
    StudyEvent.Kind.ADJUDICATION_RULES_SET,
    StudyEvent.Kind.ADJUDICATION_SENT,
    StudyEvent.Kind.ADJUDICATION_SWITCHED,
    StudyEvent.Kind.UNBLINDED,
    StudyEvent.Kind.IDENTITY_ERASED,
)
# Administrators' decisions about a rater: shown with the pseudonym and the reason.
RATER_DECISIONS = (
    StudyEvent.Kind.RATER_PAUSED,
    StudyEvent.Kind.RATER_SENT_TO_RETRAINING,
    StudyEvent.Kind.RATER_EXCLUDED,
    StudyEvent.Kind.RATER_REINSTATED,
    StudyEvent.Kind.RATER_FLAG_DISMISSED,
)
# What the history says about a rater by pseudonym: those decisions and an erasure.
RATER_HISTORY = (*RATER_DECISIONS, StudyEvent.Kind.IDENTITY_ERASED)


# Gold items, attention checks and LLM judges: what each set-up event names.
QUALITY_ITEM_EVENTS: dict[str, Callable[[dict], str]] = {
    StudyEvent.Kind.EXPECTED_ANSWERS_SET: lambda d: (
        f": {d.get('case', '')} ({d.get('purpose', '')})"
    ),
    StudyEvent.Kind.EXPECTED_ANSWERS_IMPORTED: lambda d: (
        f": {d.get('cases', 0)} from {d.get('file', '')}"
    ),
    StudyEvent.Kind.ATTENTION_CHECK_ADDED: lambda d: f": {d.get('case', '')}",
    StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED: lambda d: (
        f": {d.get('rows', 0)} from {d.get('file', '')} ({', '.join(d.get('judges', []))};"
        f" {d.get('unparseable', 0)} unreadable)"
    ),
    StudyEvent.Kind.JUDGE_TEMPLATE_SAVED: lambda d: f": {d.get('name', '')}",
}


def _describe(event: StudyEvent) -> str:
    detail = event.detail
    Kind = StudyEvent.Kind
    text = event.get_kind_display()
    fields = ", ".join(f.replace("_", " ") for f in detail.get("fields", []))
    if event.kind == Kind.SETTINGS_CHANGED:
        text += f": {fields}"
    elif event.kind == Kind.ADMIN_CHANGED:
        text += f": {detail.get('object', '')} {detail.get('action', '')}"
        text += f" ({fields})" if fields else ""
    elif event.kind in (Kind.CASES_IMPORTED, Kind.CASES_REMOVED):
        text += f": {detail.get('cases', 0)}"
        if detail.get("filename"):
            text += f" from {detail['filename']} (SHA-256 {detail.get('sha256', '')[:12]}…)"
    elif event.kind == Kind.RUBRIC_CHANGED:
        if detail.get("preset"):
            text += f": preset {detail['preset']}"
        else:
            text += f": {detail.get('dimension', '')} {detail.get('action', '')}"
            if detail.get("level"):
                text += f" ({detail['level']})"
    elif event.kind in (Kind.OPENED, Kind.PILOT_STARTED) and detail.get("fingerprint"):
        text += f"; fingerprint {detail['fingerprint'][:12]}…"
    elif event.kind in RATER_HISTORY and event.membership is not None:
        # By pseudonym only: an erasure never says whose identity it was.
        who = event.membership.pseudonym or event.membership.get_role_display()
        text = f"{who}: {text.lower()}"
        automatic = detail.get("automatic") and event.kind in RATER_DECISIONS
        text += " automatically (QC rule)" if automatic else ""
        text += f" ({event.reason})" if event.reason else ""
    elif event.kind in QUALITY_ITEM_EVENTS:
        text += QUALITY_ITEM_EVENTS[event.kind](detail)
    elif event.kind == Kind.WORKSHEET_IMPORTED and event.membership is not None:
        text += f" for {event.membership.pseudonym}: {detail.get('cases', 0)} cases"
    return text


def _automatic_actor(event: StudyEvent) -> str:
    """Who did what no person did: a rule of the app, or the command line."""
    if not event.detail.get("automatic"):
        return "(command line)"
    if event.kind == StudyEvent.Kind.IDENTITY_ERASED:
        return "(retention period)"
    return "(quality control)"


def study_setup_events(*, study: Study, limit: int = 50) -> list[dict]:
    """The set-up and lifecycle part of the audit trail, newest first, in plain words."""
    events = (
        StudyEvent.objects.filter(study=study, kind__in=SETUP_EVENTS)
        .select_related("actor", "membership")
        .order_by("-created_at", "-pk")[:limit]
    )
    return [
        {
            "when": event.created_at,
            "who": event.actor.get_username() if event.actor else _automatic_actor(event),
            "what": _describe(event),
        }
        for event in events
    ]


# Invitations and API tokens: the reads beside their services (services/invitations.py,
# services/tokens.py).


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_state(invitation: Invitation, *, now=None) -> str:
    """ "used", "declined", "expired" or "pending"."""
    if invitation.used_at is not None:
        return "used"
    if invitation.declined_at is not None:
        return "declined"
    if invitation.expires_at <= (now or timezone.now()):
        return "expired"
    return "pending"


@dataclass(frozen=True)
class InvitationRow:
    invitation: Invitation
    state: str


def invitations_for_study(*, study: Study) -> list[InvitationRow]:
    now = timezone.now()
    return [
        InvitationRow(invitation=i, state=invitation_state(i, now=now))
        for i in study.invitations.order_by("-created_at")
    ]


def invitation_find(*, token: str) -> Invitation | None:
    links = Invitation.objects.select_related("study").filter(invitee_name="")
    return links.filter(token_hash=token_hash(token)).first()


def invitations_for_user(*, user: User) -> list[Invitation]:
    """The personal invitations waiting for the person's answer."""
    pending = (
        Invitation.objects.filter(invitee=user, used_at=None, declined_at=None)
        .filter(expires_at__gt=timezone.now())
        .select_related("study")
        .order_by("created_at")
    )
    return [i for i in pending if not i.study.is_closed]


def api_tokens_for_user(*, user: User) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user))


def adjudication_rules_table(*, study: Study) -> list[dict]:
    """Each dimension of the rubric in order with its adjudication rule ("never" when it has
    none), what its kind allows (the values a rule may name, whether a tolerance applies)
    and 7.3's switch, if taken."""
    rules = {rule.dimension_key: rule for rule in study.adjudication_rules.all()}
    rows = []
    for dimension in study.rubric.dimensions.order_by("position"):
        scoring = dimension.scoring()
        rule = rules.get(dimension.key)
        rows.append(
            {
                "key": dimension.key,
                "name": dimension.name,
                "kind_label": scoring.label,
                "scope": scoring.scope,
                "trigger": rule.trigger if rule else AdjudicationRule.Trigger.NEVER,
                "values": list(rule.values) if rule else [],
                "tolerance": rule.tolerance if rule else 0,
                "choices": [
                    {"value": value, "label": label}
                    for value, label in scoring.adjudication_values()
                ],
                "spread": scoring.adjudication_spread,
                "switched_at": rule.switched_at if rule else None,
                "switched_reason": rule.switched_reason if rule else "",
            }
        )
    return rows


def profile_questions_of(*, study: Study) -> list[ProfileQuestion]:
    """The study's rater profile questions, in the order raters see them."""
    return list(ProfileQuestion.objects.filter(study=study).order_by("position", "pk"))

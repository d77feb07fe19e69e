"""The frozen protocol document, streamed, and its fingerprint."""

from collections.abc import Iterator

from .. import protocol
from ..bulk_rows import batches
from ..exposure import exposure_limits
from ..models import (
    AdjudicationRule,
    BlindedLabel,
    ExpectedAnswer,
    QualitySettings,
    StratumSetting,
    Study,
    TestCase,
)
from ..protocol_parts import protocol_parts
from .quality import quality_settings_for


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
                # An optional dimension says so (issue 39); a required one, every
                # dimension before, keeps the document and the fingerprint it had.
                **({} if d.required else {"required": False}),
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

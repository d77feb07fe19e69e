"""Writes for the judges: their prompt templates and their imported outputs."""

import hashlib
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from agreement.judges.files import JudgeImportError, judge_rows_check
from agreement.judges.verdicts import BUILT_IN, TIE, parse_verdict, template_check
from agreement.models import Judge, JudgeOutput, JudgeTemplate
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import Study, StudyEvent


class JudgeTemplateError(ApplicationError):
    """A judge prompt template cannot be saved; the message lists why."""


@transaction.atomic
def judge_template_save(
    *,
    study: Study,
    name: str,
    text: str,
    template: JudgeTemplate | None = None,
    allow_tie: bool = False,
    actor: User | None = None,
) -> JudgeTemplate:
    """Create or change one of the study's judge prompt templates (``allow_tie``: the judge
    may answer a tie, "[[C]]", and the text must say so)."""
    name = name.strip()
    problems = template_check(text, allow_tie=allow_tie)
    same_name = study.judge_templates.filter(name=name)
    if template is not None and template.pk is not None:
        same_name = same_name.exclude(pk=template.pk)
    if name in BUILT_IN:
        problems.insert(0, f"{name!r} is the name of a built-in template; choose another.")
    elif not name or len(name) > 100:
        problems.insert(0, "Give the template a name of at most 100 characters.")
    elif same_name.exists():
        problems.insert(0, f"The study already has a template named {name!r}.")
    if problems:
        raise JudgeTemplateError(" ".join(problems), problems=problems)
    template = template or JudgeTemplate(study=study)
    template.name, template.text, template.allow_tie = name, text, allow_tie
    try:
        # The name was free when checked; a save of the same name from another tab may
        # commit in between, and the unique constraint then says so.
        with transaction.atomic():
            template.save()
    except IntegrityError:
        message = f"The study already has a template named {name!r}."
        raise JudgeTemplateError(message, problems=[message]) from None
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.JUDGE_TEMPLATE_SAVED,
        name=name,
        allow_tie=allow_tie,
    )
    return template


@transaction.atomic
def judge_outputs_import(
    *,
    study: Study,
    filename: str,
    data: bytes,
    allow_tie: bool = False,
    actor: User | None = None,
) -> dict:
    """Import judge outputs: every row or none. Returns counts for the message.

    ``allow_tie``: whether the template the judges answered allowed a tie ("[[C]]"); their
    verdicts are read by that rule, and it becomes each named judge's rule, by which its
    earlier outputs are read again (a judge is read by one rule, its latest).

    Rows naming an unknown case, a case without exactly two responses, or the same judge,
    case and order twice are problems that refuse the whole file. An output whose verdict
    cannot be read is not a problem of the file: it is stored with the reason, listed on the
    judges page, and never counted as a verdict. A row replaces an earlier output of the
    same judge, case and order.
    """
    # Every problem of the file at once: those of shape, then those of the study's cases.
    rows, problems = judge_rows_check(filename=filename, data=data)
    study_lock(study.pk)  # shared: the cases cannot be removed meanwhile
    pairs = dict(
        study.test_cases.annotate(n=Count("responses")).filter(n=2).values_list("case_id", "pk")
    )
    known = set(study.test_cases.values_list("case_id", flat=True))
    seen = set()
    for row in rows:
        place = f"Line/row {row.number}"
        if row.case_id not in known:
            problems.append(f"{place}: no test case {row.case_id[:50]!r} in this study.")
        elif row.case_id not in pairs:
            problems.append(f"{place}: test case {row.case_id!r} does not have two responses.")
        key = (row.judge, row.case_id, row.order)
        if key in seen:
            problems.append(f"{place}: {row.judge!r} on {row.case_id!r} ({row.order}) again.")
        seen.add(key)
    if problems:
        raise JudgeImportError(problems)
    now = timezone.now()
    names = sorted({row.judge for row in rows})
    # Two imports naming the same new judge at once: both create it (one is a no-op), then
    # each locks the judges it writes, in one order, so the second waits for the first.
    Judge.objects.bulk_create(
        [Judge(study=study, name=name) for name in names], ignore_conflicts=True
    )
    existing = {
        judge.name: judge
        for judge in Judge.objects.select_for_update()
        .filter(study=study, name__in=names)
        .order_by("pk")
    }
    outputs = []
    for row in rows:
        verdict, problem = _verdict_read(row.output, allow_tie=allow_tie)
        outputs.append(
            JudgeOutput(
                judge=existing[row.judge],
                test_case_id=pairs[row.case_id],
                order=row.order,
                raw_text=row.output,
                verdict=verdict,
                problem=problem,
                imported_at=now,
            )
        )
    # In batches of the file's rows: one DELETE per 500 keys.
    for start in range(0, len(outputs), 500):
        batch = outputs[start : start + 500]
        keys = Q()
        for output in batch:
            keys |= Q(judge=output.judge, test_case_id=output.test_case_id, order=output.order)
        JudgeOutput.objects.filter(keys).delete()
    JudgeOutput.objects.bulk_create(outputs, batch_size=500)
    changed = [judge for judge in existing.values() if judge.allow_tie != allow_tie]
    if changed:
        _outputs_read_again(changed, allow_tie=allow_tie, now=now)
    counts: dict[str, Any] = {
        "rows": len(outputs),
        "judges": names,
        "unparseable": sum(1 for output in outputs if not output.verdict),
        "ties": sum(1 for output in outputs if output.verdict == TIE),
        "allow_tie": allow_tie,
    }
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED,
        file=filename[:255],
        sha256=hashlib.sha256(data).hexdigest(),
        **counts,
    )
    return counts


def _verdict_read(text: str, *, allow_tie: bool) -> tuple[str, str]:
    """(verdict, "") or ("", why it cannot be read)."""
    try:
        return parse_verdict(text, allow_tie=allow_tie), ""
    except ValueError as error:
        return "", str(error)[:200]


def _outputs_read_again(judges: list[Judge], *, allow_tie: bool, now) -> None:
    """The judges' stored outputs read by their new rule (the file's are already): a judge
    whose template now allows a tie has its "[[C]]" counted, one that no longer does has
    them unparseable again. Their time is the import's, so the calibration is computed anew."""
    Judge.objects.filter(pk__in=[judge.pk for judge in judges]).update(allow_tie=allow_tie)
    stored = JudgeOutput.objects.filter(judge__in=judges).exclude(imported_at=now)
    changed = []
    for output in stored.only("pk", "raw_text", "verdict", "problem").iterator(chunk_size=2000):
        output.verdict, output.problem = _verdict_read(output.raw_text, allow_tie=allow_tie)
        output.imported_at = now
        changed.append(output)
    JudgeOutput.objects.bulk_update(changed, ["verdict", "problem", "imported_at"], batch_size=500)

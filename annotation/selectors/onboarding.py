"""Reads for a rater's steps before the first item: consent, training, practice,
qualification, the calibration call; and the coordinators' overview of them."""

from dataclasses import dataclass, field

from django.db.models import Count, Exists, OuterRef, Q

from annotation.models import (
    CalibrationAttendance,
    ConsentRecord,
    OnboardingSettings,
    QualificationAttempt,
    StudyFeedback,
    TrainingAnswer,
    TrainingItem,
    Withdrawal,
)
from studies.blinding import LABELS
from studies.models import Membership, Study, TestCase
from studies.setup_checklist import ChecklistItem


def onboarding_settings(*, study: Study) -> OnboardingSettings:
    """The study's settings, or the defaults (unsaved) when the coordinator set none."""
    found = OnboardingSettings.objects.filter(study=study).first()
    return found or OnboardingSettings(study=study)


def practice_case(*, study: Study, settings: OnboardingSettings | None = None) -> TestCase | None:
    settings = settings or onboarding_settings(study=study)
    if not settings.practice_enabled:
        return None
    # Never a gold item or attention check: practising on one would name it to the rater.
    chosen = settings.practice_case if settings.practice_case_id else None
    if chosen is not None and chosen.purpose == TestCase.Purpose.SAMPLE:
        return chosen
    return study.test_cases.in_sample().order_by("position").first()


def training_items(*, study: Study, kind: str):
    """Items raters can take: those the coordinator has given an answer key."""
    return study.training_items.filter(kind=kind).exclude(key={}).order_by("position", "created_at")


def training_answers(*, rater: Membership) -> dict[int, TrainingAnswer]:
    answers = rater.training_answers.filter(attempt__isnull=True)
    return {answer.item_id: answer for answer in answers}


def qualification_open_attempt(*, rater: Membership) -> QualificationAttempt | None:
    return rater.qualification_attempts.filter(finished_at__isnull=True).first()


def qualification_next_item(*, rater: Membership, attempt: QualificationAttempt):
    answered = attempt.answers.values_list("item_id", flat=True)
    items = training_items(study=rater.study, kind=TrainingItem.Kind.QUALIFICATION)
    return items.exclude(pk__in=answered).first()


@dataclass(frozen=True)
class OnboardingState:
    """Where a rater stands before rating; ``blocking_step`` says what must come first."""

    settings: OnboardingSettings
    consent: ConsentRecord | None
    consent_needed: bool
    training_total: int
    training_done: int
    practice: TestCase | None
    qualification_items: int
    attempts: list = field(default_factory=list)
    withdrawal: Withdrawal | None = None
    # The calibration call (protocol 4.2): whether the lead recorded the rater at one, and
    # whether the study is in its pilot, which a rater may rate before the call.
    call_attended: bool = False
    in_pilot: bool = False

    @property
    def qualification_passed(self) -> bool:
        return any(a.passed for a in self.attempts)

    @property
    def attempt_open(self) -> bool:
        return any(a.finished_at is None for a in self.attempts)

    @property
    def attempts_left(self) -> int:
        finished = sum(1 for a in self.attempts if a.finished_at is not None)
        return max(0, self.settings.max_attempts - finished)

    @property
    def qualification_needed(self) -> bool:
        return _qualification_needed(
            items=self.qualification_items, passed=self.qualification_passed
        )

    @property
    def qualification_failed(self) -> bool:
        """No attempt left and none passed: the rater cannot go on without the coordinator."""
        return self.qualification_needed and not self.attempt_open and not self.attempts_left

    @property
    def call_required(self) -> bool:
        return self.settings.calibration_call_required

    @property
    def call_needed(self) -> bool:
        """The study requires the calibration call and the rater's attendance is not
        recorded yet (whatever the phase)."""
        return self.call_required and not self.call_attended

    @property
    def waiting_for_call(self) -> bool:
        """Qualified (or no test), and held back from the main phase until the call."""
        return self.call_needed and not self.qualification_needed

    @property
    def blocking_step(self) -> str | None:
        return _blocking_step(
            withdrawn=self.withdrawal is not None,
            consent_needed=self.consent_needed,
            qualification_needed=self.qualification_needed,
            call_needed=self.call_needed and not self.in_pilot,
        )


def _consent_asked(study: Study) -> bool:
    return bool(study.consent_text.strip() or study.disclosure_question.strip())


def _qualification_needed(*, items: int, passed: bool) -> bool:
    return items > 0 and not passed


def _blocking_step(
    *, withdrawn: bool, consent_needed: bool, qualification_needed: bool, call_needed: bool
) -> str | None:
    """What a rater must do before rating, in the order they are asked to do it.

    ``call_needed``: the study requires a calibration call the rater has not attended, and
    the study is past its pilot (pilot ratings are what the call discusses).
    """
    if withdrawn:
        return "withdrawn"
    if consent_needed:
        return "consent"
    if qualification_needed:
        return "qualification"
    if call_needed:
        return "calibration_call"
    return None


def onboarding_blocking_step(*, rater: Membership) -> str | None:
    """``onboarding_state(rater=...).blocking_step`` in one query: what the rating screen,
    its autosave and its submit ask on every request."""
    study = rater.study
    qualification = training_items(study=study, kind=TrainingItem.Kind.QUALIFICATION)
    row = (
        Membership.objects.filter(pk=rater.pk)
        .annotate(
            withdrawn=Exists(Withdrawal.objects.filter(rater=OuterRef("pk"))),
            consented=Exists(
                ConsentRecord.objects.filter(rater=OuterRef("pk"), version=study.consent_version)
            ),
            qualification_items=Exists(qualification),
            qualification_passed=Exists(
                QualificationAttempt.objects.filter(rater=OuterRef("pk"), passed=True)
            ),
            call_required=Exists(
                OnboardingSettings.objects.filter(study=study, calibration_call_required=True)
            ),
            call_attended=Exists(CalibrationAttendance.objects.filter(rater=OuterRef("pk"))),
        )
        .values(
            "withdrawn",
            "consented",
            "qualification_items",
            "qualification_passed",
            "call_required",
            "call_attended",
        )
        .first()
    )
    if row is None:  # removed while the request was on its way: as onboarding_state reads it
        row = dict.fromkeys(["withdrawn", "consented", "qualification_passed"], False)
        row["qualification_items"] = qualification.exists()
        row["call_required"] = onboarding_settings(study=study).calibration_call_required
        row["call_attended"] = False
    return _blocking_step(
        withdrawn=row["withdrawn"],
        consent_needed=_consent_asked(study) and not row["consented"],
        qualification_needed=_qualification_needed(
            items=int(row["qualification_items"]), passed=row["qualification_passed"]
        ),
        call_needed=row["call_required"] and not row["call_attended"] and not study.is_pilot,
    )


def onboarding_state(*, rater: Membership) -> OnboardingState:
    study = rater.study
    settings = onboarding_settings(study=study)
    consent = rater.consents.filter(version=study.consent_version).first()
    training = training_items(study=study, kind=TrainingItem.Kind.TRAINING)
    return OnboardingState(
        settings=settings,
        consent=consent,
        consent_needed=_consent_asked(study) and consent is None,
        training_total=training.count(),
        training_done=rater.training_answers.filter(
            attempt__isnull=True, item__in=training
        ).count(),
        practice=practice_case(study=study, settings=settings),
        qualification_items=training_items(
            study=study, kind=TrainingItem.Kind.QUALIFICATION
        ).count(),
        attempts=list(rater.qualification_attempts.all()),
        withdrawal=Withdrawal.objects.filter(rater=rater).first(),
        call_attended=settings.calibration_call_required
        and CalibrationAttendance.objects.filter(rater=rater).exists(),
        in_pilot=study.is_pilot,
    )


def item_responses(*, item: TrainingItem) -> list[tuple[str, str, str]]:
    """(shown label, label, text) for a training item, as blinded_responses gives them."""
    return [(label, label, text) for label, text in zip(LABELS, item.responses, strict=False)]


# --- Coordinators: how the raters are getting on before and after rating -----------------


@dataclass(frozen=True)
class RaterOnboardingRow:
    pseudonym: str
    status: str
    consent: ConsentRecord | None
    training_done: int
    attempts: list
    feedback: StudyFeedback | None
    withdrawal: Withdrawal | None


def onboarding_overview(*, study: Study) -> list[RaterOnboardingRow]:
    """Per rater pseudonym, never a name: consent, disclosure, training, qualification."""
    raters = (
        study.memberships.filter(role=Membership.Role.RATER)
        .annotate(
            trained=Count(
                "training_answers", filter=Q(training_answers__attempt__isnull=True), distinct=True
            )
        )
        .prefetch_related("consents", "qualification_attempts")
        .select_related("feedback", "withdrawal")
        .order_by("pseudonym")
    )
    rows = []
    for rater in raters:
        consents = [c for c in rater.consents.all() if c.version == study.consent_version]
        rows.append(
            RaterOnboardingRow(
                pseudonym=rater.pseudonym,
                status=rater.get_status_display(),
                consent=consents[0] if consents else None,
                training_done=rater.trained,
                attempts=list(rater.qualification_attempts.all()),
                feedback=getattr(rater, "feedback", None),
                withdrawal=getattr(rater, "withdrawal", None),
            )
        )
    return rows


# --- After the last item: the self-check --------------------------------------------------


# --- Gold items and attention checks: a submitted answer against the expected one ---------


def setup_checklist_onboarding(*, study: Study) -> list[ChecklistItem]:
    """The set-up checklist's item about consent and training (``studies.setup_checklist``)."""
    consent = _consent_asked(study)
    kinds = dict(study.training_items.order_by().values_list("kind").annotate(count=Count("pk")))
    training = kinds.get(TrainingItem.Kind.TRAINING, 0)
    qualification = kinds.get(TrainingItem.Kind.QUALIFICATION, 0)
    examples = f"{training} training example{'s' if training != 1 else ''}"
    examples += (
        f" and {qualification} qualification item{'s' if qualification != 1 else ''} "
        "(raters take the test before rating)"
        if qualification
        else ", no qualification test"
    )
    return [
        ChecklistItem(
            order=50,
            title="Consent and training",
            done=consent,
            detail=(
                f"Information sheet and consent written; {examples}."
                if consent
                else f"No information sheet or consent text yet (in the settings); {examples}."
            ),
            url_name="annotation:onboarding" if consent else "studies:edit",
        )
    ]

"""Reads for raters: progress, the rating screen and onboarding. Nothing here joins the
system of a response."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, Max, Min, OuterRef, Q

from annotation.models import (
    Assignment,
    CalibrationAttendance,
    ConsentRecord,
    OnboardingSettings,
    QualificationAttempt,
    StudyFeedback,
    TrainingAnswer,
    TrainingItem,
    Withdrawal,
)
from studies.activity import RatingActivity
from studies.blinding import LABELS
from studies.models import BlindedLabel, Membership, Study, StudyEvent, TestCase
from studies.setup_checklist import ChecklistItem

from .exposure import exposure_today, servable

# A case is done for its rater once submitted or skipped: it has left their queue.
HANDLED = (Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED)


def rater_progress_table(*, study: Study):
    """Per rater pseudonym: cases submitted, skipped and assigned. No real names."""
    return (
        study.memberships.filter(role=Membership.Role.RATER)
        .annotate(
            total=Count("assignments"),
            done=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
            skipped=Count("assignments", filter=Q(assignments__status=Assignment.Status.SKIPPED)),
        )
        .order_by("pseudonym")
    )


def rater_pair_overlap_range(*, raters: Sequence[Membership]) -> tuple[int, int] | None:
    """The fewest and the most test cases any two of ``raters`` share; None for fewer than two.

    Their assignments are read once as id pairs and counted in numpy (``pair_overlap_range``):
    at 10,000 cases and 100 raters, tens of milliseconds where intersecting every pair's
    sets of case ids took a few hundred.
    """
    import numpy as np

    if len(raters) < 2:
        return None
    ids = np.array(sorted(r.pk for r in raters), dtype=np.int64)
    rows = Assignment.objects.filter(rater_id__in=ids.tolist()).values_list(
        "rater_id", "test_case_id"
    )
    pairs = np.array(list(rows.iterator(chunk_size=10_000)), dtype=np.int64).reshape(-1, 2)
    return pair_overlap_range(np.searchsorted(ids, pairs[:, 0]), pairs[:, 1], len(ids))


# Above this many multiply-adds (raters x raters x cases) the shared cases are counted from
# each case's pairs of raters instead of a dense product, unless the pairs are the more work.
DENSE_PRODUCT_LIMIT = 2_000_000_000
# What one pair of raters on a case costs to count, in the dense product's multiply-adds
# (a pair is gathered and binned, a multiply-add is one of BLAS's; about 150 on one machine,
# taken low): every rater on every case has as many pairs as the product has cells.
DENSE_PER_PAIR = 50
# The product's arrays hold at most this many counts (4 bytes each): raters x a block of
# cases, and a block of raters x raters.
DENSE_CELLS = 4_000_000
# Pairs of raters counted at once, to bound memory (a few arrays of 8 bytes each).
PAIRS_PER_BLOCK = 2_000_000


def pair_overlap_range(
    raters,
    cases,
    n_raters: int,
    *,
    dense_limit: int = DENSE_PRODUCT_LIMIT,
    dense_per_pair: int = DENSE_PER_PAIR,
    dense_cells: int = DENSE_CELLS,
) -> tuple[int, int]:
    """The fewest and the most cases any two of ``n_raters`` (at least two) share, from one
    (rater index, case id) row per assignment (a rater has a case once). numpy only, so the
    raters page loads no scipy (about 70 MB in each web process that would).

    A dense product of the raters x cases incidence, over blocks of cases, where raters x
    raters x cases is small (a few raters) or no more work than counting the pairs (many
    raters on every case: 1,000 raters on 2,010 cases, 9 s by pairs where the product takes
    0.1 s), in blocks of raters and of cases of at most ``dense_cells`` counts; else each
    case's pairs of raters are counted (a balanced or crowd design: few raters per case,
    many raters), keeping only the pairs that share a case. Neither holds raters squared."""
    import numpy as np

    raters, cases = np.asarray(raters, dtype=np.int64), np.asarray(cases, dtype=np.int64)
    if not len(raters):
        return 0, 0
    _, column = np.unique(cases, return_inverse=True)
    n_cases = int(column.max()) + 1
    product = n_raters * n_raters * n_cases
    per_case = np.bincount(column)
    n_pairs = int((per_case * (per_case - 1) // 2).sum())
    if product <= dense_limit or product <= dense_per_pair * n_pairs:
        return _product_range(raters, column, n_raters, n_cases, dense_cells)
    # Each case's raters, ascending, then every pair within a case, grouped by how many
    # raters the case has so each group is one array.
    order = np.lexsort((raters, column))
    raters, column = raters[order], column[order]
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
    sizes = np.diff(np.r_[starts, len(column)])
    keys_found = np.empty(0, dtype=np.int64)
    counts_found = np.empty(0, dtype=np.int64)
    pending: list = []  # blocks' (keys, counts), merged once they outweigh what is found
    for size in np.unique(sizes):
        if size < 2:
            continue
        members = raters[starts[sizes == size][:, None] + np.arange(size)]
        first, second = np.triu_indices(size, k=1)
        per_block = max(1, PAIRS_PER_BLOCK // len(first))
        for at in range(0, len(members), per_block):
            group = members[at : at + per_block]
            pending.append(
                np.unique(
                    (group[:, first] * n_raters + group[:, second]).ravel(), return_counts=True
                )
            )
            if sum(len(keys) for keys, _ in pending) > max(PAIRS_PER_BLOCK, len(keys_found)):
                keys_found, counts_found = _pairs_merged(keys_found, counts_found, pending)
                pending = []
    keys_found, counts_found = _pairs_merged(keys_found, counts_found, pending)
    if not len(counts_found):
        return 0, 0
    every_pair_shares = len(keys_found) == n_raters * (n_raters - 1) // 2
    return (int(counts_found.min()) if every_pair_shares else 0), int(counts_found.max())


def _product_range(raters, column, n_raters: int, n_cases: int, cells_at_most: int):
    """``pair_overlap_range`` by the incidence's product, a block of raters (rows) against
    all of them at a time, each over blocks of cases; float32 counts are exact up to 2**24."""
    import numpy as np

    rows = max(1, min(n_raters, cells_at_most // n_raters))
    width = max(1, cells_at_most // n_raters)
    low, high = float("inf"), 0.0
    for top in range(0, n_raters, rows):
        bottom = min(n_raters, top + rows)
        shared = np.zeros((bottom - top, n_raters), dtype=np.float32)
        for start in range(0, n_cases, width):
            inside = (column >= start) & (column < start + width)
            cells = np.zeros((n_raters, min(width, n_cases - start)), dtype=np.float32)
            cells[raters[inside], column[inside] - start] = 1.0
            shared += cells[top:bottom] @ cells.T
        # The pairs (i, j) with j > i: each pair once, no rater with themself.
        upper = shared[np.arange(n_raters)[None, :] > np.arange(top, bottom)[:, None]]
        if upper.size:
            low, high = min(low, float(upper.min())), max(high, float(upper.max()))
    return int(low), int(high)


def _pairs_merged(keys, counts, pending):
    """``keys`` and their ``counts`` with the ``pending`` blocks' added, keys ascending."""
    import numpy as np

    if not pending:
        return keys, counts
    merged, where = np.unique(np.concatenate([keys, *(k for k, _ in pending)]), return_inverse=True)
    weights = np.concatenate([counts, *(c for _, c in pending)])
    return merged, np.bincount(where, weights=weights).astype(np.int64)


CASES_PER_PAGE = 50


def case_progress_table(*, study: Study):
    return study.test_cases.annotate(
        assigned=Count("assignments"),
        done=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
        skipped=Count("assignments", filter=Q(assignments__status=Assignment.Status.SKIPPED)),
    ).order_by("position")


def case_progress_page(*, study: Study, number, per_page: int = CASES_PER_PAGE) -> Page:
    """One page of ``case_progress_table``: three queries, whatever the number of cases.

    The page is cut from the plain cases and only its rows are counted: counting through
    the annotated table would make the database group every case of the study.
    """
    ids = study.test_cases.order_by("position").values_list("pk", flat=True)
    page = Paginator(ids, per_page).get_page(number)
    page.object_list = list(case_progress_table(study=study).filter(pk__in=list(page.object_list)))
    return page


def study_rating_activity(*, study: Study) -> RatingActivity:
    """Registered with ``studies.activity``: what the set-up rules need to know, asked on
    every set-up page. Two existence queries: the started one reads the partial index of
    started assignments (``assignment_started``), empty until rating begins."""
    assignments = Assignment.objects.filter(test_case__study=study)
    started = assignments.exclude(status=Assignment.Status.TODO).exists()
    return RatingActivity(assigned=started or assignments.exists(), started=started)


def study_rating_counts(*, study: Study) -> dict[str, int]:
    """Test cases given to raters, and of those started (a draft saved) or submitted."""
    return Assignment.objects.filter(test_case__study=study).aggregate(
        assigned=Count("pk"), started=Count("pk", filter=~Q(status=Assignment.Status.TODO))
    )


def study_submitted_count(*, study_id: int) -> int:
    """Registered with ``studies.webhooks``: the study's submitted ratings, one per rater
    and case, for the webhooks' rating milestones."""
    return Assignment.objects.filter(
        test_case__study_id=study_id, status=Assignment.Status.SUBMITTED
    ).count()


@dataclass(frozen=True)
class Progress:
    done: int  # submitted or skipped
    total: int
    skipped: int = 0

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def rater_memberships(*, user) -> list[tuple[Membership, Progress, str | None]]:
    """Each study the user rates, with their progress and why they cannot rate now (or None)."""
    memberships = (
        Membership.objects.filter(user=user, role=Membership.Role.RATER)
        .select_related("study")
        .annotate(
            total=Count("assignments"),
            done=Count("assignments", filter=Q(assignments__status__in=HANDLED)),
            skipped=Count("assignments", filter=Q(assignments__status=Assignment.Status.SKIPPED)),
        )
        .order_by("study__name")
    )
    return [
        (m, Progress(done=m.done, total=m.total, skipped=m.skipped), rating_hold(rater=m))
        for m in memberships
    ]


def rater_progress(*, rater: Membership) -> Progress:
    counts = rater.assignments.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status__in=HANDLED)),
        skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
    )
    return Progress(done=counts["done"], total=counts["total"], skipped=counts["skipped"])


def rating_hold(*, rater: Membership) -> str | None:
    """Why this rater cannot rate now, or None: "withdrawn", "excluded", "paused" (their
    participation), or "not_started", "closed", "on_hold" (the study's status)."""
    if rater.status != Membership.Status.ACTIVE:
        return rater.status
    study = rater.study
    if study.accepts_ratings:
        return None
    if study.is_draft:
        return "not_started"
    return "closed" if study.is_closed else "on_hold"


def pause_kind(*, rater: Membership) -> str:
    """Why a paused rater is paused, as their pages tell it: "automatic" (a quality rule
    paused them), "retraining" or "administrator"; "" when they are not paused."""
    if rater.status != Membership.Status.PAUSED:
        return ""
    event = (
        StudyEvent.objects.filter(
            membership=rater,
            kind__in=(StudyEvent.Kind.RATER_PAUSED, StudyEvent.Kind.RATER_SENT_TO_RETRAINING),
        )
        .order_by("-created_at", "-pk")
        .values_list("kind", "detail")
        .first()
    )
    if event is None:
        return "administrator"
    kind, detail = event
    if kind == StudyEvent.Kind.RATER_SENT_TO_RETRAINING:
        return "retraining"
    return "automatic" if (detail or {}).get("automatic") else "administrator"


def pending_cases(*, rater: Membership):
    """The rater's cases neither submitted nor skipped: still in their queue."""
    return rater.assignments.exclude(status__in=HANDLED)


def rater_assignments(*, rater: Membership):
    return rater.assignments.select_related("test_case").order_by("position")


def next_unrated(*, rater: Membership, after: Assignment | None = None) -> Assignment | None:
    """The next case neither submitted nor skipped in the rater's own order, wrapping around,
    that the daily exposure limits allow serving now (``exposure.servable``)."""
    pending = servable(pending=pending_cases(rater=rater), exposure=exposure_today(rater=rater))
    pending = pending.order_by("position")
    if after is not None:
        later = pending.filter(position__gt=after.position).first()
        if later is not None:
            return later
    return pending.first()


def blinded_responses(*, assignment: Assignment) -> list[tuple[str, str, str]]:
    """(shown label, key label, text) for each response, in the order shown to the rater.

    Screens are lettered by position, so the first response shown is always "Response A";
    on a flipped screen (balanced side design) it is the key's last label.
    """
    rows = BlindedLabel.objects.filter(test_case_id=assignment.test_case_id)
    rows = list(rows.select_related("response").order_by("label"))
    return [(shown, row.label, row.response.text) for shown, row in _on_screen(assignment, rows)]


def screen_labels(*, assignment: Assignment) -> list[tuple[str, str, int]]:
    """(shown label, key label, response id) for each response, as ``blinded_responses``
    orders them, without the texts: what a rating write needs."""
    rows = BlindedLabel.objects.filter(test_case_id=assignment.test_case_id).order_by("label")
    rows = list(rows.values_list("label", "response_id"))
    return [
        (shown, label, response_id) for shown, (label, response_id) in _on_screen(assignment, rows)
    ]


# A case's row as a caller reads it: a ``BlindedLabel`` or some of its values.
Row = TypeVar("Row")


def _on_screen(assignment: Assignment, rows: list[Row]) -> list[tuple[str, Row]]:
    """(shown label, row) for a case's rows in key-label order: the first on screen is "A";
    a flipped screen shows them in reverse."""
    ordered = list(reversed(rows)) if assignment.flipped else rows
    return list(zip(LABELS, ordered, strict=False))


@dataclass(frozen=True)
class CasePosition:
    number: int  # the case's place in the rater's order, from 1
    previous: Assignment | None
    next: Assignment | None
    progress: Progress  # the rater's cases submitted and assigned


def case_position(*, assignment: Assignment) -> CasePosition:
    """Where the case stands in the rater's order, and the rater's progress: two queries,
    however many cases the rater has."""
    cases = assignment.rater.assignments
    here = assignment.position
    counts = cases.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status__in=HANDLED)),
        skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
        before=Count("id", filter=Q(position__lt=here)),
        previous=Max("position", filter=Q(position__lt=here)),
        next=Min("position", filter=Q(position__gt=here)),
    )
    wanted = [counts[side] for side in ("previous", "next") if counts[side] is not None]
    near = {
        a.position: a for a in cases.filter(position__in=wanted).only("uuid", "position", "rater")
    }
    return CasePosition(
        number=counts["before"] + 1,
        previous=near.get(counts["previous"]),
        next=near.get(counts["next"]),
        progress=Progress(done=counts["done"], total=counts["total"], skipped=counts["skipped"]),
    )


# --- Before the first item: consent, training, practice, qualification ---------------------


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
    training = study.training_items.filter(kind=TrainingItem.Kind.TRAINING).count()
    examples = f"{training} training example{'s' if training != 1 else ''}"
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


def rater_pseudonyms(*, study: Study) -> list[str]:
    """The study's raters' pseudonyms, in order (whose worksheet a file is)."""
    return list(
        study.memberships.filter(role=Membership.Role.RATER)
        .order_by("pseudonym")
        .values_list("pseudonym", flat=True)
    )

import json
import random
from datetime import timedelta
from pathlib import Path

from django.contrib.auth.hashers import make_password
from django.core.management.base import BaseCommand
from django.db import transaction

from annotation.demo.quality import demo_quality_items_add
from annotation.demo.welfare import demo_welfare_raters, demo_welfare_settings
from annotation.models import Assignment, Rating
from annotation.selectors import rater_progress
from annotation.services import assignments_create_all, rating_submit
from annotation.services.adjudication import adjudication_resolve
from annotation.services.adjudication_queue import adjudication_send
from annotation.services.assignment import assignment_last_saved_backdate
from annotation.services.participation import consent_record
from studies.models import AdjudicationRule, BlindedLabel, Membership, Study, TestCase
from studies.services import membership_add, study_create, study_open, test_cases_add
from studies.services.accounts import demo_account_ensure
from studies.services.adjudication_rules import adjudication_rules_set

DEMO_PASSWORD = "concord-demo"  # noqa: S105 - printed for the newcomer; demo accounts only
DEMO_SLUG = "reference-demo"
CASES_FILE = Path(__file__).resolve().parents[2] / "demo" / "cases.json"

INSTRUCTIONS = """\
You will independently evaluate pairs of AI-generated strategic reasoning responses using a
structured 5-dimension rubric.

For each test case:

1. Read the prompt carefully to understand the strategic reasoning challenge.
2. Evaluate **Response A** on all 5 dimensions, then **Response B** the same way.
3. Rate your confidence (Low/Medium/High) for this test case.
4. Optionally add brief notes on why you scored as you did.

**Key principle:** evaluate responses based solely on rubric criteria, not on stylistic
preferences or agreement with conclusions. Do not attempt to infer which response came from
which approach; evaluate each response on its own merits.

Apply the rubric mechanically, list what you counted so your counting method is documented,
and flag ambiguity in your notes rather than guessing.
"""


CONSENT = """\
**Purpose.** This study checks whether external raters agree when they score AI-generated
answers to strategic reasoning prompts on a fixed rubric.

**What you will do.** Score each pair of responses on five dimensions, rate your confidence,
and add notes if you wish. This demo has 13 cases to score; the full study takes 6-8 hours.

**Content.** The prompts discuss AI policy, health care and public budgets. None contain
offensive material.

**Pay.** 6.00 EUR per case you score (demo figures: no payment is made).

**Your data.** Your scores are stored under a pseudonym (R-01, R-02, ...) and reported in
aggregate. You may withdraw at any time without penalty.
"""


class Command(BaseCommand):
    help = "Load the demo study (idempotent): reference rubric, demo cases, six accounts."
    # `make run` migrates first, which runs the checks; running them again costs seconds.
    requires_system_checks: list[str] = []

    @transaction.atomic
    def handle(self, *args, **options):
        # Hashing is deliberately slow (about a second each on a busy machine); the six demo
        # accounts share one password, so it is hashed once.
        self._password = make_password(DEMO_PASSWORD)
        users = {
            name: demo_account_ensure(
                username=name, password_hash=self._password, staff=(name == "admin")
            )
            for name in ("admin", "coordinator", "rater1", "rater2", "rater3", "adjudicator")
        }
        if Study.objects.filter(slug=DEMO_SLUG).exists():
            self.stdout.write("The demo study is already loaded; nothing changed.")
        else:
            data = json.loads(CASES_FILE.read_text(encoding="utf-8"))
            study = study_create(
                slug=DEMO_SLUG,
                name="Strategic reasoning: external validation (demo)",
                lead=users["coordinator"],
                rubric_preset="reference",
                blinding_seed=42,
                description="Two systems answer strategic reasoning prompts; raters score both.",
                instructions=INSTRUCTIONS,
                consent_text=CONSENT,
            )
            test_cases_add(study=study, systems=data["systems"], cases=data["cases"])
            demo_quality_items_add(study=study, actor=users["coordinator"])
            for name in ("rater1", "rater2", "rater3"):
                rater = membership_add(study=study, user=users[name], role=Membership.Role.RATER)
                assignments_create_all(study=study, rater=rater)
            adjudicator = membership_add(
                study=study, user=users["adjudicator"], role=Membership.Role.ADJUDICATOR
            )
            # Protocol 5.3's kind of rule on the reference rubric: Depth goes to an
            # adjudicator when the raters' points differ by more than one.
            adjudication_rules_set(
                study=study,
                actor=users["coordinator"],
                rules=[
                    {
                        "dimension": "depth",
                        "trigger": AdjudicationRule.Trigger.DISAGREEMENT,
                        "tolerance": 1,
                    }
                ],
            )
            demo_welfare_settings(study=study, actor=users["coordinator"])
            study = study_open(study=study, actor=users["coordinator"], acknowledge_warnings=True)
            rated = [study.memberships.get(user=users[name]) for name in ("rater2", "rater3")]
            for rater in rated:
                self._rate_everything(study, rater)
            demo_welfare_raters(study=study, raters=rated, actor=users["coordinator"])
            self._adjudicate_one(study, adjudicator, lead=users["coordinator"])
            self.stdout.write(self.style.SUCCESS(f"Loaded the demo study '{study.name}'."))
        self.stdout.write(
            f"Demo sign-ins (password '{DEMO_PASSWORD}'): rater1 ({self._rater1_state(users)}), "
            "rater2 and rater3 (raters who have scored every case), coordinator (study "
            "lead), adjudicator (adjudicator, one case decided), admin (administrator)."
        )

    def _rater1_state(self, users) -> str:
        """How far rater1 has got, so a second run does not call them fresh after rating."""
        rater = Membership.objects.filter(study__slug=DEMO_SLUG, user=users["rater1"]).first()
        if rater is None:
            return "not in the demo study"
        progress = rater_progress(rater=rater)
        if progress.done == 0:
            return "a rater with nothing rated yet: start here"
        return f"a rater who has submitted {progress.done} of {progress.total} cases"

    def _rate_everything(self, study, rater):
        """Plausible scores for every case, so the coordinator's pages have data to show.

        Stronger responses get more factors, alternatives and recommendations; a seeded
        random wobble per rater keeps the two demo raters from agreeing perfectly.
        """
        consent_record(rater=rater, agreed=True, prior_knowledge=False)
        wobble = random.Random(f"demo:{rater.pseudonym}")  # demo data, not security

        def items(name, base):
            count = max(0, base + wobble.choice((-1, 0, 0, 0, 1)))
            return {"items": [{"text": f"{name} {n + 1}"} for n in range(count)]}

        stronger = {
            row.test_case_id: row.label
            for row in BlindedLabel.objects.filter(
                test_case__study=study, response__system__name="improved"
            )
        }
        for assignment in rater.assignments.order_by("position"):
            responses = _responses(
                stronger[assignment.test_case_id], items=items, maybe=lambda: wobble.random() < 0.3
            )
            assignment_last_saved_backdate(assignment=assignment, by=timedelta(hours=1))
            rating_submit(
                assignment=assignment,
                payload={"responses": responses, "confidence": "medium", "notes": ""},
                any_version=True,
                active_seconds=wobble.randint(600, 1500),
            )

    def _adjudicate_one(self, study, adjudicator, *, lead):
        """One case decided, so the demo shows a done adjudication: the first sample case
        the two demo raters scored differently on Depth, sent by hand (rater1 has not
        rated, so the queue takes no case yet) and resolved by the adjudicator."""
        depth = study.rubric.dimensions.get(key="depth").scoring()
        cases = list(study.test_cases.in_sample().order_by("position"))
        answers: dict = {case.pk: {"A": [], "B": []} for case in cases}
        rows = Rating.objects.filter(
            assignment__test_case__in=cases, assignment__status=Assignment.Status.SUBMITTED
        ).values_list("assignment__test_case_id", "label", "scores", "assignment__flipped")
        for case_id, label, scores, flipped in rows:
            answers[case_id][label].append(((scores or {}).get("depth"), flipped))
        case: TestCase = next(
            (c for c in cases if any(depth.disagree(unit) for unit in answers[c.pk].values())),
            cases[0],
        )
        adjudication = adjudication_send(
            study=study,
            actor=lead,
            test_case=case,
            reason="R-02 and R-03 counted different factors under Depth of Analysis.",
        )
        stronger = BlindedLabel.objects.get(test_case=case, response__system__name="improved")

        def items(name, count):
            return {"items": [{"text": f"{name} {n + 1}"} for n in range(count)]}

        payload = {
            "responses": _responses(stronger.label, items=items, maybe=lambda: False),
            "notes": "Counted the distinct factors once each; restatements are not new factors.",
        }
        adjudication_resolve(
            adjudication=adjudication,
            adjudicator=adjudicator,
            payload=payload,
            expected_version=adjudication.version,
            actor=adjudicator.user,
        )


def _responses(stronger: str, *, items, maybe) -> dict:
    """Both responses' answers on the reference rubric; the stronger one (key label) gets
    more factors, alternatives and recommendations. ``items(name, base)`` lists the items,
    ``maybe()`` decides the weaker response's third evidence box."""
    responses = {}
    for label in ("A", "B"):
        strong = stronger == label
        responses[label] = {
            "depth": items("factor", 6 if strong else 3),
            "evidence": {"checked": [True, strong, strong or maybe()]},
            "alternatives": items("alternative", 2 if strong else 0),
            "structure": {"checked": [True, True, strong]},
            "actionability": items("recommendation", 3 if strong else 1),
        }
    return responses

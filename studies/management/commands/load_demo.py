import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from annotation.services import assignments_create_all
from studies.models import Membership, Study
from studies.services import membership_add, study_create, study_open, test_cases_add

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


class Command(BaseCommand):
    help = "Load the demo study (idempotent): reference rubric, demo cases, five accounts."

    @transaction.atomic
    def handle(self, *args, **options):
        users = {
            name: self._user(name, staff=(name == "admin"))
            for name in ("admin", "coordinator", "rater1", "rater2", "rater3")
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
            )
            test_cases_add(study=study, systems=data["systems"], cases=data["cases"])
            for name in ("rater1", "rater2", "rater3"):
                rater = membership_add(study=study, user=users[name], role=Membership.Role.RATER)
                assignments_create_all(study=study, rater=rater)
            study_open(study=study, actor=users["coordinator"], acknowledge_warnings=True)
            self.stdout.write(self.style.SUCCESS(f"Loaded the demo study '{study.name}'."))
        self.stdout.write(
            f"Demo sign-ins (password '{DEMO_PASSWORD}'): rater1, rater2, rater3 (raters), "
            "coordinator (study lead), admin (administrator)."
        )

    def _user(self, username, *, staff):
        user, created = get_user_model().objects.get_or_create(
            username=username, defaults={"is_staff": staff, "is_superuser": staff}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
        return user

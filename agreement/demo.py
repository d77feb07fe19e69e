"""The demo's pairwise study: next-step candidates from four systems in varying pairings,
rated by two demo raters with their reasoning first, and one LLM judge's outputs.

Loaded by ``manage.py load_judge_demo`` (after ``load_demo``, which creates the accounts),
so that the ranking and the judge calibration pages have something to show on
``make run``. Everything is written through the services the app uses.
"""

import json
import random
from itertools import combinations

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.services import assignments_create_all, rating_submit
from annotation.services.participation import consent_record
from studies.blinding import judge_prompt_first
from studies.models import Membership, Study
from studies.services import membership_add, study_create, study_open, test_cases_import

from .services import judge_outputs_import
from .services.plan import primary_measure_choices, primary_measure_set

DEMO_SLUG = "next-step-demo"
SYSTEMS = {"model-w": 0.9, "model-x": 0.6, "model-y": 0.4, "model-z": 0.1}  # how often right
QUESTIONS = [
    ("What is 17 * 6 + 8?", ["17 * 6 = 102"], ("102 + 8 = 110", "102 + 8 = 100")),
    (
        "Solve 3x + 5 = 20.",
        ["Subtract 5 from both sides: 3x = 15"],
        ("x = 15 / 3 = 5", "x = 15 * 3 = 45"),
    ),
    (
        "A train covers 180 km in 2 hours. Its speed?",
        ["Speed is distance over time"],
        ("180 / 2 = 90 km/h", "180 * 2 = 360 km/h"),
    ),
    ("What is 25% of 240?", ["25% is one quarter"], ("240 / 4 = 60", "240 / 25 = 9.6")),
    (
        "How many minutes are in 3.5 hours?",
        ["One hour has 60 minutes"],
        ("3.5 * 60 = 210", "3 * 60 + 5 = 185"),
    ),
    (
        "Sum of the angles of a pentagon?",
        ["A polygon with n sides has (n - 2) * 180 degrees"],
        ("(5 - 2) * 180 = 540", "5 * 180 = 900"),
    ),
]
INSTRUCTIONS = """\
Each case shows a question and the first reasoning steps towards its answer, then two
candidate next steps. Write your reasoning first, then choose which candidate is the better
next step (correctness and helpfulness), as an impartial judge would.
"""


def _cases(rng: random.Random) -> list[dict]:
    """Each question once per pairing of the four systems, in a seeded order."""
    cases, n = [], 0
    for pair in combinations(sorted(SYSTEMS), 2):
        for question, steps, (right, wrong) in rng.sample(QUESTIONS, 2):
            n += 1
            responses = {}
            for system in pair:
                correct = rng.random() < SYSTEMS[system]
                responses[system] = right if correct else wrong
            if n == 3:
                responses[pair[1]] = ""  # a real system output: empty
            cases.append(
                {"id": f"NS-{n:02d}", "prompt": question, "context": "\n".join(steps),
                 "responses": responses}
            )  # fmt: skip
    return cases


@transaction.atomic
def pairwise_demo_load() -> str:
    """Create the demo pairwise study once; returns what happened, for the command."""
    if Study.objects.filter(slug=DEMO_SLUG).exists():
        return "The pairwise demo study is already loaded; nothing changed."
    users = {u.username: u for u in get_user_model().objects.filter(
        username__in=("coordinator", "rater1", "rater2", "rater3"))}  # fmt: skip
    if len(users) < 4:
        return "Run `manage.py load_demo` first: it creates the demo accounts."
    rng = random.Random("pairwise-demo")  # demo data, not security
    study = study_create(
        slug=DEMO_SLUG,
        name="Next reasoning step: arena and LLM judge (demo)",
        lead=users["coordinator"],
        rubric_preset="pairwise",
        blinding_seed=7,
        description="Four systems in varying pairings; one LLM judge to calibrate.",
        instructions=INSTRUCTIONS,
        side_mode="balanced",
        explanation_first=True,
        case_layout="next_step",
        success_min_dimensions=1,
    )
    data = "\n".join(json.dumps(case) for case in _cases(rng)).encode()
    test_cases_import(study=study, actor=users["coordinator"], filename="cases.jsonl", data=data)
    for name in ("rater1", "rater2", "rater3"):
        rater = membership_add(study=study, user=users[name], role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=rater)
    # As the protocol's analysis plan asks, the primary question is named before opening:
    # the preference's win rate.
    preference, _ = primary_measure_choices(study=study)[0]
    primary_measure_set(study=study, actor=users["coordinator"], measure=preference)
    study_open(study=study, actor=users["coordinator"], acknowledge_warnings=True)
    for name in ("rater2", "rater3"):
        _rate(study.memberships.get(user=users[name]), rng)
    judge_outputs_import(study=study, filename="judge.jsonl", data=_judge_outputs(study, rng))
    return f"Loaded the pairwise demo study '{study.name}' with a judge's outputs."


def _better_key_label(test_case) -> str | None:
    """The key label of the correct candidate ("A"/"B"), or None if both are equally right."""
    texts = {label.label: label.response.text for label in test_case.labels.all()}
    right = {label for label, text in texts.items() if text and _is_right(test_case, text)}
    return next(iter(right)) if len(right) == 1 else None


def _is_right(test_case, text: str) -> bool:
    return any(text == right for q, _, (right, _) in QUESTIONS if q == test_case.prompt)


def _rate(rater: Membership, rng: random.Random) -> None:
    consent_record(rater=rater, agreed=True, prior_knowledge=False)
    for assignment in rater.assignments.select_related("test_case").order_by("position"):
        better = _better_key_label(assignment.test_case)
        key_value = 0 if better is None else (-2 if better == "A" else 2)
        if rng.random() < 0.15:
            key_value = -key_value or rng.choice((-1, 1))  # a rater's slip
        choice = -key_value if assignment.flipped else key_value
        rating_submit(
            assignment=assignment,
            payload={
                "case": {"preference": {"choice": choice}},
                "confidence": rng.choice(("medium", "high")),
                "notes": "Checked the arithmetic of each candidate step.",
            },
            any_version=True,
            active_seconds=rng.randint(60, 240),
        )


def _better_system(test_case) -> str | None:
    """The system whose candidate is the correct one, or None if both are equally right."""
    texts = {r.system.name: r.text for r in test_case.responses.all()}
    right = {name for name, text in texts.items() if text and _is_right(test_case, text)}
    return next(iter(right)) if len(right) == 1 else None


def _judge_outputs(study: Study, rng: random.Random) -> bytes:
    """A judge that is mostly right, leans to the first position, and sometimes breaks the
    verdict format (those outputs are listed as unparseable). It reads the prompts as they
    are exported: their order comes from the case and its systems, not from the key."""
    lines = []
    cases = study.test_cases.prefetch_related("responses__system").order_by("position")
    for test_case in cases:
        systems = sorted(r.system.name for r in test_case.responses.all())
        better = _better_system(test_case) or rng.choice(systems)
        first = judge_prompt_first(
            seed=study.blinding_seed,
            secret=study.blinding_secret,
            case_id=test_case.case_id,
            systems=systems,
        )
        for order in ("AB", "BA"):
            shown = "A" if (order == "AB") == (better == first) else "B"
            if rng.random() < 0.2:
                shown = "A"  # position bias: the first candidate
            text = f"Candidate {shown} continues the reasoning correctly.\n[[{shown}]]"
            roll = rng.random()
            if roll < 0.06:
                text = "Both candidates look reasonable to me."
            elif roll < 0.1:
                text = f"[[{shown}]] because it is correct."
            lines.append(json.dumps(
                {"case_id": test_case.case_id, "order": order, "judge": "demo-judge",
                 "output": text}
            ))  # fmt: skip
    return "\n".join(lines).encode()

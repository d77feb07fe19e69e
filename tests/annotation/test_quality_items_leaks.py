"""A gold item or attention check looks exactly like any other case to the rater.

Every URL a rater can reach (the access matrix's rater and assignment rules, and the home
page) is fetched for a queue holding sample cases, gold items and an attention check: no
page names a purpose, a gold case's id or its explanation, and the rating page and the
autosave answer of a gold item are the same as a sample case's once the case's own content
(its texts, its place in the queue, its ids) is taken out.
"""

import json
import re

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.services import assignments_create_all, rating_submit
from annotation.services.participation import consent_record
from studies.models import Membership, Study
from studies.models import TestCase as Case
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add
from studies.services.quality import ExpectedCell, attention_check_create, expected_answers_set
from tests.payloads import full_marks_payload
from tests.test_access_matrix import RULES

from ..factories import UserFactory, make_cases

pytestmark = pytest.mark.django_db

SECRET_WORDS = ("gold", "attention", "expected", "purpose", "GOLDKEY-", "Why this is gold")


@pytest.fixture
def world():
    lead = UserFactory()
    study = study_create(slug="leaky", name="Leaky", lead=lead)
    cases = make_cases(12)
    for case in cases[10:]:
        case["id"] = f"GOLDKEY-{case['id']}"
    cases_add(study=study, systems=["baseline", "improved"], cases=cases)
    for case in cases[10:]:
        expected_answers_set(
            test_case=study.test_cases.get(case_id=case["id"]),
            purpose=Case.Purpose.GOLD,
            cells=[ExpectedCell("baseline", "depth", "5")],
            explanation="Why this is gold",
            actor=lead,
        )
    attention_check_create(
        study=study, case_id="GOLDKEY-ATT", prompt="A prompt", text="", actor=lead
    )
    rater = UserFactory()
    membership = membership_add(study=study, user=rater, role=Membership.Role.RATER)
    from studies.services.quality import quality_settings_update

    quality_settings_update(
        study=study, values={"gold_percent": 20, "attention_every": 10}, actor=lead
    )
    assignments_create_all(study=study, rater=membership)
    consent_record(rater=membership, agreed=True, prior_knowledge=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    queue = list(membership.assignments.select_related("test_case").order_by("position"))
    assert {a.test_case.purpose for a in queue} == {"sample", "gold", "attention"}
    return study, rater, queue


def rater_urls(study, queue):
    urls = [reverse("home")]
    for name, rule in RULES.items():
        if rule.who not in ("rater", "assignment") or "GET" not in rule.methods:
            continue
        if rule.who == "assignment":
            urls += [reverse(name, args=[a.uuid]) for a in queue]
        elif name != "annotation:training_item":  # needs an item; the study has none
            urls.append(reverse(name, args=[study.slug]))
    return urls


def assert_no_secret(text: str, study):
    lowered = text.lower()
    for word in SECRET_WORDS:
        assert word.lower() not in lowered, word
    for case_id in study.test_cases.exclude(purpose="sample").values_list("case_id", flat=True):
        assert case_id not in text


def test_no_rater_page_names_a_purpose_an_id_or_an_explanation(client, world):
    study, rater, queue = world
    client.force_login(rater)
    for url in rater_urls(study, queue):
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        assert_no_secret(response.text, study)
    # And after rating: the self-check, the queue and the next step.
    for assignment in queue:
        rating_submit(assignment=assignment, payload=full_marks_payload(), any_version=True)
    for url in rater_urls(study, queue):
        assert_no_secret(client.get(url, follow=True).text, study)


def _shape(text: str, assignment: Assignment) -> str:
    """The page with what belongs to one case taken out: its texts, number and ids."""
    case = assignment.test_case
    for label in case.labels.select_related("response"):
        text = text.replace(label.response.text, "RESPONSE")
    text = text.replace(case.prompt, "PROMPT")
    if case.stratum:
        text = text.replace(f">{case.stratum}<", ">STRATUM<")
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID", text)
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "CSRF", text)
    return re.sub(r"\d+", "N", text)


def test_a_gold_page_and_its_autosave_are_shaped_like_a_sample_page(client, world):
    study, rater, queue = world
    client.force_login(rater)
    sample = next(a for a in queue if a.test_case.purpose == "sample" and a.position > 0)
    others = [a for a in queue if a.test_case.purpose != "sample"]
    for other in others:
        pages = [
            _shape(client.get(reverse("annotation:rate", args=[a.uuid])).text, a)
            for a in (sample, other)
        ]
        assert pages[0] == pages[1]
    saves = set()
    for a in [sample, *others]:
        response = client.post(
            reverse("annotation:draft", args=[a.uuid]),
            data=json.dumps({"payload": full_marks_payload(), "version": 0}),
            content_type="application/json",
        )
        assert response.status_code == 200
        saves.add((tuple(sorted(response.json())), response.json()["version"]))
    assert len(saves) == 1


def test_ids_and_order_give_nothing_away(world):
    study, rater, queue = world
    # The only ids a rater sees are random UUIDs; the queue is not sorted by case position.
    positions = [a.test_case.position for a in queue]
    assert positions != sorted(positions)
    assert queue[0].test_case.purpose == "sample"


def _main_text(html: str) -> str:
    """The visible text of a page's main part (tags and attributes taken out)."""
    main = html[html.index('<main id="main"') : html.index("</main>")]
    return " ".join(re.sub(r"<[^>]+>", " ", main).split())


def leaks_beyond_case_n(text: str, study, queue) -> list[str]:
    """What a rater-facing text tells beyond "Case N": any test case id, or the number of
    sample cases where the rater will see more (the difference is the quality items). The
    number of quality items alone is too small to tell from the rubric's own numbers."""
    found = [
        case_id for case_id in study.test_cases.values_list("case_id", flat=True) if case_id in text
    ]
    sample = study.test_cases.filter(purpose="sample").count()
    if sample != len(queue) and re.search(rf"(?<![\d.:-]){sample}(?![\d.:%-])", text):
        found.append(f"count {sample}")
    return found


@pytest.fixture
def onboarding(world):
    """The world with the reference protocol's consent and instructions, a practice case,
    and a second rater who has not consented yet (so the consent page is shown)."""
    from annotation.services.training import onboarding_settings_save
    from studies.presets import REFERENCE_CONSENT, REFERENCE_INSTRUCTIONS

    study, rater, queue = world
    Study.objects.filter(pk=study.pk).update(
        consent_text=REFERENCE_CONSENT, instructions=REFERENCE_INSTRUCTIONS
    )
    study.refresh_from_db()
    practice = next(a.test_case for a in queue if a.test_case.purpose == "sample")
    onboarding_settings_save(study=study, practice_case=practice)
    newcomer = UserFactory()
    membership = membership_add(study=study, user=newcomer, role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=membership)
    return study, rater, newcomer, queue


def test_practice_and_consent_say_nothing_beyond_case_n(client, onboarding):
    study, rater, newcomer, queue = onboarding
    client.force_login(newcomer)
    consent = client.get(reverse("annotation:consent", args=[study.slug]))
    assert consent.status_code == 200 and "What this study is" in consent.text
    pages = {"consent": consent.text}
    client.force_login(rater)
    for name in ("practice", "assignments"):
        page = client.get(reverse(f"annotation:{name}", args=[study.slug]))
        assert page.status_code == 200
        pages[name] = page.text
    assert "Practi" in _main_text(pages["practice"])
    for name, html in pages.items():
        found = leaks_beyond_case_n(_main_text(html), study, queue)
        if name == "assignments":  # the queue lists "Case 1" to "Case 13": ids only here
            found = [f for f in found if not f.startswith("count ")]
        assert found == [], name
        assert_no_secret(html, study)


def test_the_check_catches_an_id_or_a_sample_count(onboarding):
    """The check's power: a practice text naming its case, or a consent counting the sample
    while the queue holds more, is caught; the queue's own length is allowed."""
    study, _, _, queue = onboarding
    sample = study.test_cases.filter(purpose="sample")
    case_id = sample.first().case_id
    assert leaks_beyond_case_n(f"Practice on {case_id}", study, queue) == [case_id]
    counted = f"You will evaluate {sample.count()} pairs."
    assert leaks_beyond_case_n(counted, study, queue) == [f"count {sample.count()}"]
    assert leaks_beyond_case_n(f"Case 3 of {len(queue)}", study, queue) == []

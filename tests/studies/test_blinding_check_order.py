"""The blinding check's warnings say nothing about which label a system got.

A coordinator uploaded the texts, so they know which system wrote which; if the warnings
of a case came in label order, the first would always be Response A's.
"""

import re

import pytest
from django.urls import reverse

from studies.blinding import blinded_order
from studies.errors import StudySetupError
from studies.models import BlindedLabel, Response, Study
from studies.selectors import study_identity_mentions
from studies.services import identity_mentions_rescan, study_open

from ..factories import UserFactory, make_study

SECRET = "0" * 32
TEXTS = {
    "baseline": "As an AI developed by OpenAI, I would stage the release.",
    "improved": "I am ChatGPT, and the improved plan is better.",
}


def _seeds_with_opposite_keys() -> tuple[int, int]:
    """Two seeds that show the two systems of TC-001 in opposite order."""
    orders = {}
    for seed in range(1, 100):
        order = tuple(
            blinded_order(seed=seed, secret=SECRET, case_id="TC-001", systems=list(TEXTS))
        )
        orders.setdefault(order, seed)
        if len(orders) == 2:
            return tuple(orders.values())
    raise AssertionError("no two seeds with opposite keys")


def _flagged_study(slug: str, seed: int, lead) -> Study:
    study = make_study(lead=lead, slug=slug, cases=2, status=Study.Status.DRAFT, seed=seed,
                       secret=SECRET)  # fmt: skip
    for system, text in TEXTS.items():
        Response.objects.filter(
            test_case__study=study, test_case__case_id="TC-001", system__name=system
        ).update(text=text)
    identity_mentions_rescan(study=study)
    return study


def _warnings(page: str) -> list[str]:
    items = re.findall(r'<li class="text-break blinding-warning">(.*?)</li>', page, re.S)
    return [" ".join(item.split()) for item in items]


@pytest.fixture
def two_keys(db):
    lead = UserFactory()
    first, second = _seeds_with_opposite_keys()
    studies = [_flagged_study("key-one", first, lead), _flagged_study("key-two", second, lead)]
    labels = [
        dict(
            BlindedLabel.objects.filter(
                test_case__study=s, test_case__case_id="TC-001"
            ).values_list("response__system__name", "label")
        )
        for s in studies
    ]
    assert labels[0]["baseline"] == labels[1]["improved"]  # the keys really are opposite
    return lead, studies


def test_the_warnings_are_in_the_same_order_whichever_label_each_system_got(two_keys):
    _, studies = two_keys
    found = [[str(m) for m in study_identity_mentions(study=s)] for s in studies]
    assert found[0] == found[1]
    assert [text.split(":")[0] for text in found[0]] == [
        "TC-001, baseline", "TC-001, baseline", "TC-001, improved", "TC-001, improved"
    ]  # fmt: skip


@pytest.mark.parametrize("page", ["studies:cases", "open"])
def test_every_page_lists_the_warnings_identically_for_both_keys(client, two_keys, page):
    lead, studies = two_keys
    client.force_login(lead)
    rendered = []
    for study in studies:
        if page == "open":
            url = reverse("studies:status", args=[study.slug, "open"])
        else:
            url = reverse(page, args=[study.slug])
        text = client.get(url).text
        assert "Response A" not in text and "Response B" not in text
        rendered.append(_warnings(text))
    assert rendered[0] and rendered[0] == rendered[1]
    assert rendered[0][0].startswith("<strong>TC-001</strong>, baseline:")


def test_the_refusal_to_open_counts_responses_the_same_for_both_keys(two_keys):
    lead, studies = two_keys
    messages = []
    for study in studies:
        with pytest.raises(StudySetupError) as refused:
            study_open(study=study, actor=lead)
        messages.append(str(refused.value))
    assert messages[0] == messages[1]
    assert "found 2 responses" in messages[0]

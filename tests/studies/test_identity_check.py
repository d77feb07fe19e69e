"""The blinding check: responses that say which system or model wrote them."""

import re
import string

import pytest

from studies.importing import identity_check
from studies.importing.identity_check import find_identity_mentions

SYSTEMS = ["baseline", "improved"]


def mentions(text, systems=SYSTEMS):
    return find_identity_mentions(responses=[("TC-001", "baseline", text)], systems=systems)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "As an AI developed by OpenAI, I cannot give legal advice.",
            "describes itself as an AI made by a company",
        ),
        (
            "As a large language model trained by Google, I would weigh...",
            "describes itself as an AI made by a company",
        ),
        ("I am ChatGPT, and here is my analysis.", "names the model that wrote it"),
        ("Hello! I'm Claude. Let me think.", "names the model that wrote it"),
        ("My name is Gemini.", "names the model that wrote it"),
        ("I am Llama, an open model.", "names the model that wrote it"),
        ("I’m GPT-4o; the answer is 3.", "names the model that wrote it"),
        ("This assistant was built by Anthropic.", "names the company that made it"),
        ("As an AI language model, I have no opinions.", "describes itself as an AI"),
        ("The baseline plan is too slow.", "mentions the name of a system in this study"),
        ("IMPROVED results follow.", "mentions the name of a system in this study"),
    ],
)
def test_self_identification_is_found(text, reason):
    found = mentions(text)
    assert reason in [m.reason for m in found], found


@pytest.mark.parametrize(
    "text",
    [
        "Allocate 40% to A and keep a reserve.",
        "OpenAI and Anthropic both published policies on this.",  # naming vendors as a topic
        "An improvement of 5% is likely.",  # "improved" only as a whole word
        "I am confident the staged release is better.",
    ],
)
def test_ordinary_text_passes(text):
    assert mentions(text) == []


def test_one_character_system_names_are_not_searched():
    assert mentions("A is better than B.", systems=["A", "B"]) == []


def test_a_mention_never_says_whether_the_name_is_the_responses_own_system():
    # Saying "names its own system" would reveal the unblinding key to the reader.
    responses = [
        ("TC-001", "baseline", "The baseline view..."),
        ("TC-001", "improved", "The baseline view..."),
    ]
    found = find_identity_mentions(responses=responses, systems=SYSTEMS)
    assert [(m.system, m.reason) for m in found] == [
        ("baseline", "mentions the name of a system in this study"),
        ("improved", "mentions the name of a system in this study"),
    ]
    assert "own" not in str(found[0])


def test_a_mention_shows_the_words_in_context():
    text = "x " * 100 + "As an AI developed by OpenAI, I decline." + " y" * 100
    (found,) = mentions(text)
    assert found.matched.startswith("As an AI developed by OpenAI")
    assert found.snippet.startswith("…") and found.snippet.endswith("…")
    assert str(found).startswith("TC-001, baseline: describes itself as an AI made by a company")
    assert "Response" not in str(found)  # the label would give a coordinator the key


# --- The shortcut: a text without the words a pattern needs is not searched -------------

SHORTCUT_TEXTS = [
    "As an AI developed by OpenAI, I cannot give legal advice.",
    "AS A LARGE LANGUAGE MODEL TRAINED BY GOOGLE DEEPMIND, I would weigh...",
    "as an artificial intelligence created by Meta AI, I think so.",
    "İ am Claude.",  # dotted capital I: IGNORECASE matches it with i
    "ı'm Qwen, and the answer is 3.",  # dotless i
    "Aſ an AI made by xAI, I decline.",  # long s
    "This is DeepSeek. Built\tby\nMicroſoft.",
    "My name is Command R and I was designed by Mistral AI.",
    "I’m Phi-3; trained by Microsoft.",
    "The BASELINE plan and the İmproved one.",
    "Das Ergebnis von baſeline ist besser.",
    "Allocate 40% to A and keep a reserve.",
    "",
]


@pytest.mark.parametrize("systems", [SYSTEMS, ["Çağrı", "Straße"], ["gpt-4o", "K9"]])
def test_the_shortcut_finds_what_searching_every_text_finds(monkeypatch, systems):
    responses = [("TC-001", "baseline", text) for text in SHORTCUT_TEXTS]
    responses += [("TC-002", "baseline", "Çağrı and STRASSE and \u212a9 and GPT-4O")]
    with_shortcut = find_identity_mentions(responses=responses, systems=systems)
    monkeypatch.setattr(identity_check, "_may_match", lambda folded, groups: True)
    assert find_identity_mentions(responses=responses, systems=systems) == with_shortcut
    assert with_shortcut  # the texts do name models and systems


def test_the_fold_is_what_ignorecase_matches_an_ascii_letter_with():
    # Every character IGNORECASE matches with an ASCII letter must fold to that letter.
    every = "".join(chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000)
    for char in set(re.findall(r"[a-z]", every, re.IGNORECASE)):
        (letter,) = [x for x in string.ascii_lowercase if re.fullmatch(x, char, re.IGNORECASE)]
        assert char.translate(identity_check.FOLD) == letter, char

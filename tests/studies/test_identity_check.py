"""The blinding check: responses that say which system or model wrote them."""

import random
import re
import string

import pytest

from studies.importing import identity_check
from studies.importing.identity_check import find_identity_mentions

SYSTEMS = ["baseline", "improved"]


def mentions(text, systems=SYSTEMS):
    return find_identity_mentions(responses=[("TC-001", "baseline", text)], systems=systems)


SELF = identity_check.SELF_DESCRIPTION
MODEL = identity_check.MODEL_NAME
SYSTEM = identity_check.SYSTEM_NAME


@pytest.mark.parametrize(
    ("text", "hits"),
    [
        # "As an AI language model"-style phrases.
        ("As an AI developed by OpenAI, I cannot.", [(SELF, "As an AI"), (MODEL, "OpenAI")]),
        ("As an AI language model, I have no opinions.", [(SELF, "As an AI language model")]),
        ("As a large language model, I would weigh...", [(SELF, "As a large language model")]),
        ("as an artificial intelligence, I think so.", [(SELF, "as an artificial intelligence")]),
        ("I am an AI assistant and cannot browse.", [(SELF, "I am an AI assistant")]),
        ("I’m just an AI, but here goes.", [(SELF, "I’m just an AI")]),
        ("I was trained by a research lab.", [(SELF, "I was trained by")]),
        ("I have been trained on public text.", [(SELF, "I have been trained on")]),
        ("Beyond my training data, nothing is known.", [(SELF, "my training data")]),
        ("After my knowledge cutoff, things changed.", [(SELF, "my knowledge cutoff")]),
        # Model and vendor names from the maintained list, bare, any case, with a version.
        ("As ChatGPT, I think the plan works.", [(MODEL, "ChatGPT")]),
        ("I am Claude, made by Anthropic.", [(MODEL, "Claude"), (MODEL, "Anthropic")]),
        ("GEMINI suggests otherwise.", [(MODEL, "GEMINI")]),
        ("Compare with GPT-4o-mini and Llama 3.1.", [(MODEL, "GPT-4o-mini"), (MODEL, "Llama 3.1")]),
        ("OpenAI and Anthropic both published policies.", [(MODEL, "OpenAI"), (MODEL, "Anthropic")]),
        ("qwen, deepseek, grok, xAI and Phi-3 agree.", [
            (MODEL, "qwen"), (MODEL, "deepseek"), (MODEL, "grok"), (MODEL, "xAI"), (MODEL, "Phi-3"),
        ]),
        ("Cohere's Command R and Mistral disagree.", [
            (MODEL, "Cohere"), (MODEL, "Command R"), (MODEL, "Mistral"),
        ]),
        ("Google, Meta, Bard and Copilot.", [
            (MODEL, "Google"), (MODEL, "Meta"), (MODEL, "Bard"), (MODEL, "Copilot"),
        ]),
        # The study's own system names.
        ("The baseline plan is too slow.", [(SYSTEM, "baseline")]),
        ("IMPROVED results follow.", [(SYSTEM, "IMPROVED")]),
    ],
)  # fmt: skip
def test_every_hit_is_found_with_its_phrase(text, hits):
    found = mentions(text)
    assert [(m.reason, m.matched) for m in found] == hits
    assert all((m.case_id, m.system) == ("TC-001", "baseline") for m in found)


@pytest.mark.parametrize(
    "text",
    [
        "Allocate 40% to A and keep a reserve.",
        "An improvement of 5% is likely.",  # "improved" only as a whole word
        "I am confident the staged release is better.",
        "The metadata of a meta-analysis, a graphic philosophy.",  # names inside other words
        "As an AIDS charity, we fund clinics.",
        "My training as a nurse helps here.",
    ],
)
def test_ordinary_text_passes(text):
    assert mentions(text) == []


def test_a_phrase_repeated_in_a_response_is_one_hit():
    found = mentions("Claude says yes. claude says no. Claude again, and ChatGPT.")
    assert [m.matched for m in found] == ["Claude", "ChatGPT"]


def test_every_listed_name_is_found():
    """The maintained list is the data the check reads: each name is caught on its own."""
    for name in identity_check.MODEL_AND_VENDOR_NAMES:
        assert [m.matched for m in mentions(f"Ask {name.upper()} about it.")] == [name.upper()]


def test_one_character_system_names_are_not_searched():
    assert mentions("A is better than B.", systems=["A", "B"]) == []


def test_a_mention_never_says_whether_the_name_is_the_responses_own_system():
    # Saying "names its own system" would reveal the unblinding key to the reader.
    responses = [
        ("TC-001", "baseline", "The baseline view..."),
        ("TC-001", "improved", "The baseline view..."),
    ]
    found = find_identity_mentions(responses=responses, systems=SYSTEMS)
    assert [(m.system, m.reason) for m in found] == [("baseline", SYSTEM), ("improved", SYSTEM)]
    assert "own" not in str(found[0])


def test_a_mention_shows_the_words_in_context():
    text = "x " * 100 + "As an AI developed by OpenAI, I decline." + " y" * 100
    found, _ = mentions(text)
    assert found.matched == "As an AI"
    assert found.snippet.startswith("…") and found.snippet.endswith("…")
    assert "As an AI developed by OpenAI, I decline." in found.snippet
    assert str(found) == 'TC-001, baseline: describes itself as an AI ("As an AI").'
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
    "gpt4o, (OpenAI), Claude's, llama-3.1 and Gemini_pro; 4gpt, xgpt, GPT_4.",
    "Mixtral-8x7B-Instruct vs. [Qwen2.5] vs. phi3-mini; Command-R and command r+.",
    'a meta-analysis, Bingo, Googled it, #Anthropic, @grok: "Baidu".',
    "",
]


@pytest.mark.parametrize("systems", [SYSTEMS, ["Çağrı", "Straße"], ["gpt-4o", "K9"]])
def test_the_shortcut_finds_what_searching_every_text_finds(monkeypatch, systems):
    responses = [("TC-001", "baseline", text) for text in SHORTCUT_TEXTS]
    responses += [("TC-002", "baseline", "Çağrı and STRASSE and \u212a9 and GPT-4O")]
    with_shortcut = find_identity_mentions(responses=responses, systems=systems)
    monkeypatch.setattr(identity_check, "_may_match", lambda folded, groups: True)
    monkeypatch.setattr(identity_check, "_may_name_a_model", lambda folded: True)
    assert find_identity_mentions(responses=responses, systems=systems) == with_shortcut
    assert with_shortcut  # the texts do name models and systems


def test_the_model_names_shortcut_finds_what_the_pattern_finds():
    # Names beside every kind of character a text may put before or after them.
    rng = random.Random(28)
    names = list(identity_check.MODEL_AND_VENDOR_NAMES)
    pieces = [" ", "-", "_", ".", "'", "3", "4o", "x", "é", "İ", "\u212a", "(", "\n"]
    for _ in range(3000):
        text = "".join(
            rng.choice(pieces) + rng.choice(names).swapcase() * rng.randint(0, 1)
            for _ in range(rng.randint(1, 4))
        )
        if identity_check.MODEL_PATTERN.search(text):
            assert identity_check._may_name_a_model(identity_check._fold(text)), text


def test_the_fold_is_what_ignorecase_matches_an_ascii_letter_with():
    # Every character IGNORECASE matches with an ASCII letter must fold to that letter.
    every = "".join(chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000)
    for char in set(re.findall(r"[a-z]", every, re.IGNORECASE)):
        (letter,) = [x for x in string.ascii_lowercase if re.fullmatch(x, char, re.IGNORECASE)]
        assert char.translate(identity_check.FOLD) == letter, char

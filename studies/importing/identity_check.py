"""Find responses that say who wrote them, which would break the blinding.

A warning, not an error: the coordinator reads each hit in context and decides whether to
edit the response before importing it again. Matched case-insensitively, as whole words:

- a model describing itself: "as an AI", "as a large language model", "I am an AI
  assistant", "I was trained by", "my training data", ... (``SELF_DESCRIPTIONS``);
- a model or vendor name from the maintained list ``MODEL_AND_VENDOR_NAMES`` (with a
  version after it: "GPT-4o", "Llama 3", "Phi3"), even where a text only mentions it: a
  reader who sees "OpenAI" in one response may guess the system;
- the name of any system of the study (names of one character are skipped: "A" would
  match everywhere).

Each hit names the case, the system whose response it is in (the coordinator uploaded
the texts, so that is no secret to them) and the phrase, never the blinded label, and
never whether a matched name is the response's own system: either would reveal the
unblinding key to whoever reads the check. A response gives one hit per distinct phrase.
Hits come out in the order the responses go in; callers pass them in an order that does
not depend on the key (case, then system), and list at most ``MAX_LISTED`` of them with
the total. Nothing here touches the database.
"""

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Listing more than this many hits (on a page, in the command's output, in the API's
# answer) floods the reader; each of them says how many there are in all.
MAX_LISTED = 500

# The maintained list of model families and the companies that make them. A new model
# name is added here, and only here.
MODEL_AND_VENDOR_NAMES = (
    "GPT", "ChatGPT", "OpenAI", "Claude", "Anthropic", "Gemini", "Gemma", "Bard", "PaLM",
    "Google", "DeepMind", "Llama", "Meta", "Mistral", "Mixtral", "Qwen", "Alibaba",
    "DeepSeek", "Grok", "xAI", "Copilot", "Microsoft", "Bing", "Phi", "Cohere", "Command R",
    "Perplexity", "Baidu",
)  # fmt: skip

# "As an AI language model"-style phrases, each with the words it cannot match without
# (a text must hold one word of every group): most texts hold none, and a substring test
# is far cheaper than the search. ``test_identity_check`` keeps the words true.
_AI = r"(?:AI|artificial intelligence|(?:large )?language model|chatbot|virtual assistant)"
_I_AM = ("i am", "i'm", "i’m")
_AI_WORDS = ("ai", "artificial intelligence", "language model", "chatbot", "virtual assistant")
_AS_AI = rf"\bas an? {_AI}(?: (?:language )?model| assistant)?\b"
_I_AM_AI = rf"\b(?:I am|I'm|I’m) (?:an? |just an? )?{_AI}(?: (?:language )?model| assistant)?\b"
_MADE = r"\bI (?:was|have been) (?:trained|developed|created|built|made|designed) (?:by|on)\b"
_MY_MAKING = r"\bmy (?:training data|training cut-?off|knowledge cut-?off|creators?|developers)\b"
SELF_DESCRIPTIONS = [
    (re.compile(_AS_AI, re.I), (("as a",), _AI_WORDS)),
    (re.compile(_I_AM_AI, re.I), (_I_AM, _AI_WORDS)),
    (re.compile(_MADE, re.I), (("i was", "i have been"), (" by", " on"))),
    (re.compile(_MY_MAKING, re.I), (("my ",), ("training", "knowledge", "creator", "developers"))),
]
SELF_DESCRIPTION = "describes itself as an AI"
MODEL_NAME = "names a model or its maker"
SYSTEM_NAME = "mentions the name of a system in this study"
# A version after a name belongs to it ("GPT-4o-mini", "Llama 3.1"); a word joined by a
# hyphen makes another word ("meta-analysis" names no company).
_VERSION = r"(?:[- ]?\d\w*(?:[.-]\w+)*)?"
_NAMES = "|".join(re.escape(name) for name in sorted(MODEL_AND_VENDOR_NAMES, key=len, reverse=True))
MODEL_PATTERN = re.compile(rf"(?<!\w)(?:{_NAMES}){_VERSION}(?!\w|-\w)", re.IGNORECASE)
MODEL_WORDS = (tuple(name.lower() for name in MODEL_AND_VENDOR_NAMES),)

# What IGNORECASE matches an ASCII letter with, letter by letter: the letter in either case,
# and four other characters (``str.lower`` would not do: it makes two characters of one).
FOLD = str.maketrans(
    {
        **{c: c.lower() for c in string.ascii_uppercase},
        "\u0130": "i",  # capital I with a dot
        "\u0131": "i",  # dotless i
        "\u017f": "s",  # long s
        "\u212a": "k",  # Kelvin sign
    }
)


def _fold(text: str) -> str:
    """``text`` as ``_may_match`` reads it; an ASCII text's ``lower`` is the same, and faster."""
    return text.lower() if text.isascii() else text.translate(FOLD)


def _may_match(folded: str, groups: Sequence[Sequence[str]]) -> bool:
    # Loops rather than all()/any() over generators: this runs five times per response.
    for group in groups:
        for word in group:
            if word in folded:
                break
        else:
            return False
    return True


# The model names' shortcut for a text whose fold is ASCII (nearly every text): the set of
# its words against the names' first words, in a few passes in C, where looking for each of
# the names was a pass over the text each, most of an upload's check. Every name is letters
# (and a space); the pattern matches one only with no word character before it, and after
# it none, or its version's digit or separator: so, once every character but the letters
# and "_" is a space, a name the pattern matches is one of the words the text splits into.
_WORD_BYTES = frozenset((string.ascii_lowercase + "_").encode())
_WORDS_ONLY = bytes(byte if byte in _WORD_BYTES else 0x20 for byte in range(256))
MODEL_FIRST_WORDS = frozenset(name.lower().split()[0].encode() for name in MODEL_AND_VENDOR_NAMES)


def _may_name_a_model(folded: str) -> bool:
    if folded.isascii():
        words = folded.encode("ascii").translate(_WORDS_ONLY).split()
        return not MODEL_FIRST_WORDS.isdisjoint(words)
    return _may_match(folded, MODEL_WORDS)


SNIPPET_RADIUS = 60


@dataclass(frozen=True)
class Mention:
    case_id: str
    system: str
    reason: str
    matched: str
    snippet: str

    def __str__(self) -> str:
        # No label: beside the text, it would tell a coordinator the key.
        return f'{self.case_id}, {self.system}: {self.reason} ("{self.matched}").'


def _snippet(text: str, start: int, end: int) -> str:
    left = max(0, start - SNIPPET_RADIUS)
    right = min(len(text), end + SNIPPET_RADIUS)
    snippet = " ".join(text[left:right].split())
    return ("…" if left else "") + snippet + ("…" if right < len(text) else "")


def _system_pattern(systems: Sequence[str]) -> tuple[re.Pattern | None, tuple | None]:
    """The pattern, and the words it needs (None: no shortcut, for names beyond ASCII)."""
    names = sorted({name for name in systems if len(name.strip()) > 1}, key=len, reverse=True)
    if not names:
        return None, None
    alternatives = "|".join(re.escape(name) for name in names)
    pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
    ascii_only = all(name.isascii() for name in names)
    return pattern, ((tuple(name.lower() for name in names),) if ascii_only else None)


def _hits(text: str, pattern: re.Pattern, reason: str, seen: set) -> Iterable[tuple]:
    """Each new phrase the pattern finds in the text, with its span."""
    for match in pattern.finditer(text):
        phrase = " ".join(match.group(0).split())
        if phrase.lower() not in seen:
            seen.add(phrase.lower())
            yield reason, phrase, match.span()


class IdentityScanner:
    """The check, one response at a time, for a caller that reads a file as a stream.

    Keeps the first ``keep`` mentions (all of them when None) and counts every one.
    """

    def __init__(self, *, systems: Sequence[str], keep: int | None = None):
        system_pattern, system_words = _system_pattern(systems)
        checks: list[tuple[re.Pattern, tuple | None, str]] = [
            (pattern, words, SELF_DESCRIPTION) for pattern, words in SELF_DESCRIPTIONS
        ]
        # The study's own names before the list's: a system called "gpt-4o" is reported as one.
        if system_pattern is not None:
            checks.append((system_pattern, system_words, SYSTEM_NAME))
        # No words: the model names have their own shortcut.
        checks.append((MODEL_PATTERN, None, MODEL_NAME))
        self.checks = checks
        self.systems = frozenset(systems)
        self.keep = keep
        self.mentions: list[Mention] = []
        self.count = 0

    def scan(self, case_id: str, system: str, text: str) -> None:
        folded = _fold(text)
        seen: set[str] = set()
        for pattern, words, reason in self.checks:
            if words is not None and not _may_match(folded, words):
                continue
            if pattern is MODEL_PATTERN and not _may_name_a_model(folded):
                continue
            for found, phrase, span in _hits(text, pattern, reason, seen):
                self.count += 1
                if self.keep is None or len(self.mentions) < self.keep:
                    self.mentions.append(
                        Mention(
                            case_id=case_id,
                            system=system,
                            reason=found,
                            matched=phrase,
                            snippet=_snippet(text, *span),
                        )
                    )


def find_identity_mentions(
    *, responses: Iterable[tuple[str, str, str]], systems: Sequence[str]
) -> list[Mention]:
    """``responses`` are (case id, system name, text); one mention per phrase and response."""
    scanner = IdentityScanner(systems=systems)
    for case_id, system, text in responses:
        scanner.scan(case_id, system, text)
    return scanner.mentions

"""Find responses that say who wrote them, which would break the blinding.

A warning, not an error: the coordinator reads each match in context and decides whether
to edit the response before importing it again. Matched, case-insensitively:

- a model describing itself: "As an AI developed by ...", "as an AI language model",
  "I am ChatGPT", "I'm Claude", "my name is Gemini", "trained by OpenAI", ...;
- the name of any system of the study, as a whole word (names of one character are
  skipped: "A" would match everywhere).

A match names the case and the system whose response it is in (the coordinator uploaded
the texts, so that is no secret to them), never the blinded label, and never whether a
matched name is the response's own system: either would reveal the unblinding key to
whoever reads the check. Mentions come out in the order the responses go in; callers pass
them in an order that does not depend on the key (case, then system). Nothing here
touches the database.
"""

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MODELS = (
    r"ChatGPT|GPT-?\d[\w.-]*|Claude|Gemini|Bard|Llama|Mistral|Mixtral|Grok|Copilot|Qwen"
    r"|DeepSeek|Command R|Phi-?\d"
)
VENDORS = r"OpenAI|Anthropic|Google(?: DeepMind)?|DeepMind|Meta(?: AI)?|Mistral AI|xAI|Microsoft"

# Each pattern with the words it cannot match without (a text must hold one word of every
# group): most texts hold none, and a substring test is far cheaper than the search. The
# words are what every match contains, lowercased; ``test_identity_check`` keeps them true.
VERBS = ("developed", "created", "made", "built", "trained", "designed")
MODEL_WORDS = (
    "gpt", "claude", "gemini", "bard", "llama", "mistral", "mixtral", "grok", "copilot",
    "qwen", "deepseek", "command r", "phi",
)  # fmt: skip
VENDOR_WORDS = (
    "openai",
    "anthropic",
    "google",
    "deepmind",
    "meta",
    "mistral ai",
    "xai",
    "microsoft",
)
SELF_DESCRIPTIONS = [
    (
        "describes itself as an AI made by a company",
        re.compile(
            r"\bas an? (?:AI|artificial intelligence|(?:large )?language model)[\w\s,-]{0,40}?"
            r"\b(?:developed|created|made|built|trained|designed)\s+by\b[^.\n]{0,40}",
            re.IGNORECASE,
        ),
        (("as a",), VERBS, ("by",)),
    ),
    (
        "names the model that wrote it",
        re.compile(
            rf"\b(?:I am|I'm|I’m|my name is|this is)\s+(?:an? )?(?:{MODELS})\b", re.IGNORECASE
        ),
        (("i am", "i'm", "i’m", "my name is", "this is"), MODEL_WORDS),
    ),
    (
        "names the company that made it",
        re.compile(
            rf"\b(?:developed|created|made|built|trained|designed)\s+by\s+(?:{VENDORS})\b",
            re.IGNORECASE,
        ),
        (VERBS, ("by",), VENDOR_WORDS),
    ),
    (
        "describes itself as an AI",
        re.compile(r"\bas an? (?:AI|(?:large )?language model)(?: model| assistant)?\b", re.I),
        (("as a",), ("ai", "language model")),
    ),
]

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


def find_identity_mentions(
    *, responses: Iterable[tuple[str, str, str]], systems: Sequence[str]
) -> list[Mention]:
    """``responses`` are (case id, system name, text); one mention per reason and response."""
    system_pattern, system_words = _system_pattern(systems)
    mentions = []
    for case_id, system, text in responses:
        folded = _fold(text)
        found_spans = []
        for reason, pattern, words in SELF_DESCRIPTIONS:
            match = pattern.search(text) if _may_match(folded, words) else None
            # The broad "as an AI" pattern is only reported where no fuller match was.
            if match and not any(s <= match.start() < e for s, e in found_spans):
                found_spans.append(match.span())
                mentions.append(
                    Mention(
                        case_id=case_id,
                        system=system,
                        reason=reason,
                        matched=" ".join(match.group(0).split()),
                        snippet=_snippet(text, *match.span()),
                    )
                )
        if system_pattern is not None and (
            system_words is None or _may_match(folded, system_words)
        ):
            match = system_pattern.search(text)
            if match:
                mentions.append(
                    Mention(
                        case_id=case_id,
                        system=system,
                        reason="mentions the name of a system in this study",
                        matched=match.group(0),
                        snippet=_snippet(text, *match.span()),
                    )
                )
    return mentions

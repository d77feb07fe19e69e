"""LLM judges: their prompts and the strict reading of their verdicts.

Concord never calls a model. A coordinator exports the prompts (one per test case and
order, both orders), runs a judge elsewhere, and imports the outputs; this module reads a
verdict strictly by the judge template's rule (how the judge then agrees with the human
raters: ``measures``). Pure Python, importing no app: its callers split a case's context into
steps (``studies.rendering.reasoning_steps``, as on the rating screen) and pass the steps.
See docs/statistics.md.

Orders: "AB" shows a case's two responses in its prompt order and "BA" swaps them. The
prompt order is a draw from the case and its systems, never from the key
(``studies.blinding.judge_prompt_first``): prompts are read beside texts the coordinator
knows by system, so they must say nothing about which response is A. Preferences are
signed -1 (the first of a pair), 0 (a tie), +1 (the second): in prompt terms for what the
judge did on its own, in key terms (as the pairwise dimension stores the raters' answers)
for the comparison with the raters after unblinding.

Ties: a template either allows a tie (the judge writes "[[C]]") or not (the strict
default, where "[[C]]" is malformed). A tie counts as a tie (0) throughout the
calibration: in the kappa's three categories and in the position-swap consistency.
"""

import re
from collections.abc import Sequence

ORDERS = ("AB", "BA")
MAX_OUTPUT_CHARS = 100_000
MAX_TEMPLATE_CHARS = 20_000

# The judge prompt of the reference protocol ("two next reasoning steps"), built in.
REFERENCE_TEMPLATE = """\
Please act as an impartial judge and evaluate the quality of two next reasoning steps \
provided by two AI assistants to the question and partial reasoning steps displayed below. \
Your evaluation should consider correctness and helpfulness. You will be given assistant \
A's answer, and assistant B's answer. Your job is to evaluate which assistant's answer is \
better. You should compare the two responses and provide a detailed explanation. Avoid any \
position biases and ensure that the order in which the responses were presented does not \
influence your decision. Do not allow the length of the responses to influence your \
evaluation. Do not favor certain names of the assistants. Be as objective as possible. \
After providing your explanation, output your final verdict by strictly following this \
format: "[[A]]" if assistant A is better, and "[[B]]" if assistant B is better.

[Question and Intermediate Reasoning Steps Provided]
{question_and_steps}

[The Start of Assistant A's Next Reasoning Step]
{step_a}
[The End of Assistant A's Next Reasoning Step]

[The Start of Assistant B's Next Reasoning Step]
{step_b}
[The End of Assistant B's Next Reasoning Step]
"""

# The same prompt with a tie allowed, as the widely used pairwise judge prompts ask for it.
REFERENCE_TIE_TEMPLATE = REFERENCE_TEMPLATE.replace(
    '"[[A]]" if assistant A is better, and "[[B]]" if assistant B is better.',
    '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.',
)
# The built-in templates, by the name a prompt export or an output import chooses them with:
# (their text, whether a tie is allowed).
BUILT_IN = {
    "reference": (REFERENCE_TEMPLATE, False),
    "reference-tie": (REFERENCE_TIE_TEMPLATE, True),
}
TIE = "tie"

PLACEHOLDERS = {
    "question": "the test case's prompt",
    "steps": "the partial reasoning steps (the case's context), numbered one per line",
    "question_and_steps": "the question followed by the numbered steps",
    "step_a": "the candidate shown as A in this order",
    "step_b": "the candidate shown as B in this order",
}
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

VERDICT = re.compile(r"\[\[([AB])\]\]")
# A tie, where the template allows one: "[[C]]", as the common pairwise prompts ask for it,
# or the plain word ("[[tie]]", any case).
TIE_VERDICT = re.compile(r"\[\[(?:C|[Tt][Ii][Ee])\]\]")
# Anything that looks like an attempt at a verdict but is not one of the exact tokens:
# double brackets around anything else ("[[C]]" in a strict template, "[[a]]", "[[ A ]]")
# or single brackets around one letter ("[A]").
MALFORMED = re.compile(r"\[\[[^\[\]\n]{0,20}\]\]|(?<!\[)\[\s*[A-Za-z]\s*\](?!\])")


def parse_verdict(text: str, *, allow_tie: bool = False) -> str:
    """ "A", "B" or (with ``allow_tie``) "tie": a non-empty explanation, then exactly one
    [[A]] or [[B]] (or, with ``allow_tie``, [[C]] or [[tie]]), then only space.

    Raises ValueError naming the reason otherwise; a verdict is never guessed. Without
    ``allow_tie`` a tie token is malformed, as the strict template allows none.
    """
    if not isinstance(text, str):
        raise ValueError("the output is not text")
    if len(text) > MAX_OUTPUT_CHARS:
        raise ValueError(f"the output is longer than {MAX_OUTPUT_CHARS} characters")
    tokens = [(m, m.group(1)) for m in VERDICT.finditer(text)]
    if allow_tie:
        tokens += [(m, TIE) for m in TIE_VERDICT.finditer(text)]
    accepted = {m.group(0) for m, _ in tokens}
    malformed = [m.group(0) for m in MALFORMED.finditer(text) if m.group(0) not in accepted]
    allowed = "[[A]], [[B]] or [[C]]" if allow_tie else "[[A]] or [[B]]"
    if len(tokens) > 1:
        raise ValueError(f"more than one verdict ({len(tokens)} found)")
    if malformed:
        raise ValueError(f"malformed verdict token {malformed[0]!r} (only {allowed})")
    if not tokens:
        raise ValueError(f"no verdict ({allowed}) in the output")
    verdict, value = tokens[0]
    before, after = text[: verdict.start()].strip(), text[verdict.end() :].strip()
    if not before:
        if after:
            raise ValueError("the verdict comes before the explanation")
        raise ValueError("no explanation before the verdict")
    if after:
        raise ValueError("text after the verdict")
    return value


def key_preference(verdict: str, order: str, *, swapped: bool = False) -> int:
    """The verdict shown in `order` as a preference: -1 prefers the response its prompts
    show first in order "AB", +1 the second, 0 a tie; with ``swapped`` (key label B is
    shown first), in key order: -1 prefers A, +1 prefers B."""
    if order not in ORDERS or verdict not in ("A", "B", TIE):
        raise ValueError("order must be AB or BA and the verdict A, B or tie")
    if verdict == TIE:
        return 0
    key_a_first = (order == "AB") != swapped
    prefers_a = (verdict == "A") == key_a_first
    return -1 if prefers_a else 1


def template_asks_for_tie(text: str) -> bool:
    """Whether a template's text tells the judge how to say "tie" ([[C]] or [[tie]])."""
    return bool(TIE_VERDICT.search(text))


def template_check(text: str, *, allow_tie: bool = False) -> list[str]:
    """Problems with a prompt template (empty list if it can be used). A template that
    allows a tie must say so, with the token the judge is to write; one that does not must
    not ask for a tie token its outputs would then be refused for."""
    problems = []
    if not text.strip():
        return ["The template is empty."]
    if len(text) > MAX_TEMPLATE_CHARS:
        problems.append(f"The template is longer than {MAX_TEMPLATE_CHARS} characters.")
    unknown = sorted({name for name in PLACEHOLDER.findall(text) if name not in PLACEHOLDERS})
    if unknown:
        problems.append(
            "Unknown placeholder(s): "
            + ", ".join("{" + name + "}" for name in unknown)
            + "; use "
            + ", ".join("{" + name + "}" for name in PLACEHOLDERS)
            + "."
        )
    for needed in ("step_a", "step_b"):
        if "{" + needed + "}" not in text:
            problems.append(f"The template must contain {{{needed}}}.")
    if allow_tie and not template_asks_for_tie(text):
        problems.append(
            'A template that allows a tie must tell the judge to write "[[C]]" (or "[[tie]]") '
            "for one."
        )
    if not allow_tie and template_asks_for_tie(text):
        problems.append(
            "The template asks for a tie ([[C]]) but does not allow one: its ties would all "
            "be unparseable. Allow ties, or take the tie out of the text."
        )
    return problems


def numbered_steps(steps: Sequence[str]) -> str:
    """The partial reasoning steps, numbered from 1."""
    return "\n".join(f"Step {number}: {step}" for number, step in enumerate(steps, 1))


def template_fill(
    template: str, *, question: str, steps: Sequence[str], first: str, second: str
) -> str:
    """Fill the placeholders in one pass (a response holding "{step_b}" stays as written);
    ``steps`` are the case's partial reasoning steps, as ``reasoning_steps`` splits them."""
    numbered = numbered_steps(steps)
    values = {
        "question": question,
        "steps": numbered,
        "question_and_steps": f"{question}\n{numbered}" if numbered else question,
        "step_a": first,
        "step_b": second,
    }
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)

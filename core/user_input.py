"""JSON from a user (a form's payload, a line of a JSONL file, an API body), read within
bounds, and the one rule for text PostgreSQL cannot store.

The one reader of JSON that a browser, a script or an uploaded file sends. Python's json
module recurses once per level of nesting, so a payload nested 100,000 deep raises
RecursionError; PostgreSQL refuses NUL characters and lone UTF-16 surrogates (which JSON's
``\ud800`` escapes produce) in text and jsonb, and NaN or Infinity in jsonb; an integer of
thousands of digits exceeds Python's int-string limit. ``json_read`` refuses each of these
with a ``UserInputError`` saying which, and in which field, before anything can be written.
``unstorable`` is the same text rule for the other paths (form fields, table cells).
"""

import json
import math
import re
import uuid

from core.errors import ApplicationError

MAX_JSON_CHARS = 2 * 1024 * 1024
# A rating form is about six levels deep ({"responses": {"A": {"depth": {"items": [{...}]}}}}).
MAX_JSON_DEPTH = 32
MAX_NUMBER_CHARS = 40
NUL = "\x00"
MAX_FIELD_NAME_CHARS = 100
# How much of a user's text (a table's cell, a body's field name) a message quotes.
MAX_QUOTED_CHARS = 100
# A surrogate code point in a Python string is always a lone one: JSON's escaped pairs
# ("\ud83d\ude00") are joined into one character as they are read.
SURROGATE = re.compile("[\ud800-\udfff]")
# A whole number as a person types it: ASCII digits, an optional minus. str.isdigit() is
# not this: it takes superscripts ("²") that int() refuses, and "--3".lstrip("-") passes.
WHOLE_NUMBER = re.compile(r"-?[0-9]+", re.ASCII)


class UserInputError(ApplicationError):
    """JSON from a user that cannot be read or stored; ``reason`` says why, in lower case."""

    def __init__(self, reason: str):
        super().__init__(reason[0].upper() + reason[1:] + ".")
        self.reason = reason


def _number(text: str, convert):
    if len(text) > MAX_NUMBER_CHARS:
        raise UserInputError(f"it holds a number longer than {MAX_NUMBER_CHARS} characters")
    value = convert(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise UserInputError("it holds a number too large to store")
    return value


def whole_number_text(text: str, *, max_chars: int = MAX_NUMBER_CHARS) -> int | None:
    """The whole number ``text`` spells (spaces around it ignored), or None for anything
    else, a number longer than ``max_chars`` included."""
    text = text.strip()
    if len(text) > max_chars or not WHOLE_NUMBER.fullmatch(text):
        return None
    return int(text)


def _constant(name: str):
    raise UserInputError(f"it holds {name}, which is not a number JSON allows")


def json_read(text: str, *, max_chars: int = MAX_JSON_CHARS, max_depth: int = MAX_JSON_DEPTH):
    """The value ``text`` holds; ``UserInputError`` when it is not JSON or not storable."""
    if len(text) > max_chars:
        raise UserInputError(f"it is longer than {max_chars:,} characters")
    try:
        value = json.loads(
            text,
            parse_int=lambda s: _number(s, int),
            parse_float=lambda s: _number(s, float),
            parse_constant=_constant,
        )
    except json.JSONDecodeError as error:
        raise UserInputError(
            f"it is not valid JSON ({error.msg} at character {error.colno})"
        ) from None
    except RecursionError:
        # The parser recurses per level: a payload too deep for it is too deep for us.
        raise UserInputError(f"it is nested more than {max_depth} levels deep") from None
    _check_value(value, max_depth)
    return value


def unstorable(text: str) -> str | None:
    """What in ``text`` PostgreSQL cannot store, in words ("a NUL character (\\u0000)"), or
    None when it can store all of it."""
    if NUL in text:
        return "a NUL character (\\u0000)"
    surrogate = SURROGATE.search(text)
    if surrogate:
        return f"a lone surrogate (\\u{ord(surrogate.group()):04x})"
    return None


def quoted(text: str, *, limit: int = MAX_QUOTED_CHARS) -> str:
    """A user's text as a message quotes it: the first ``limit`` characters, and how long it
    is when longer. A cell of a garbage file may be 200,000 characters; a message repeating
    it (once per problem) would be megabytes that no one can read."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def reason_text(value, *, limit: int, missing: str, error: type[ApplicationError]) -> str:
    """A reason a person must give (for a decision the record keeps), stripped; ``error``
    (the service's own) says ``missing`` when it is empty, and refuses one longer than
    ``limit`` or not storable."""
    reason = str(value or "").strip()
    if not reason:
        raise error(missing)
    if len(reason) > limit:
        raise error(f"Keep the reason under {limit:,} characters.")
    problem = unstorable(reason)
    if problem:
        raise error(f"The reason contains {problem}; remove it.")
    return reason


def _field(path: tuple) -> str:
    """Where in the value a text is, as a script would write it: notes, cases[2].prompt."""
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name if len(name) <= MAX_FIELD_NAME_CHARS else name[:MAX_FIELD_NAME_CHARS] + "…"


def _check_value(value, max_depth: int) -> None:
    """Refuse nesting past ``max_depth`` and text that cannot be stored, walking without
    recursion."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            if unstorable(item):
                raise _unstorable_error(value)
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            raise UserInputError(f"it is nested more than {max_depth} levels deep")
        if isinstance(item, dict):
            if any(unstorable(key) for key in item):
                raise _unstorable_error(value)
            pending.extend((child, depth + 1) for child in item.values())
        else:
            pending.extend((child, depth + 1) for child in item)


def _unstorable_error(value) -> UserInputError:
    """The refusal naming the field of the text that cannot be stored. Walked again, with
    each item's place, only once there is one to name: the places cost time to build."""
    pending: list[tuple[object, tuple]] = [(value, ())]
    while pending:
        item, path = pending.pop()
        if isinstance(item, str):
            what = unstorable(item)
            if what:
                where = f'the field "{_field(path)}"' if path else "it"
                return UserInputError(f"{where} contains {what}, which cannot be stored")
        elif isinstance(item, dict):
            for key, child in item.items():
                what = unstorable(key)
                if what:
                    where = f'a field name in "{_field(path)}"' if path else "a field name"
                    # The name itself is not repeated: it holds what cannot be shown.
                    return UserInputError(f"{where} contains {what}, which cannot be stored")
                pending.append((child, (*path, key)))
        elif isinstance(item, list):
            pending.extend((child, (*path, n)) for n, child in enumerate(item))
    raise AssertionError("called without text that cannot be stored")


def uuid_or_none(text) -> uuid.UUID | None:
    """The UUID a form field names, or None when it names none (a lookup then finds nothing)."""
    try:
        return uuid.UUID(str(text))
    except ValueError:
        return None

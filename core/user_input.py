"""JSON from a user (a form's payload, a line of a JSONL file), read within bounds.

The one reader of JSON that a browser or an uploaded file sends. Python's json module
recurses once per level of nesting, so a payload nested 100,000 deep raises RecursionError;
PostgreSQL refuses NUL characters in text and jsonb, and NaN or Infinity in jsonb; an
integer of thousands of digits exceeds Python's int-string limit. ``json_read`` refuses each
of these with a ``UserInputError`` saying which, before anything can be written.
"""

import json
import math
import uuid

from core.errors import ApplicationError

MAX_JSON_CHARS = 2 * 1024 * 1024
# A rating form is about six levels deep ({"responses": {"A": {"depth": {"items": [{...}]}}}}).
MAX_JSON_DEPTH = 32
MAX_NUMBER_CHARS = 40
NUL = "\x00"


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


def _check_value(value, max_depth: int) -> None:
    """Refuse nesting past ``max_depth`` and NUL characters, walking without recursion."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            if NUL in item:
                raise UserInputError(
                    "it contains a NUL character (\\u0000), which cannot be stored"
                )
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            raise UserInputError(f"it is nested more than {max_depth} levels deep")
        if isinstance(item, dict):
            pending.extend((key, depth) for key in item)
            pending.extend((child, depth + 1) for child in item.values())
        else:
            pending.extend((child, depth + 1) for child in item)


def uuid_or_none(text) -> uuid.UUID | None:
    """The UUID a form field names, or None when it names none (a lookup then finds nothing)."""
    try:
        return uuid.UUID(str(text))
    except ValueError:
        return None

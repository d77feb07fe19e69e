"""A field name (or a kind name) held in a constant, so a read looks innocent (issue 37)."""

ITEMS_FIELD = "items"  # flagged: kinds-name-outside-the-kinds
_CHOICE = "choice"  # flagged: kinds-name-outside-the-kinds
COUNTED = "counted"  # flagged: kinds-name-outside-the-kinds


def cell(answer):
    return answer.get(ITEMS_FIELD) or answer.get(_CHOICE)

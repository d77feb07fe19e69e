"""The errors of study set-up; their base, ``ApplicationError``, is ``core.errors``'s.

Imported from here as well as from ``core.errors``: a view catches the base only.
"""

from core.errors import ApplicationError

__all__ = ["ApplicationError", "CaseImportError", "StudySetupError"]


class StudySetupError(ApplicationError):
    """A set-up or lifecycle change was refused; the message says why."""


class CaseImportError(StudySetupError):
    """The file has problems; ``problems`` lists each with its row and column."""

    def __init__(self, problems: list[str]):
        count = len(problems)
        super().__init__(
            f"The file has {count} problem{'s' if count != 1 else ''}; nothing was imported.",
            problems=problems,
        )

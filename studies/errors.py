"""The one base of every error a user can be told about.

Services raise a subclass of ``ApplicationError`` with a message written for the person who
asked (what stopped the change and how to fix it). Views catch this base only: anything
else is a programming error, which stays a logged 500 instead of becoming a form message.
"""


class ApplicationError(Exception):
    """A request was refused; ``str(error)`` says why, in plain words for the user."""

    def __init__(self, message: str = "", *, problems: list | None = None):
        super().__init__(message)
        self.message = message
        self.problems = list(problems or [])


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

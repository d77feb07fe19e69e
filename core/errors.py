"""The one base of every error a user can be told about.

Services raise a subclass of ``ApplicationError`` with a message written for the person who
asked (what stopped the change and how to fix it). Views catch this base only: anything
else is a programming error, which stays a logged 500 instead of becoming a form message.
It lives here, below every app, so the API's plumbing in ``core`` can catch it too.
"""


class ApplicationError(Exception):
    """A request was refused; ``str(error)`` says why, in plain words for the user."""

    def __init__(self, message: str = "", *, problems: list | None = None):
        super().__init__(message)
        self.message = message
        self.problems = list(problems or [])

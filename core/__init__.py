"""Plumbing every app shares: the error base, the API's request and error handling, the
sign-in throttle, the bounded reader of user JSON. It imports no app and not ``config``."""

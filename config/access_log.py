"""gunicorn's access log without query strings (``logger_class`` in config/gunicorn.py).

A crowd participant's join URL carries the platform's ids for them in its query string
(``/join/<token>/?PROLIFIC_PID=...&SESSION_ID=...``), and the next page's ``Referer``
repeats it. Those ids identify a person, and an identity erasure cannot reach a log file,
so the access log never writes them: every line keeps the path and drops the query string,
of the request and of its referer, whatever the log format.
"""

from urllib.parse import urlsplit, urlunsplit

from gunicorn.glogging import Logger


def without_query(value: str) -> str:
    """``value`` (a URL or a path) with its query string and fragment dropped."""
    if not isinstance(value, str) or "?" not in value and "#" not in value:
        return value
    try:
        parts = urlsplit(value)
    except ValueError:
        return value.split("?", 1)[0].split("#", 1)[0]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class AccessLogger(Logger):
    """gunicorn's logger, its access lines without any query string."""

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        method, protocol = environ.get("REQUEST_METHOD", "-"), environ.get("SERVER_PROTOCOL", "-")
        atoms["r"] = f"{method} {without_query(environ.get('RAW_URI', ''))} {protocol}"
        atoms["q"] = ""
        atoms["f"] = without_query(atoms.get("f", "-"))
        for key in ("{referer}i", "{raw_uri}e", "{http_referer}e", "{request_uri}e"):
            if key in atoms:
                atoms[key] = without_query(atoms[key])
        if "{query_string}e" in atoms:
            atoms["{query_string}e"] = ""
        return atoms

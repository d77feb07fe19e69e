"""The web container's health check: GET /healthz/live from inside the container; exit 0 if
200. Liveness, not readiness: a web node with its database unreachable is not restarted.

It sends a Host the app accepts (the first of ALLOWED_HOSTS) and says the request came over
HTTPS, as the reverse proxy would, so neither the host check nor the HTTPS redirect answers
in place of the view.
"""

import os
import sys
import urllib.error
import urllib.request


def host_for(allowed_hosts: str) -> str:
    first = allowed_hosts.split(",")[0].strip()
    if first in ("", "*"):
        return "localhost"
    return first.lstrip(".")  # ".example.org" allows example.org and its subdomains


def main() -> int:
    url = os.environ.get("HEALTHCHECK_URL", "http://127.0.0.1:8000/healthz/live")
    request = urllib.request.Request(  # noqa: S310 - a fixed local http URL
        url,
        headers={
            "Host": host_for(os.environ.get("ALLOWED_HOSTS", "")),
            "X-Forwarded-Proto": "https",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            body = response.read().decode()
    except urllib.error.HTTPError as error:
        print(error.code, error.read().decode(), file=sys.stderr)
        return 1
    except OSError as error:
        print(error, file=sys.stderr)
        return 1
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())

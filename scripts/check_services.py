"""Stop `make test` at once, with a clear message, when PostgreSQL or Redis is unreachable."""

import os
import socket
import sys
from urllib.parse import urlsplit

SERVICES = {
    "PostgreSQL": ("DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/concord", 5432),
    "Redis": ("REDIS_URL", "redis://127.0.0.1:6379/0", 6379),
}


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=3):
            return True
    except OSError:
        return False


def main() -> int:
    missing = []
    for name, (variable, default, default_port) in SERVICES.items():
        url = urlsplit(os.environ.get(variable) or default)
        host, port = url.hostname or "127.0.0.1", url.port or default_port
        if not reachable(host, port):
            missing.append(f"{name} is not reachable at {host}:{port} ({variable}).")
    if missing:
        print("\n".join(missing), file=sys.stderr)
        print(
            "The tests need the real services. Start them with `docker compose up -d db redis`, "
            "or point DATABASE_URL / REDIS_URL at running ones.",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

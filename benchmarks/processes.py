"""What the benchmarks that start Concord's processes share (load.py, chaos.py): a free port,
the statements on the PostgreSQL server that make and drop their database, the study their
raters rate, and what their raters read from the pages (as static/js/rating.js does).

Imported as ``processes`` by the scripts (their folder is first on ``sys.path``)."""

import re
import secrets
import socket
from urllib.parse import urlsplit

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
VERSION = re.compile(r'name="version" id="version" value="(\d+)"')
DRAFT_URL = re.compile(r'data-draft-url="([^"]+)"')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def process_tree(leader: int) -> list[int]:
    """``leader`` and its live descendants (a server's master and its workers)."""
    import os
    from pathlib import Path

    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [leader]
    while todo:
        pid = todo.pop()
        if os.path.exists(f"/proc/{pid}"):
            found.append(pid)
        todo.extend(children.get(pid, []))
    return sorted(found)


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds so far of the live processes ``pids`` (a process that
    exited takes its seconds with it: read the tree before and after, around the work)."""
    import os
    from pathlib import Path

    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def postgres(url: str, statement: str) -> None:
    """Run ``statement`` on the server of ``url``, in its ``postgres`` database."""
    import psycopg

    admin = url.split("?")[0].rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(statement)


def build_study(args, prefix: str):
    """A consented, open study on the reference rubric; every rater has every case. Its slug
    and usernames begin with ``prefix``."""
    import django

    django.setup()
    from django.core.management import call_command

    from tests.factories import UserFactory, make_study

    call_command("migrate", verbosity=0)
    tag = secrets.token_hex(3)
    raters = [UserFactory(username=f"{prefix}-{tag}-{n:02d}") for n in range(args.raters)]
    study = make_study(
        lead=UserFactory(username=f"lead-{tag}"),
        slug=f"{prefix}-{tag}",
        cases=args.cases,
        raters=raters,
        consented=True,
    )
    return study, [user.username for user in raters]


def browser_headers(
    headers: dict, *, cookies: dict, base: str, method: str, path: str, secure: bool = True
) -> dict:
    """``headers`` with what a browser adds: its cookies and, on a POST, the Origin and
    Referer the CSRF check reads (``secure``: as the TLS proxy would forward it)."""
    if cookies:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    if method == "POST":
        origin = ("https://" if secure else "http://") + urlsplit(base).netloc
        headers["Origin"] = origin
        headers["Referer"] = origin + path
    return headers

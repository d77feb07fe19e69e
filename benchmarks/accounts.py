"""Where a rater's account costs time: `manage.py add_rater` against the API's `accounts/`.

Uses its own database, `concord_bench` by default (BENCH_DATABASE_URL), migrated here.
Run: .venv/bin/python benchmarks/accounts.py [ACCOUNTS] [--repeat 5]
Prints, each as the median and spread of --repeat runs (ACCOUNTS runs in process): a whole
`add_rater` call, the same with --skip-checks, Django's start-up alone (`manage.py help`), the
write in process (`rater_add`), one password hash with the production hasher, and a POST to
`accounts/` (a test client in process: the token's check, the write and the answer, without the
network)."""

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import positional, repeat_argument, reported, spread, timed  # noqa: E402

DEFAULT_URL = "postgres://postgres:postgres@127.0.0.1:5432/concord_bench"


def setup():
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL),
        }
    )
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from pipeline import _create_database

    _create_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def main(accounts: int, repeat: int) -> None:
    setup()
    import json

    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import PBKDF2PasswordHasher
    from django.test import Client

    from studies.models import Study
    from studies.services import rater_add, study_create, tokens

    suffix = str(int(time.time()))
    users = get_user_model().objects
    lead = users.create_user(username=f"bench-lead-{suffix}")
    admin = users.create_user(username=f"bench-admin-{suffix}", is_staff=True)
    study = study_create(slug=f"bench-accounts-{suffix}", name="Accounts", lead=lead)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)

    manage = [sys.executable, str(ROOT / "manage.py")]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.local"}
    counter = iter(range(10_000))

    def command(*extra):
        username = f"bench-cli-{suffix}-{next(counter)}"
        users.create_user(username=username)
        subprocess.run([*manage, "add_rater", *extra, study.slug, username], env=env,
                       check=True, capture_output=True)  # fmt: skip

    def start_up():
        subprocess.run([*manage, "help"], env=env, check=True, capture_output=True)

    def in_process():
        user = users.create_user(username=f"bench-direct-{suffix}-{next(counter)}")
        rater_add(study=study, user=user, actor=None)

    hasher = PBKDF2PasswordHasher()

    def password_hash():
        hasher.encode("a long passphrase", hasher.salt())

    client = Client()
    _, secret = tokens.api_token_create(user=admin, name="bench")

    def api_request():
        body = {"study": study.slug, "username": f"bench-api-{suffix}-{next(counter)}"}
        response = client.post(
            "/api/v1/accounts/", json.dumps(body), content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {secret}",
        )  # fmt: skip
        assert response.status_code == 201, response.content

    ms = {"unit": "ms", "scale": 1000, "digits": 1}
    print(f"add_rater, whole call:           {spread(timed(command, repeat))}")
    skipping = timed(lambda: command("--skip-checks"), repeat)
    print(f"add_rater --skip-checks:         {spread(skipping)}")
    print(f"manage.py help (start-up alone): {spread(timed(start_up, repeat))}")
    print(f"rater_add in process:            {spread(timed(in_process, accounts), **ms)}")
    print(f"one PBKDF2 password hash:        {spread(timed(password_hash, repeat), **ms)} "
          f"({hasher.iterations:,} rounds)")  # fmt: skip
    print(f"POST accounts/ (in process):     {spread(timed(api_request, accounts), **ms)}")


if __name__ == "__main__":
    given = positional(sys.argv[1:])
    repeat = repeat_argument(sys.argv)
    with reported("A rater's account: add_rater against the API's accounts/", runs=repeat):
        main(int(given[0]) if given else 20, repeat)

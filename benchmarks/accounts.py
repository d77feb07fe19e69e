"""Where a rater's account costs time: `manage.py add_rater` against the API's `accounts/`.

Uses its own database, `concord_bench` by default (BENCH_DATABASE_URL), migrated here.
Run: .venv/bin/python benchmarks/accounts.py [ACCOUNTS]
Prints, each as a median: a whole `add_rater` call, the same with --skip-checks, Django's
start-up alone (`manage.py help`), the write in process (`rater_add`), one password hash
with the production hasher, and a POST to `accounts/` (a test client in process: the
token's check, the write and the answer, without the network).
"""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def timed(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(accounts: int) -> None:
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

    cli_repeats = 3
    print(f"add_rater, whole call:           {timed(command, cli_repeats):6.2f} s")
    skipping = timed(lambda: command("--skip-checks"), cli_repeats)
    print(f"add_rater --skip-checks:         {skipping:6.2f} s")
    print(f"manage.py help (start-up alone): {timed(start_up, cli_repeats):6.2f} s")
    print(f"rater_add in process:            {1000 * timed(in_process, accounts):6.1f} ms")
    print(f"one PBKDF2 password hash:        {1000 * timed(password_hash, 3):6.1f} ms "
          f"({hasher.iterations:,} rounds)")  # fmt: skip
    print(f"POST accounts/ (in process):     {1000 * timed(api_request, accounts):6.1f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)

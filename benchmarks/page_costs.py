"""What each page of the demo costs, as each role opens it, relative to a trivial request.

    .venv/bin/python benchmarks/page_costs.py [--prepare] [--repeat 5] [--limit 5]

Runs in one process with Django's test client on the database the environment names (the
embedded SQLite default when DATABASE_URL is unset; ``--prepare`` loads the demo first, as
``make run`` does). For every demo study, every page a role may open (the coordinator's
set-up, running and results pages, the adjudicator's queue and screen, a rater's cases,
rating screen and self-check) is requested ``--repeat`` times after one warm-up request,
and its median wall time is printed beside the median of a trivial request and their
ratio. The trivial request is a signed-in page that reads no study (the password change
form: the session, the navigation and the base template, as every page has them);
``GET /healthz/live`` is printed too, for the cost of the bare stack. Pages above
``--limit`` times the trivial request are listed at the end. The load average before and
after says whether the figures were taken at rest.
"""

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import add_repeat, reported, spread, timed  # noqa: E402

COORDINATOR_PAGES = (
    "/s/{slug}/", "/s/{slug}/settings/", "/s/{slug}/test-cases/", "/s/{slug}/rubric/",
    "/s/{slug}/quality-items/", "/s/{slug}/adjudication-rules/", "/s/{slug}/onboarding/",
    "/s/{slug}/welfare/", "/s/{slug}/profile-questions/", "/s/{slug}/raters/",
    "/s/{slug}/participant-links/", "/s/{slug}/results/", "/s/{slug}/agreement/",
    "/s/{slug}/quality/", "/s/{slug}/report/", "/s/{slug}/comments/",
    "/s/{slug}/calibration-call/",
)  # fmt: skip
TRIVIAL = "/accounts/password/change/"
RATER_PAGES = ("/", "/s/{slug}/cases/", "/s/{slug}/self-check/", "/s/{slug}/feedback/")


def _pages(username: str) -> list[str]:
    """Every page of the demo this account may open (status 200), rater and adjudicator
    pages by their own cases."""
    from annotation.models import Adjudication, Assignment
    from studies.models import Membership, Study

    paths: list[str] = []
    for study in Study.objects.order_by("slug"):
        slug = study.slug
        membership = Membership.objects.filter(study=study, user__username=username).first()
        if membership is None:
            if study.lead.username == username:
                paths += [p.format(slug=slug) for p in COORDINATOR_PAGES]
            continue
        if membership.role == Membership.Role.ADJUDICATOR:
            paths.append(f"/s/{slug}/adjudication/")
            adjudication = Adjudication.objects.filter(test_case__study=study).first()
            if adjudication:
                paths.append(f"/s/{slug}/adjudication/{adjudication.uuid}/")
        elif membership.role == Membership.Role.RATER:
            paths += [p.format(slug=slug) for p in RATER_PAGES]
            first = Assignment.objects.filter(rater=membership).order_by("position").first()
            if first:
                paths.append(f"/rate/{first.uuid}/")
        else:
            paths += [p.format(slug=slug) for p in COORDINATOR_PAGES]
    return list(dict.fromkeys(paths))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_repeat(parser)
    parser.add_argument("--prepare", action="store_true", help="load the demo first")
    parser.add_argument("--limit", type=float, default=5.0, help="flag pages above this ratio")
    parser.add_argument(
        "--users", default="coordinator,adjudicator,rater1,rater2", help="the demo's accounts"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    if args.prepare:
        call_command("prepare_demo", verbosity=0)
    over: list[tuple[str, str, float]] = []
    with reported("Page costs of the demo, relative to a trivial request", runs=args.repeat):
        bare = Client()
        bare.get("/healthz/live")
        stack = timed(lambda: bare.get("/healthz/live"), max(args.repeat, 20))
        print(f"bare stack (GET /healthz/live): {spread(stack, unit='ms', scale=1000)}")
        signed_in = Client()
        signed_in.force_login(get_user_model().objects.filter(is_active=True).first())
        signed_in.get(TRIVIAL)
        trivial = timed(lambda: signed_in.get(TRIVIAL), max(args.repeat, 20))
        base = statistics.median(trivial)
        print(f"trivial request (GET {TRIVIAL}): {spread(trivial, unit='ms', scale=1000)}")
        for username in args.users.split(","):
            user = get_user_model().objects.filter(username=username).first()
            if user is None:
                print(f"\n{username}: no such account (run with --prepare)")
                continue
            client = Client()
            client.force_login(user)
            print(f"\n{username}")
            for path in _pages(username):
                first = client.get(path)
                if first.status_code != 200:
                    print(f"  {path}: status {first.status_code}, not timed")
                    continue
                runs = timed(lambda path=path, client=client: client.get(path), args.repeat)
                ratio = statistics.median(runs) / base
                print(f"  {path}: {spread(runs, unit='ms', scale=1000)}, {ratio:.1f}x trivial")
                if ratio > args.limit:
                    over.append((username, path, ratio))
        print()
        if over:
            print(f"Pages above {args.limit:g}x the trivial request:")
            for username, path, ratio in sorted(over, key=lambda row: -row[2]):
                print(f"  {ratio:.1f}x  {path} ({username})")
        else:
            print(f"No page above {args.limit:g}x the trivial request.")


if __name__ == "__main__":
    main()

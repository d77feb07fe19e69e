#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def reloader_parent(argv: list[str]) -> bool:
    """True in the process that ``manage.py runserver`` starts first, with its autoreloader
    on: that process only runs the server as a child process (started again after each code
    change), and the child sets Django up, checks and serves."""
    from django.utils.autoreload import DJANGO_AUTORELOAD_ENV

    return (
        argv[1:2] == ["runserver"]
        and "--noreload" not in argv
        and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true"
    )


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    if reloader_parent(sys.argv):
        # Django's own reloader loop, without setting Django up first in this process too:
        # that cost a quarter of `make run`'s warm start (benchmarks/warm_start.py) and about
        # 60 MB for a process that only waits for its child. The child reports what the
        # parent would have (a bad address, a missing setting) and its exit status is this
        # process's.
        from django.utils import autoreload

        autoreload.run_with_reloader(lambda: None)
        return
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()

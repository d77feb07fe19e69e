# Concord: `make run` for a local demo, `make test` for the whole suite.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DATABASE_URL ?= postgres://postgres:postgres@127.0.0.1:5432/concord
export REDIS_URL ?= redis://127.0.0.1:6379/0

# Test processes for `make test` (at most 4, each has its own Redis database): three on two
# cores, as much of the suite waits on a browser, a worker or a subprocess (about 15% faster
# than one per core, measured on CI's 2-core machine).
TEST_WORKERS ?= 3

.PHONY: run reset-demo test lint format lock worker beat clean

# The installer: uv, at the version the dev lock pins, installs the locks in seconds where
# pip takes over a minute (CI sets up a fresh virtualenv on every run).
UV_VERSION := $(shell sed -n 's/^uv==//p' requirements/dev.txt)
UV_INSTALL := $(VENV)/bin/uv pip install --quiet --python $(PY)

$(PY):
	$(PYTHON) -m venv $(VENV)

# Its own target, so a virtualenv made before make used uv gets it too.
$(VENV)/bin/uv: | $(PY)
	$(PY) -m pip install --quiet uv==$(UV_VERSION)

# Dependencies from the lock files (requirements/, made by `make lock` from pyproject.toml),
# then the app itself without resolving anything again.
$(VENV)/.installed-run: requirements/runtime.txt | $(VENV)/bin/uv
	$(UV_INSTALL) --no-deps -r requirements/runtime.txt
	$(UV_INSTALL) --no-deps -e .
	touch $@

# The Python client (clients/python) too, editable: tests/client drive a live server with it.
# Its own dependencies (requests, pandas) are in the dev lock already. The test oracles whose
# own pins clash with the project's (requirements/oracles.txt) go in apart, without theirs.
$(VENV)/.installed-dev: requirements/dev.txt requirements/oracles.txt clients/python/pyproject.toml | $(VENV)/bin/uv
	$(UV_INSTALL) --no-deps -r requirements/dev.txt
	$(UV_INSTALL) --no-deps -r requirements/oracles.txt
	$(UV_INSTALL) --no-deps -e .
	$(UV_INSTALL) --no-deps -e ./clients/python
	touch $@ $(VENV)/.installed-run

# After a change to the dependencies in pyproject.toml: the runtime lock, then the dev lock
# constrained to it, so both install the same version of every shared package.
UV_COMPILE := $(VENV)/bin/uv pip compile pyproject.toml --universal --python-version 3.11 --quiet --custom-compile-command "make lock"
lock: | $(VENV)/.installed-dev
	$(UV_COMPILE) -o requirements/runtime.txt
	$(UV_COMPILE) --extra dev -c requirements/runtime.txt -o requirements/dev.txt

# Every group pyproject.toml declares resolves as declared, with no override, so that
# `pip install -e ".[dev]"` works in a fresh virtualenv (asks the registry; about a second
# with uv's cache). An oracle that cannot live with the project's pins belongs in
# requirements/oracles.txt.
DECLARED_RESOLVE := $(VENV)/bin/uv pip compile pyproject.toml --universal --python-version 3.11 --quiet --all-extras -o /dev/null

# The embedded default: SQLite and in-process tasks, no other service needed. prepare_demo
# migrates and loads both demo studies in one process (Django starts once, not three times).
run: $(VENV)/.installed-run
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py prepare_demo
	@echo "Concord is at http://127.0.0.1:$(PORT)/ (Ctrl-C stops it)"
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py runserver 127.0.0.1:$(PORT)

# Back to the demo as first loaded: a fresh local database, the venv kept.
reset-demo: $(VENV)/.installed-run
	rm -f db.sqlite3 db.sqlite3-wal db.sqlite3-shm
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py prepare_demo
	@echo "The demo is reset. make run serves it."

# The whole suite against the real services: PostgreSQL, Redis, a Celery worker, Chromium.
# In parallel (pytest-xdist): each process its own test database and Redis database; tests
# that must not overlap share an xdist_group. `-m "not slow"` leaves out the heavy ones.
test: $(VENV)/.installed-dev
	$(PY) scripts/check_services.py
	$(PY) -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist loadgroup

# The structural rules of STYLE.md (rules/README.md): ast-grep over the apps' code, Django's
# own template lexer over the templates; each about a second.
lint: $(VENV)/.installed-dev
	$(PY) scripts/check_lock.py
	$(DECLARED_RESOLVE)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ast-grep scan studies annotation agreement core jobs config
	$(PY) scripts/check_templates.py
	$(VENV)/bin/mypy

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

worker: $(VENV)/.installed-run
	$(VENV)/bin/celery -A config worker --loglevel=INFO

beat: $(VENV)/.installed-run
	$(VENV)/bin/celery -A config beat --loglevel=INFO

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles artifacts .mypy_cache

# Concord: `make run` for a local demo, `make test` for the whole suite.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DATABASE_URL ?= postgres://postgres:postgres@127.0.0.1:5432/concord
export REDIS_URL ?= redis://127.0.0.1:6379/0

.PHONY: run reset-demo test lint format worker beat clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.installed-run

# The embedded default: SQLite and in-process tasks, no other service needed.
run: $(VENV)/.installed-run
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py migrate --no-input
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py load_demo
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py load_judge_demo
	@echo "Concord is at http://127.0.0.1:$(PORT)/ (Ctrl-C stops it)"
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py runserver 127.0.0.1:$(PORT)

# Back to the demo as first loaded: a fresh local database, the venv kept.
reset-demo: $(VENV)/.installed-run
	rm -f db.sqlite3 db.sqlite3-wal db.sqlite3-shm
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py migrate --no-input
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py load_demo
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(PY) manage.py load_judge_demo
	@echo "The demo is reset. make run serves it."

# The whole suite against the real services: PostgreSQL, Redis, a Celery worker, Chromium.
test: $(VENV)/.installed-dev
	$(PY) scripts/check_services.py
	$(PY) -m pytest

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

worker: $(VENV)/.installed-run
	$(VENV)/bin/celery -A config worker --loglevel=INFO

beat: $(VENV)/.installed-run
	$(VENV)/bin/celery -A config beat --loglevel=INFO

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles artifacts

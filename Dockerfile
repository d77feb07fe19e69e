# Two stages: the dependencies are installed once into a virtualenv (a layer of its own that
# only a change to the runtime lock rebuilds); the final image takes that virtualenv and the
# code, copied last, and runs as an unprivileged user. The app itself is not pip-installed:
# it runs from /app, so the image holds its code once.
FROM python:3.11-slim AS dependencies

ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /venv
COPY requirements/runtime.txt /tmp/runtime.txt
RUN /venv/bin/pip install --no-deps -r /tmp/runtime.txt


FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PATH=/venv/bin:$PATH PYTHONPATH=/app \
    DJANGO_SETTINGS_MODULE=config.settings.production
RUN useradd --create-home --uid 10001 concord \
    && mkdir -p /data/case-uploads /data/job-files \
    && chown concord /data/case-uploads /data/job-files
COPY --from=dependencies /venv /venv

WORKDIR /app
# Owned by root, so the running app cannot change its own code.
COPY . .
# The code's bytecode compiled once, here: at run time the app cannot write it (root owns
# /app, and PYTHONDONTWRITEBYTECODE), so each start would compile every module again, slower
# and about 1 MB more per process (benchmarks/memory.py).
RUN python -m compileall -q /app
# collectstatic needs settings that import; the real values come from the environment at run time.
RUN SECRET_KEY=collectstatic-only-placeholder-not-a-secret-0123456789abcdef ALLOWED_HOSTS=localhost \
    python manage.py collectstatic --no-input

USER concord
EXPOSE 8000
# Liveness: does gunicorn answer? (/healthz/ready, for a load balancer, also needs the
# database.) docker-compose.yml gives the worker and beat checks of their own.
HEALTHCHECK --interval=30s --timeout=15s --start-period=20s --retries=3 \
    CMD ["python", "scripts/healthcheck.py"]
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"]

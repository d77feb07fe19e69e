FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=config.settings.production
WORKDIR /app

COPY pyproject.toml ./
COPY config ./config
COPY studies ./studies
COPY annotation ./annotation
COPY agreement ./agreement
RUN pip install --no-cache-dir .
COPY . .
# collectstatic needs settings that import; the real values come from the environment at run time.
RUN SECRET_KEY=collectstatic-only-placeholder-not-a-secret-0123456789abcdef ALLOWED_HOSTS=localhost \
    python manage.py collectstatic --no-input

RUN useradd --create-home concord && chown -R concord /app \
    && mkdir -p /data/case-uploads && chown concord /data/case-uploads
USER concord
EXPOSE 8000
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"]

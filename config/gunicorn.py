"""gunicorn's settings for the production image (`gunicorn -c config/gunicorn.py ...`)."""

import os

# Inside the container; docker-compose.yml publishes the port on the host's loopback only,
# for the reverse proxy.
bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "3"))
# A request still running after this is killed (the client gets 502 from the proxy). Every
# upload is bounded well below it; raise it only together with the proxy's read timeout.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
accesslog = "-"

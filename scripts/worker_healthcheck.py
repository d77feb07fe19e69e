"""The Celery worker's health check: exit 1 when the workers are stalled.

"Stalled" is what ``/healthz/ready`` reports (config/worker_health.py): work is queued in
the broker and no worker began a task for longer than the sweep interval. A worker that
lost its broker and stopped consuming, or whose processes all hang, shows so. A broker that
is down is not the worker's fault: Redis's own health check reports it, and the worker
waits for it.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
    import django

    django.setup()
    from config.worker_health import queue_states, workers_summed

    broker, queues = queue_states()
    worker = workers_summed(broker, queues)
    each = "".join(f", queue {queue} {state}" for queue, state in queues.items())
    print(f"broker {broker}, worker {worker}{each}")
    return 1 if worker == "stalled" else 0


if __name__ == "__main__":
    sys.exit(main())

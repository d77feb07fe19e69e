"""A Celery worker outlives its broker: Redis killed while the worker holds an unacknowledged
task, then started again on the same port; the same worker process consumes the next task.

Redis, the worker and the tasks are the test's own (a free port, ``tests.config.broker_tasks``):
nothing here touches the suite's Redis or database."""

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from celery import Celery

from config.worker_health import CONSUMED_KEY
from tests.processes import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

QUEUE = "concord-broker-restart"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(predicate, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


class OwnRedis:
    """A Redis server on ``port`` that the test starts and kills (no persistence)."""

    def __init__(self, port: int):
        self.port = port
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(  # the machine's redis-server, on loopback only
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for(self._answers, timeout=20, what=f"Redis on port {self.port}")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=20)
            self.process = None


@pytest.fixture
def own_redis():
    if subprocess.run(["which", "redis-server"], capture_output=True, check=False).returncode:
        pytest.fail("redis-server is not installed (the CI script starts Redis from it)")
    server = OwnRedis(free_port())
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def worker(own_redis, tmp_path):
    """The production pool (prefork, two processes) on the test's Redis."""
    url = f"redis://127.0.0.1:{own_redis.port}/0"
    env = {key: value for key, value in os.environ.items() if not key.startswith("CELERY_")} | {
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "REDIS_URL": url,
    }
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "prefork", "-c", "2",
         "-Q", QUEUE, "--include", "tests.config.broker_tasks", "--without-gossip",
         "--without-mingle", "--without-heartbeat", "--loglevel=INFO",
         "-n", f"{uuid.uuid4().hex[:8]}@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    process.url = url
    process.log = tmp_path / "worker.log"
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        print(process.log.read_text()[-6000:])


def send(url: str, name: str, *args) -> None:
    """Publish one task to the test's queue, through a connection of its own."""
    sender = Celery("broker-restart-test", broker=url)
    sender.conf.update(task_serializer="json", broker_connection_retry_on_startup=False)
    try:
        sender.send_task(name, args=list(args), queue=QUEUE)
    finally:
        sender.close()


def test_the_worker_consumes_again_after_redis_died_under_an_unacknowledged_task(
    own_redis, worker, tmp_path
):
    held, after = tmp_path / "held", tmp_path / "after"
    # Acknowledged only once it has run (acks_late): unacknowledged while Redis dies.
    send(worker.url, "tests.broker.hold", str(held), 5)
    wait_for(held.exists, timeout=45, what="the worker began the held task")

    own_redis.kill()
    time.sleep(1)  # the worker notices the lost connection while Redis is down
    own_redis.start()

    send(worker.url, "tests.broker.mark", str(after))
    wait_for(
        lambda: after.exists() or worker.poll() is not None,
        timeout=45,
        what="the next task consumed",
    )
    assert worker.poll() is None, "the worker exited:\n" + Path(worker.log).read_text()[-4000:]
    assert after.exists()
    # The worker's heartbeat (for /healthz) is in the broker it came back to.
    assert redis.Redis.from_url(worker.url).exists(CONSUMED_KEY)

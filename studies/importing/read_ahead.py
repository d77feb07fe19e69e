"""Reading a file in a thread of its own while the caller writes what it read.

A large import spends about half its time reading and checking the file (Python) and half
waiting for the database to store the rows. Reading in a second thread while the caller
waits for the database overlaps the two: the thread holds the interpreter only while the
caller is blocked on a socket. The thread reads at most ``depth`` chunks of ``chunk``
items ahead of the caller, so memory stays bounded whatever the file's size. It must touch
no database connection (Django's are per thread): it reads a file and checks it, nothing
else. Nothing here imports Django.
"""

import queue
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

CHUNK = 250
DEPTH = 8
# How often a blocked reader looks whether the caller has given up.
_POLL_SECONDS = 0.5


class _Stopped(Exception):
    """Raised inside the reader when the caller has stopped taking items."""


_END = object()


def read_ahead(
    produce: Callable[[Callable[[T], None]], R],
    consume: Callable[[T], None],
    *,
    chunk: int | None = None,
    depth: int | None = None,
) -> R:
    """Run ``produce(sink)`` in a thread and hand each item it sinks to ``consume`` here,
    in order; returns what ``produce`` returned. ``chunk`` and ``depth``: ``CHUNK`` and
    ``DEPTH`` unless given.

    An error in ``produce`` is raised here; an error in ``consume`` stops the reader at its
    next chunk, and is raised once the reader has ended.
    """
    chunk = chunk or CHUNK
    chunks: queue.Queue = queue.Queue(maxsize=depth or DEPTH)
    stop = threading.Event()
    outcome: dict = {}

    def put(item) -> None:
        while True:
            if stop.is_set():
                raise _Stopped
            try:
                chunks.put(item, timeout=_POLL_SECONDS)
                return
            except queue.Full:
                continue

    def reader() -> None:
        pending: list = []

        def sink(item: T) -> None:
            pending.append(item)
            if len(pending) >= chunk:
                put(pending[:])
                pending.clear()

        try:
            outcome["result"] = produce(sink)
            if pending:
                put(pending)
        except _Stopped:
            return
        except BaseException as error:  # raised again in the caller's thread
            outcome["error"] = error
        try:
            put(_END)
        except _Stopped:
            return

    thread = threading.Thread(target=reader, name="read-ahead", daemon=True)
    thread.start()
    try:
        while (items := chunks.get()) is not _END:
            for item in items:
                consume(item)
    finally:
        stop.set()
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]

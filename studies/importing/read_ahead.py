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
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

CHUNK = 250
DEPTH = 8
# How often a blocked reader looks whether the caller has given up.
_POLL_SECONDS = 0.5


class _Stopped(Exception):
    """Raised inside the reader when the caller has stopped taking items."""


_END = object()


class _Reader(threading.Thread):
    """Runs ``produce`` and queues what it sinks, ``chunk`` items at a time."""

    def __init__(self, produce: Callable, chunk: int, depth: int):
        super().__init__(name="read-ahead", daemon=True)
        self.produce, self.chunk = produce, chunk
        self.chunks: queue.Queue = queue.Queue(maxsize=depth)
        self.stop = threading.Event()
        self.pending: list = []
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.produce(self.sink)
            if self.pending:
                self.put(self.pending)
        except _Stopped:
            return
        except BaseException as error:  # raised again in the caller's thread
            self.error = error
        try:
            self.put(_END)
        except _Stopped:
            return

    def sink(self, item) -> None:
        self.pending.append(item)
        if len(self.pending) >= self.chunk:
            self.put(self.pending)
            self.pending = []

    def put(self, item) -> None:
        while not self.stop.is_set():
            try:
                self.chunks.put(item, timeout=_POLL_SECONDS)
                return
            except queue.Full:
                continue
        raise _Stopped


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
    reader = _Reader(produce, chunk or CHUNK, depth or DEPTH)
    reader.start()
    try:
        while (items := reader.chunks.get()) is not _END:
            for item in items:
                consume(item)
    finally:
        reader.stop.set()
        reader.join()
    if reader.error is not None:
        raise reader.error
    return reader.result

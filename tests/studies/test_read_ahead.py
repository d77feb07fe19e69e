"""Reading in a thread of its own while the caller consumes: order, bounds and errors."""

import threading

import pytest

from studies.importing.read_ahead import read_ahead


def counting(total: int, seen: list | None = None):
    def produce(sink):
        for number in range(total):
            if seen is not None:
                seen.append(number)
            sink(number)
        return f"read {total}"

    return produce


@pytest.mark.parametrize("total", [0, 1, 9, 10, 11, 1000])
def test_every_item_is_consumed_once_in_order_and_the_result_returned(total):
    consumed = []
    result = read_ahead(counting(total), consumed.append, chunk=10, depth=2)
    assert consumed == list(range(total))
    assert result == f"read {total}"


def test_the_reader_runs_in_another_thread():
    threads = set()

    def produce(sink):
        threads.add(threading.get_ident())
        sink(1)

    read_ahead(produce, lambda item: None)
    assert threads and threading.get_ident() not in threads


def test_the_reader_stays_at_most_depth_chunks_ahead():
    read, ahead = [], []

    def consume(item):
        ahead.append(len(read) - item)

    read_ahead(counting(500, read), consume, chunk=10, depth=3)
    # In the queue (3 chunks), in the caller's hands (1) and in the reader's (1), at most.
    assert max(ahead) <= 5 * 10


def test_an_error_in_the_reader_is_raised_in_the_caller():
    def produce(sink):
        sink(1)
        raise ValueError("unreadable")

    with pytest.raises(ValueError, match="unreadable"):
        read_ahead(produce, lambda item: None, chunk=1)


def test_an_error_in_the_caller_stops_the_reader():
    read = []

    def consume(item):
        if item == 25:
            raise RuntimeError("the database refused")

    with pytest.raises(RuntimeError, match="refused"):
        read_ahead(counting(100_000, read), consume, chunk=10, depth=2)
    assert len(read) < 1000  # it stopped, rather than reading the whole file

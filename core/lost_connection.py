"""Again on a new database connection, for a write that is its own key.

PostgreSQL may end a connection at any moment (a restart, a failover, an administrator's
``pg_terminate_backend``, PgBouncer losing its server). When that happens around a commit,
the request cannot know whether its transaction was stored. A write that recognises itself
when sent twice (a rating submit carries the version its form was opened at) is then sent
again on a new connection: it stores what was not stored, or finds it stored, and the
answer says which is true instead of a 500 that may be false.
"""

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import InterfaceError, OperationalError, connection

logger = logging.getLogger(__name__)

T = TypeVar("T")

# What a lost connection raises (an error of the SQL itself raises something else).
LOST = (OperationalError, InterfaceError)
# The waits before each new try: a pooler or a database back from a restart answers within
# a second or two, and a web worker is not held much longer than that.
WAITS = (0.0, 0.5, 1.0)


def again_on_lost_connection(call: Callable[[], T], *, what: str) -> T:
    """``call()``; if the connection was lost meanwhile, ``call()`` again on a new one, a
    few times over about two seconds (``WAITS``), then the last error. Only outside a
    transaction (a transaction's work is lost with its connection) and only for a call
    that is safe to make twice."""
    waits = iter(WAITS)
    while True:
        try:
            return call()
        except LOST:
            wait = next(waits, None)
            if wait is None or connection.in_atomic_block:
                raise
            logger.warning("The database connection was lost during %s; trying again", what)
            time.sleep(wait)
            connection.close()

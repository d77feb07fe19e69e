"""Once more on a new database connection, for a write that is its own key.

PostgreSQL may end a connection at any moment (a restart, a failover, an administrator's
``pg_terminate_backend``, PgBouncer losing its server). When that happens around a commit,
the request cannot know whether its transaction was stored. A write that recognises itself
when sent twice (a rating submit carries the version its form was opened at) is then sent
once more on a new connection: it stores what was not stored, or finds it stored, and the
answer says which is true instead of a 500 that may be false.
"""

import logging
from collections.abc import Callable
from typing import TypeVar

from django.db import InterfaceError, OperationalError, connection

logger = logging.getLogger(__name__)

T = TypeVar("T")

# What a lost connection raises (an error of the SQL itself raises something else).
LOST = (OperationalError, InterfaceError)


def once_more_on_lost_connection(call: Callable[[], T], *, what: str) -> T:
    """``call()``; if the connection was lost meanwhile, ``call()`` once more on a new one.
    Only outside a transaction (a transaction's work is lost with its connection) and only
    for a call that is safe to make twice."""
    try:
        return call()
    except LOST:
        if connection.in_atomic_block:
            raise
        logger.warning("The database connection was lost during %s; trying once more", what)
        connection.close()
        return call()

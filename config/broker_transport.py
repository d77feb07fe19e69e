"""The Redis broker transport, with a channel that closes completely when Redis is gone.

kombu 5.7.0's Redis channel, closed while Redis is unreachable and a delivered message is
still unacknowledged (a task running under ``acks_late``), stops at its first step: reading
the pending BRPOP raises the connection error. The channel stays open; Celery's consumer
then detaches the transport (``collect``) and closes the connection again, and this second
``close()`` tries to requeue the message through the detached transport and raises
``AttributeError``, which Celery treats as unrecoverable: the worker exits and nobody
consumes until it is restarted (tests/config/test_broker_restart.py). Here the lost
connection ends only that first step; the channel then closes as usual. A message it cannot
requeue stays in Redis's unacked set, and Redis hands it out again after
``visibility_timeout`` (if Redis kept it at all).
"""

from kombu.transport import redis


class Channel(redis.Channel):
    def close(self):
        if self._in_poll:
            try:
                self._brpop_read()
            except (redis.Empty, *self.connection_errors):
                # The connection is gone, and with it the reply: nothing was delivered.
                pass
        super().close()


class Transport(redis.Transport):
    Channel = Channel

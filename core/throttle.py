"""Sign-in throttling: too many failed sign-ins from one address, or on one account from one
address, get 429.

A small cache-based limiter rather than django-axes: it covers the sign-in page, the admin's
sign-in and the invitation page's sign-in and sign-up forms with one rule, needs no tables,
backend or migration, and stays out of the way when its cache (Redis in production) is down,
since being able to sign in matters more than the throttle. Only failed attempts count (a
refused form, a dead invitation link), so many raters signing in from one school's address
are not held up; an account is throttled from one address after a few failures there, an
address after many, whatever the accounts. Counts live in fixed windows of
``THROTTLE_WINDOW_SECONDS``.

The account's count is per (account, address), not per account: counted per account alone,
anyone who knows a username could lock its owner out by failing on purpose. The price is that
guesses spread over many addresses are each allowed a few per account; docs/admin.md says why
that trade is taken (the per-address rule, the password validators and the window bound it).
"""

import hashlib
import logging
import math
import time
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.shortcuts import render

logger = logging.getLogger(__name__)


def cache_down_errors() -> tuple[type[Exception], ...]:
    """What the cache raises when it is down (here and for the API's throttles). An
    ``except`` clause evaluates this only when an exception is raised: the Redis client is
    imported then, not with the URL configuration, as `make run`'s in-memory cache never
    raises it."""
    from redis.exceptions import RedisError

    return (RedisError, OSError)


def client_address(request) -> str:
    """The client's address: behind ``THROTTLE_PROXY_COUNT`` proxies, the entry the nearest
    one appended to X-Forwarded-For (earlier entries are whatever the client sent)."""
    proxies = settings.THROTTLE_PROXY_COUNT
    forwarded = [part.strip() for part in request.headers.get("X-Forwarded-For", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if proxies and len(forwarded) >= proxies:
        return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR", "")


def _keys(request, username_fields) -> dict[str, tuple[str, int]]:
    """The cache key of each counter this attempt touches, with that counter's limit."""
    window = int(time.time() // settings.THROTTLE_WINDOW_SECONDS)

    def key(kind: str, value: str) -> str:
        digest = hashlib.sha256(value.encode()).hexdigest()[:32]
        return f"throttle:{kind}:{digest}:{window}"

    address = client_address(request)
    keys = {key("address", address): settings.THROTTLE_FAILURES_PER_ADDRESS}
    for field in username_fields:
        username = request.POST.get(field, "").strip().casefold()
        if username:
            # Per (account, address): failures elsewhere never lock the owner out.
            keys[key("account", f"{username}\n{address}")] = settings.THROTTLE_FAILURES_PER_ACCOUNT
    return keys


def _over_limit(keys) -> bool:
    counts = cache.get_many(list(keys))
    return any(counts.get(key, 0) >= limit for key, limit in keys.items())


def _count_failure(keys) -> None:
    for key in keys:
        # add() then incr(): atomic in Redis, so concurrent failures all count.
        cache.add(key, 0, timeout=settings.THROTTLE_WINDOW_SECONDS)
        try:
            cache.incr(key)
        except ValueError:  # expired between the two calls
            cache.add(key, 1, timeout=settings.THROTTLE_WINDOW_SECONDS)


def _refuse(request):
    window = settings.THROTTLE_WINDOW_SECONDS
    wait = math.ceil((window - time.time() % window) / 60)
    response = render(request, "registration/throttled.html", {"minutes": wait}, status=429)
    response["Retry-After"] = str(wait * 60)
    return response


def sign_in_throttled(*, username_fields: list[str]):
    """Decorate a view whose POST signs in or signs up: a redirect is a success, anything
    else a failure; past a limit, a POST is refused with 429 before the view sees it."""

    def decorator(view):
        @wraps(view)
        def throttled(request, *args, **kwargs):
            if request.method != "POST":
                return view(request, *args, **kwargs)
            keys = _keys(request, username_fields)
            try:
                if _over_limit(keys):
                    return _refuse(request)
            except cache_down_errors():
                logger.warning("Sign-in throttle unavailable: its cache is down", exc_info=True)
                return view(request, *args, **kwargs)
            response = view(request, *args, **kwargs)
            if not 300 <= response.status_code < 400:
                try:
                    _count_failure(keys)
                except cache_down_errors():
                    logger.warning("Sign-in throttle unavailable: its cache is down", exc_info=True)
            return response

        return throttled

    return decorator

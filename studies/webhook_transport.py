"""Sending one webhook request: which URLs may be called, and the POST itself.

A webhook makes the server call a URL a study lead typed, so the call is kept narrow: http
or https only; the host's addresses are resolved once and every one must be public (no
private, loopback, link-local, shared or reserved address, unless
``WEBHOOK_ALLOW_PRIVATE_ADDRESSES`` is set, as the tests do for their local receiver); the
connection goes to the address that was checked, so a second DNS answer cannot move it
inside; short timeouts; a redirect is an answer, never followed; at most
``MAX_RESPONSE_BYTES`` of the answer are read.
"""

import http.client
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

MAX_URL_LENGTH = 2000
# Enough for an error page's first lines; the rest of an answer is never read.
MAX_RESPONSE_BYTES = 64 * 1024
MAX_ERROR_LENGTH = 500


class AddressRefused(Exception):
    """The URL may not be called; ``str(error)`` says why."""


@dataclass(frozen=True)
class Outcome:
    """How one attempt ended: the answer's status code (None when there was none), the
    error (empty when the receiver took it), and how long it took."""

    status_code: int | None
    error: str
    ms: int

    @property
    def delivered(self) -> bool:
        return not self.error and self.status_code is not None and 200 <= self.status_code < 300


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a webhook's, without resolving its host; None when it can."""
    if not isinstance(url, str) or not url.strip():
        return "Give the URL to send the events to."
    if len(url) > MAX_URL_LENGTH:
        return f"The URL is longer than {MAX_URL_LENGTH} characters."
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "The URL cannot be read."
    if parts.scheme not in ("http", "https"):
        return "Use an http:// or https:// URL."
    if not parts.hostname:
        return "The URL has no host."
    if parts.username is not None or parts.password is not None:
        return "Put no user name or password in the URL; check the signature instead."
    if port == 0:
        return "The URL's port cannot be 0."
    if any(ch.isspace() for ch in url):
        return "The URL contains spaces."
    # A name's trailing dot (the DNS root) names the same host: "127.0.0.1." and
    # "localhost." are read as without it.
    host = parts.hostname.rstrip(".")
    literal = _literal_address(host)
    if literal is not None and not _allowed(literal):
        return f"{literal} is not a public address; webhooks are sent to public addresses only."
    local = host in ("localhost", "localhost.localdomain") or host.endswith(".localhost")
    if local and not _private_allowed():
        return "localhost is not a public address; webhooks are sent to public addresses only."
    return None


def _literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` names when it is written as one, in any form a resolver reads
    as an address (``2130706433``, ``0x7f.1`` and ``127.1`` are each 127.0.0.1); None for a
    name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def _private_allowed() -> bool:
    return bool(getattr(settings, "WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False))


def _allowed(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if _private_allowed():
        return True
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return address.is_global and not address.is_multicast


def public_address(host: str, port: int) -> str:
    """The address to connect to: the first of the host's, once all have been checked."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise AddressRefused(f"The host {host} cannot be resolved ({error}).") from error
    addresses = [str(info[4][0]) for info in infos]
    for text in addresses:
        if not _allowed(ipaddress.ip_address(text.split("%")[0])):
            raise AddressRefused(f"{host} resolves to {text}, which is not a public address.")
    if not addresses:
        raise AddressRefused(f"The host {host} has no address.")
    return addresses[0]


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host, port, *, address, timeout):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self):
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host, port, *, address, timeout):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self):
        # The certificate is checked against the URL's host name, at the checked address.
        sock = socket.create_connection((self._address, self.port), self.timeout)
        context = self._context  # type: ignore[attr-defined]
        self.sock = context.wrap_socket(sock, server_hostname=self.host)


def post(url: str, *, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST ``body`` to ``url``; every failure is an ``Outcome`` with its error, never raised."""
    started = time.monotonic()

    def outcome(status_code: int | None, error: str) -> Outcome:
        elapsed = int((time.monotonic() - started) * 1000)
        return Outcome(status_code=status_code, error=error[:MAX_ERROR_LENGTH], ms=elapsed)

    problem = url_problem(url)
    if problem:
        return outcome(None, problem)
    parts = urlsplit(url)
    host = parts.hostname or ""  # never empty: url_problem refuses a URL without a host
    port = parts.port or (443 if parts.scheme == "https" else 80)
    timeout = settings.WEBHOOK_TIMEOUT_SECONDS
    try:
        address = public_address(host, port)
    except AddressRefused as refused:
        return outcome(None, str(refused))
    connection_class = _PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP
    connection = connection_class(host, port, address=address, timeout=timeout)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    try:
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read(MAX_RESPONSE_BYTES)
    except (OSError, http.client.HTTPException) as error:
        return outcome(
            None, f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        )
    finally:
        connection.close()
    status_code = response.status
    if 200 <= status_code < 300:
        return outcome(status_code, "")
    if 300 <= status_code < 400:
        where = response.getheader("Location", "")[:200]
        return outcome(status_code, f"Redirected to {where or 'another address'}; not followed.")
    text = answer.decode("utf-8", errors="replace").strip()
    return outcome(status_code, f"HTTP {status_code}" + (f": {text}" if text else ""))

"""Sending one webhook request: which URLs may be called, and the POST itself.

A webhook makes the server call a URL a study lead typed, so the call is kept narrow: http
or https only; the host's addresses are resolved once and every one must be public (no
private, loopback, link-local, shared, reserved or site-local address, nor an IPv6 address
that carries an IPv4 one that is not public: NAT64, 6to4, Teredo, mapped, translated or
compatible; unless ``WEBHOOK_ALLOW_PRIVATE_ADDRESSES`` is set, as the tests do for their
local receiver), at registration when the URL names an address and at each send; the
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


# IPv6 forms that carry an IPv4 address, and where: a packet to one reaches (or is answered
# for) that IPv4 address through a translator or tunnel, so it is judged by what it carries.
# Python's ``ipaddress`` calls most of these global whatever they carry.
_LAST_32 = [
    ipaddress.IPv6Network("::ffff:0:0/96"),  # IPv4-mapped
    ipaddress.IPv6Network("::ffff:0:0:0/96"),  # IPv4-translated (RFC 2765)
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible, deprecated (and :: and ::1)
    ipaddress.IPv6Network("64:ff9b::/96"),  # NAT64, the well-known prefix (RFC 6052)
]
# NAT64 for local use (RFC 8215): its operator picks the prefix's length, so the IPv4
# address may be at any position RFC 6052 allows for a prefix of /48 or longer.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
_LOCAL_NAT64_LENGTHS = (48, 56, 64, 96)
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def _rfc6052(address: ipaddress.IPv6Address, length: int) -> ipaddress.IPv4Address:
    """The IPv4 address RFC 6052 puts after a prefix of ``length`` bits (bits 64-71 are
    skipped, except for /96)."""
    packed = address.packed
    if length == 96:
        return ipaddress.IPv4Address(packed[12:])
    without_u = packed[:8] + packed[9:]
    return ipaddress.IPv4Address(without_u[length // 8 : length // 8 + 4])


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses an IPv6 address carries (every reading of it), or None when it is
    no form that carries one."""
    if any(address in network for network in _LAST_32):
        return [_rfc6052(address, 96)]
    if address in _LOCAL_NAT64:
        return [_rfc6052(address, length) for length in _LOCAL_NAT64_LENGTHS]
    if address in _SIX_TO_FOUR:
        return [address.sixtofour] if address.sixtofour else []
    if address in _TEREDO:
        return list(address.teredo) if address.teredo else []
    return None


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_global and not address.is_multicast


def _allowed(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a webhook may be sent to ``address``: a public one, and for an IPv6 address
    that carries an IPv4 address (mapped, translated, compatible, NAT64, 6to4, Teredo), that
    every IPv4 address it carries is public; never site-local (fec0::/10, deprecated, which
    ``ipaddress`` calls global)."""
    if _private_allowed():
        return True
    if isinstance(address, ipaddress.IPv6Address):
        if address.is_site_local:
            return False
        carried = embedded_ipv4(address)
        if carried is not None:
            return bool(carried) and all(_public(ipv4) for ipv4 in carried)
    return _public(address)


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

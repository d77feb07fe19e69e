"""Webhook addresses that reach IPv4 through IPv6: an IPv6 address carrying an IPv4 address
(NAT64, 6to4, Teredo, mapped, translated, compatible) is refused unless what it carries is
public, and site-local addresses always; at registration (the URL names the address) and at
each send (the host resolves to it). Checked over generated addresses: each IPv6 address is
built here from the IPv4 address by the standard's arithmetic, not by the code under test."""

import ipaddress
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studies import webhook_transport
from studies.webhook_transport import AddressRefused, public_address, url_problem

# Where a webhook must not reach, and a few public places; drawn from often.
SPECIAL = [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "8.8.8.0/24", "1.1.1.0/24", "93.184.216.0/24",
]  # fmt: skip


@st.composite
def ipv4s(draw) -> ipaddress.IPv4Address:
    if draw(st.booleans()):
        return ipaddress.IPv4Address(draw(st.integers(0, 2**32 - 1)))
    network = ipaddress.IPv4Network(draw(st.sampled_from(SPECIAL)))
    return network[draw(st.integers(0, network.num_addresses - 1))]


LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def public(ipv4: ipaddress.IPv4Address) -> bool:
    return ipv4.is_global and not ipv4.is_multicast


def v6(value: int) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(value)


def embed_rfc6052(prefix: int, length: int, ipv4: ipaddress.IPv4Address, rest: int):
    """RFC 6052, section 2.2: the prefix, the IPv4 address in its 32 bits around the
    reserved bits 64-71 (zero), then the suffix (``rest``, only after the address)."""
    bits = f"{prefix >> (128 - length):0{length}b}" + f"{int(ipv4):032b}"
    if length < 96:
        bits = bits[:64] + "00000000" + bits[64:]
    bits = bits[:128]
    suffix_bits = 128 - len(bits)
    value = int(bits, 2) << suffix_bits | (rest & ((1 << suffix_bits) - 1) if suffix_bits else 0)
    return v6(value)


@st.composite
def carried(draw):
    """(an IPv6 address carrying IPv4 addresses, the IPv4 addresses it reaches)."""
    ipv4 = draw(ipv4s())
    form = draw(
        st.sampled_from(
            ["mapped", "translated", "compatible", "nat64", "local-nat64", "6to4", "teredo"]
        )
    )
    rest = draw(st.integers(0, 2**80 - 1))
    if form == "mapped":  # ::ffff:a.b.c.d
        return v6(0xFFFF << 32 | int(ipv4)), [ipv4]
    if form == "translated":  # ::ffff:0:a.b.c.d
        return v6(0xFFFF << 48 | int(ipv4)), [ipv4]
    if form == "compatible":  # ::a.b.c.d
        return v6(int(ipv4)), [ipv4]
    if form == "nat64":  # 64:ff9b::a.b.c.d
        return v6(0x64FF9B << 96 | int(ipv4)), [ipv4]
    if form == "local-nat64":  # 64:ff9b:1::/48, the operator's prefix of some length
        length = draw(st.sampled_from([48, 56, 64, 96]))
        chosen = draw(st.integers(0, 2 ** (length - 48) - 1)) << (128 - length)
        return embed_rfc6052(0x64FF9B0001 << 80 | chosen, length, ipv4, rest), [ipv4]
    if form == "6to4":  # 2002:aabb:ccdd::/48
        return v6(0x2002 << 112 | int(ipv4) << 80 | rest), [ipv4]
    # Teredo (RFC 4380): 2001:0:server:flags:port:client, port and client inverted.
    client = draw(ipv4s())
    flags_port = rest & 0xFFFFFFFF
    teredo = 0x20010000 << 96 | int(ipv4) << 64 | flags_port << 32 | (int(client) ^ 0xFFFFFFFF)
    return v6(teredo), [ipv4, client]


def refused_at_registration(address) -> bool:
    return url_problem(f"http://[{address}]/hook") is not None


def refused_at_send(address) -> bool:
    answer = [(10, 1, 6, "", (str(address), 80, 0, 0))]
    with mock.patch.object(webhook_transport.socket, "getaddrinfo", return_value=answer):
        try:
            public_address("hooks.example.org", 80)
        except AddressRefused:
            return True
    return False


@settings(max_examples=600, deadline=None)
@given(carried())
def test_an_ipv6_address_carrying_ipv4_is_sent_to_only_when_all_it_carries_is_public(case):
    address, reached = case
    allowed = all(public(ipv4) for ipv4 in reached)
    if address in LOCAL_NAT64:
        # Its operator's prefix length is not known here, so every reading of it must be
        # public: never sent to when what it carries is not; sometimes refused when it is.
        if not allowed:
            assert refused_at_registration(address) and refused_at_send(address), address
        return
    assert refused_at_registration(address) is not allowed, (address, reached)
    assert refused_at_send(address) is not allowed, (address, reached)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**118 - 1))
def test_site_local_is_always_refused(rest):
    address = v6(0xFEC0 << 112 | rest)  # fec0::/10
    assert refused_at_registration(address) and refused_at_send(address)


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a9fe:a9fe",  # the cloud metadata address through NAT64 (issue 41)
        "64:ff9b::169.254.169.254",
        "64:ff9b:1::a9fe:a9fe",
        "64:ff9b:1:a9fe:a9:fe00::",  # local-use NAT64 at /48
        "::169.254.169.254",
        "::ffff:169.254.169.254",
        "::ffff:0:169.254.169.254",
        "::ffff:0:7f00:1",
        "2002:a9fe:a9fe::1",
        "2002:7f00:1::",
        "2001:0:4136:e378:8000:63bf:5601:5601",  # Teredo, its client 169.254.169.254
        "fec0::1",
        "::",
    ],
)
def test_the_issues_addresses_are_refused(address):
    assert refused_at_registration(address) and refused_at_send(address)


@pytest.mark.parametrize(
    "address", ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "2606:4700::1111"]
)
def test_public_ones_are_sent_to(address):
    assert not refused_at_registration(address) and not refused_at_send(address)

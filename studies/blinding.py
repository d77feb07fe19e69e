"""Reproducible assignment of systems to the blinded labels "Response A", "Response B", ...

The procedure depends only on the seed, the study's blinding secret, the test case id and
the system names, never on Python's ``random`` module, hash randomisation or the platform,
so the same study gives the same key on any machine and any Python version. The seed is
public (raters are told it); the secret is not, until unblinding, so that nobody can work
the key out from the seed and this procedure:

1. Sort the system names (Unicode code point order).
2. Build a byte stream: SHA-256 of ``"{seed}:{secret}:{case_id}:{counter}"`` (UTF-8) for
   counter = 0, 1, 2, ...; each digest gives eight unsigned 32-bit big-endian integers.
3. Shuffle the sorted names with the Fisher-Yates algorithm: for i from n-1 down to 1,
   draw j uniformly from 0..i using rejection sampling on the 32-bit integers (reject a
   draw >= the largest multiple of i+1 below 2**32, so every j is equally likely), then
   swap positions i and j.
4. The shuffled order, read from the front, is shown as A, B, C, ...

The same shuffle, keyed by ``"order:{pseudonym}"`` in place of ``"{secret}:{case_id}"``,
gives each rater's item order.
"""

import hashlib
import secrets
import string
from collections.abc import Iterator, Sequence

LABELS = string.ascii_uppercase


def _uint32_stream(seed: int, key: str) -> Iterator[int]:
    counter = 0
    while True:
        digest = hashlib.sha256(f"{seed}:{key}:{counter}".encode()).digest()
        for offset in range(0, len(digest), 4):
            yield int.from_bytes(digest[offset : offset + 4], "big")
        counter += 1


def _uniform_below(stream: Iterator[int], bound: int) -> int:
    limit = (2**32 // bound) * bound
    for value in stream:
        if value < limit:
            return value % bound
    raise AssertionError("unreachable: the stream is infinite")


def seeded_permutation(*, seed: int, key: str, items: Sequence[str]) -> list[str]:
    """Shuffle ``items`` (sorted first) reproducibly from ``seed`` and ``key``."""
    if len(set(items)) != len(items):
        raise ValueError("Items to shuffle must be unique.")
    order = sorted(items)
    stream = _uint32_stream(seed, key)
    for i in range(len(order) - 1, 0, -1):
        j = _uniform_below(stream, i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def blinded_order(*, seed: int, secret: str, case_id: str, systems: Sequence[str]) -> list[str]:
    """Return the system names in the order they are shown (A first)."""
    if len(systems) > len(LABELS):
        raise ValueError(f"At most {len(LABELS)} systems can be blinded.")
    return seeded_permutation(seed=seed, key=f"{secret}:{case_id}", items=systems)


def judge_prompt_first(*, seed: int, secret: str, case_id: str, systems: Sequence[str]) -> str:
    """The system whose response a case's judge prompt shows first in order "AB".

    A keyed draw of its own from the seed, the secret, the case id and the case's system
    names (sorted), never from the key (``BlindedLabel``): the prompts are read beside texts
    the coordinator knows by system, so two studies that differ only in their keys must
    export the same prompts. A verdict reaches a key label as prompt position -> system ->
    label, which the server does only where the key may be used.
    """
    if len(systems) != 2:
        raise ValueError("A judge prompt compares exactly two responses.")
    return seeded_permutation(seed=seed, key=f"judge:{secret}:{case_id}", items=systems)[0]


def new_secret() -> str:
    return secrets.token_hex(16)


def blinding_key(
    *, seed: int, secret: str, case_ids: Sequence[str], systems: Sequence[str]
) -> dict:
    """Map each case id to {label: system name}."""
    return {
        case_id: dict(
            zip(
                LABELS,
                blinded_order(seed=seed, secret=secret, case_id=case_id, systems=systems),
                strict=False,
            )
        )
        for case_id in case_ids
    }

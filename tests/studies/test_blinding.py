import hashlib
from collections import Counter

import pytest

from studies.blinding import (
    blinded_order,
    blinding_key,
    judge_prompt_first,
    seeded_permutation,
)

CASES = [f"TC-{n:03d}" for n in range(1, 19)]
SYSTEMS = ["baseline", "improved"]
SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"


def key(seed=42, secret=SECRET, cases=CASES, systems=SYSTEMS):
    return blinding_key(seed=seed, secret=secret, case_ids=cases, systems=systems)


def test_same_seed_secret_and_cases_give_the_same_key():
    assert key() == key()


def test_key_does_not_depend_on_the_order_systems_are_listed():
    assert key() == key(systems=list(reversed(SYSTEMS)))


def test_different_seed_gives_a_different_key():
    assert key(seed=42) != key(seed=43)


def test_the_public_seed_alone_does_not_give_the_key():
    # Raters are told the seed; without the secret, the key cannot be recomputed.
    assert key(secret=SECRET) != key(secret="another-secret")


def _first_label_from_the_written_procedure(seed: int, secret: str, case_id: str) -> str:
    """Re-derive a two-system case by hand from the procedure in docs/blinding.md."""
    digest = hashlib.sha256(f"{seed}:{secret}:{case_id}:0".encode()).digest()
    j = int.from_bytes(digest[:4], "big") % 2  # 2**32 is a multiple of 2: never rejected
    order = sorted(SYSTEMS)
    order[1], order[j] = order[j], order[1]
    return order[0]


def test_key_follows_the_documented_procedure():
    computed = key()
    assert [computed[c]["A"] for c in CASES] == [
        _first_label_from_the_written_procedure(42, SECRET, c) for c in CASES
    ]


def test_both_orders_occur_about_equally_often():
    computed = key(cases=[f"C{n}" for n in range(2000)])
    counts = Counter(entry["A"] for entry in computed.values())
    assert 900 < counts["baseline"] < 1100


def test_three_systems_get_every_order():
    orders = Counter(
        tuple(blinded_order(seed=7, secret=SECRET, case_id=f"C{n}", systems=["x", "y", "z"]))
        for n in range(1200)
    )
    assert len(orders) == 6
    assert min(orders.values()) > 120


def test_permutation_keeps_every_item_once():
    items = [f"TC-{n:03d}" for n in range(50)]
    shuffled = seeded_permutation(seed=1, key="order:R-01", items=items)
    assert sorted(shuffled) == items
    assert shuffled != items


def test_duplicate_system_names_are_refused():
    with pytest.raises(ValueError, match="unique"):
        blinded_order(seed=42, secret=SECRET, case_id="TC-001", systems=["a", "a"])


def test_judge_prompt_order_is_a_balanced_draw_from_the_systems_not_the_key():
    """The judge prompts' order names a system, drawn from the case and its systems: about
    half the cases show each system first, the draw changes with the secret, it does not
    follow the key, and it ignores the order the systems are given in."""
    ids = [f"TC-{n:04d}" for n in range(1000)]

    def firsts(secret, systems=("x", "y")):
        return [judge_prompt_first(seed=42, secret=secret, case_id=i, systems=systems) for i in ids]

    draws = firsts("s")
    assert 430 < draws.count("x") < 570
    assert firsts("t") != draws
    assert firsts("s", systems=("y", "x")) == draws
    key_first = [blinded_order(seed=42, secret="s", case_id=i, systems=["x", "y"])[0] for i in ids]
    agree = sum(a == b for a, b in zip(draws, key_first, strict=True))
    assert 430 < agree < 570
    with pytest.raises(ValueError, match="two"):
        judge_prompt_first(seed=42, secret="s", case_id="TC-1", systems=["x", "y", "z"])

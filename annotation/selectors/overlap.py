"""How many test cases raters share: the fewest and the most of any pair, counted in numpy."""

from collections.abc import Sequence

from annotation.models import Assignment
from studies.models import Membership


def rater_pair_overlap_range(*, raters: Sequence[Membership]) -> tuple[int, int] | None:
    """The fewest and the most test cases any two of ``raters`` share; None for fewer than two.

    Their assignments are read once as id pairs and counted in numpy (``pair_overlap_range``):
    at 10,000 cases and 100 raters, tens of milliseconds where intersecting every pair's
    sets of case ids took a few hundred.
    """
    import numpy as np

    if len(raters) < 2:
        return None
    ids = np.array(sorted(r.pk for r in raters), dtype=np.int64)
    rows = Assignment.objects.filter(rater_id__in=ids.tolist()).values_list(
        "rater_id", "test_case_id"
    )
    pairs = np.array(list(rows.iterator(chunk_size=10_000)), dtype=np.int64).reshape(-1, 2)
    return pair_overlap_range(np.searchsorted(ids, pairs[:, 0]), pairs[:, 1], len(ids))


# Above this many multiply-adds (raters x raters x cases) the shared cases are counted from
# each case's pairs of raters instead of a dense product, unless the pairs are the more work.
DENSE_PRODUCT_LIMIT = 2_000_000_000
# What one pair of raters on a case costs to count, in the dense product's multiply-adds
# (a pair is gathered and binned, a multiply-add is one of BLAS's; about 150 on one machine,
# taken low): every rater on every case has as many pairs as the product has cells.
DENSE_PER_PAIR = 50
# The product's arrays hold at most this many counts (4 bytes each): raters x a block of
# cases, and a block of raters x raters.
DENSE_CELLS = 4_000_000
# Pairs of raters counted at once, to bound memory (a few arrays of 8 bytes each).
PAIRS_PER_BLOCK = 2_000_000


def pair_overlap_range(
    raters,
    cases,
    n_raters: int,
    *,
    dense_limit: int = DENSE_PRODUCT_LIMIT,
    dense_per_pair: int = DENSE_PER_PAIR,
    dense_cells: int = DENSE_CELLS,
) -> tuple[int, int]:
    """The fewest and the most cases any two of ``n_raters`` (at least two) share, from one
    (rater index, case id) row per assignment (a rater has a case once). numpy only, so the
    raters page loads no scipy (about 70 MB in each web process that would).

    A dense product of the raters x cases incidence, over blocks of cases, where raters x
    raters x cases is small (a few raters) or no more work than counting the pairs (many
    raters on every case: 1,000 raters on 2,010 cases, 9 s by pairs where the product takes
    0.1 s), in blocks of raters and of cases of at most ``dense_cells`` counts; else each
    case's pairs of raters are counted (a balanced or crowd design: few raters per case,
    many raters), keeping only the pairs that share a case. Neither holds raters squared."""
    import numpy as np

    raters, cases = np.asarray(raters, dtype=np.int64), np.asarray(cases, dtype=np.int64)
    if not len(raters):
        return 0, 0
    _, column = np.unique(cases, return_inverse=True)
    n_cases = int(column.max()) + 1
    product = n_raters * n_raters * n_cases
    per_case = np.bincount(column)
    n_pairs = int((per_case * (per_case - 1) // 2).sum())
    if product <= dense_limit or product <= dense_per_pair * n_pairs:
        return _product_range(raters, column, n_raters, n_cases, dense_cells)
    # Each case's raters, ascending, then every pair within a case, grouped by how many
    # raters the case has so each group is one array.
    order = np.lexsort((raters, column))
    raters, column = raters[order], column[order]
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
    sizes = np.diff(np.r_[starts, len(column)])
    keys_found = np.empty(0, dtype=np.int64)
    counts_found = np.empty(0, dtype=np.int64)
    pending: list = []  # blocks' (keys, counts), merged once they outweigh what is found
    for size in np.unique(sizes):
        if size < 2:
            continue
        members = raters[starts[sizes == size][:, None] + np.arange(size)]
        first, second = np.triu_indices(size, k=1)
        per_block = max(1, PAIRS_PER_BLOCK // len(first))
        for at in range(0, len(members), per_block):
            group = members[at : at + per_block]
            pending.append(
                np.unique(
                    (group[:, first] * n_raters + group[:, second]).ravel(), return_counts=True
                )
            )
            if sum(len(keys) for keys, _ in pending) > max(PAIRS_PER_BLOCK, len(keys_found)):
                keys_found, counts_found = _pairs_merged(keys_found, counts_found, pending)
                pending = []
    keys_found, counts_found = _pairs_merged(keys_found, counts_found, pending)
    if not len(counts_found):
        return 0, 0
    every_pair_shares = len(keys_found) == n_raters * (n_raters - 1) // 2
    return (int(counts_found.min()) if every_pair_shares else 0), int(counts_found.max())


def _product_range(raters, column, n_raters: int, n_cases: int, cells_at_most: int):
    """``pair_overlap_range`` by the incidence's product, a block of raters (rows) against
    all of them at a time, each over blocks of cases; float32 counts are exact up to 2**24."""
    import numpy as np

    rows = max(1, min(n_raters, cells_at_most // n_raters))
    width = max(1, cells_at_most // n_raters)
    low, high = float("inf"), 0.0
    for top in range(0, n_raters, rows):
        bottom = min(n_raters, top + rows)
        shared = np.zeros((bottom - top, n_raters), dtype=np.float32)
        for start in range(0, n_cases, width):
            inside = (column >= start) & (column < start + width)
            cells = np.zeros((n_raters, min(width, n_cases - start)), dtype=np.float32)
            cells[raters[inside], column[inside] - start] = 1.0
            shared += cells[top:bottom] @ cells.T
        # The pairs (i, j) with j > i: each pair once, no rater with themself.
        upper = shared[np.arange(n_raters)[None, :] > np.arange(top, bottom)[:, None]]
        if upper.size:
            low, high = min(low, float(upper.min())), max(high, float(upper.max()))
    return int(low), int(high)


def _pairs_merged(keys, counts, pending):
    """``keys`` and their ``counts`` with the ``pending`` blocks' added, keys ascending."""
    import numpy as np

    if not pending:
        return keys, counts
    merged, where = np.unique(np.concatenate([keys, *(k for k, _ in pending)]), return_inverse=True)
    weights = np.concatenate([counts, *(c for _, c in pending)])
    return merged, np.bincount(where, weights=weights).astype(np.int64)

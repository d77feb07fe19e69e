"""A study's point result brought up to date from its alpha tallies (no Django here).

Between two from-scratch runs, a run after a rating takes the last stored result and
replaces, for every tallied dimension, the figures the tallies give exactly (``FRESH``)
and the success criterion; every other figure (kappas, Gwet, ICC, per rater, strata, QC,
intervals, comparison) stays as the from-scratch run left it, and ``incremental`` says
which run that was. docs/statistics.md lists both kinds.
"""

from agreement.stats.coincidence import Tally

from .agreement import _number

FRESH = ("alpha", "n_units", "n_pairable", "n_judgments", "percent_agreement")


def tallied_point(
    previous: dict,
    *,
    totals: dict,
    success_alpha: float,
    success_min_dimensions: int,
    full_request: int,
    full_at: str | None,
) -> dict:
    """``previous`` (a stored point result) with the tallied dimensions' ``FRESH`` figures
    from ``totals`` ({dimension key: ``Tally.to_json()``})."""
    result = {key: value for key, value in previous.items() if key != "intervals_pending"}
    before = set((previous.get("success") or {}).get("passing") or [])
    dimensions, passing = [], []
    for row in previous.get("dimensions") or []:
        row = dict(row)
        if row["key"] in totals:
            tally = Tally.from_json(totals[row["key"]])
            alpha = tally.alpha(row["level"])
            agreement = tally.percent_agreement()
            row.update(
                alpha=None if alpha is None else _number(float(alpha)),
                n_units=tally.n_units,
                n_pairable=tally.n_pairable,
                n_judgments=tally.n_judgments,
                percent_agreement=None if agreement is None else _number(float(agreement)),
            )
            # The unrounded alpha decides, as in ``analyse_study_point``.
            if alpha is not None and float(alpha) >= success_alpha:
                passing.append(row["key"])
        elif row["key"] in before:
            passing.append(row["key"])
        dimensions.append(row)
    result["dimensions"] = dimensions
    result["success"] = {
        "alpha": success_alpha,
        "min_dimensions": success_min_dimensions,
        "passing": passing,
        "passed": len(passing) >= success_min_dimensions,
    }
    result["incremental"] = {
        "full_request": full_request,
        "full_at": full_at,
        "fresh": list(FRESH),
        "tallied": sorted(totals),
    }
    return result

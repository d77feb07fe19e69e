"""Every figure of the report and of the agreement page, computed again from the study's
exports alone (the long table, and the key for which system wrote each response) with
pandas, scipy, statsmodels and the ``krippendorff`` package: the test-only oracle of the
property test that the report equals its own export (issue 39). Nothing here imports the
app: only the study's design (its rubric, its analysis plan, its cases) comes from the
test that made it.

The semantics are the intended ones (issue 39, docs/statistics.md):

- an unanswered answer is null, never 0: it is no valid rating of its dimension;
- a rating's Total is the sum of the points of its scored per-response dimensions, and
  is missing when any required one is unanswered (an optional one unanswered adds none);
- an item (a response, or a case for a preference) with fewer valid ratings than the
  plan's minimum has no label, and its whole case is excluded from that question, the
  Total included; the excluded cases are counted per question;
- ties, adjudicated and changed labels are counted in items; a pairwise verdict is one
  rating (a rubric of preferences only counts one rating per rater and case).
"""

import math
from dataclasses import dataclass, field
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

MEAN, MAJORITY, ADJUDICATED = "mean", "majority", "adjudicated"
TOTAL = "total"


@dataclass(frozen=True)
class Dimension:
    key: str
    kind: str  # scale, counted, checklist, categorical, pairwise
    level: str
    optional: bool
    values: tuple  # what an answer can be: points, option values or category codes
    rule: str = ""  # the plan's; "" for the default

    @property
    def scope(self) -> str:
        return "case" if self.kind == "pairwise" else "response"

    @property
    def scored(self) -> bool:
        return self.scope == "response" and self.kind != "categorical" and max(self.values) > 0

    @property
    def binary(self) -> bool:
        return self.scope == "response" and len(self.values) == 2

    @property
    def preference(self) -> bool:
        return self.kind == "pairwise"

    @property
    def labelled(self) -> bool:
        return self.scored or self.binary or self.preference

    @property
    def applied_rule(self) -> str:
        defaults = (
            (MEAN, MAJORITY, ADJUDICATED)
            if self.scored
            else (ADJUDICATED, MAJORITY, MEAN)
            if self.preference
            else (ADJUDICATED, MAJORITY)
        )
        return self.rule if self.rule in defaults else defaults[0]


@dataclass(frozen=True)
class Design:
    """What the test set up: the rubric, the plan, the cases (id -> stratum), the design."""

    dimensions: list[Dimension]
    cases: dict[str, str]
    min_ratings: int
    primary: str = ""
    k_min: int | None = None  # the adaptive design: agreement reads each case's first k_min
    # Ratings imported from elsewhere by system: the long table marks worksheets only.
    imported_elsewhere: bool = False

    @property
    def has_score(self) -> bool:
        return any(d.scored for d in self.dimensions)

    @property
    def preferences_only(self) -> bool:
        return all(d.scope == "case" for d in self.dimensions)


def read_csv(text: str) -> pd.DataFrame:
    """An export as text cells ("" for empty), as a person's script reads it."""
    import io

    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def _number(cell: str) -> float:
    return float(cell) if cell != "" else math.nan


@dataclass
class Ratings:
    """The long table read: per dimension, one value per (rater, case, label) rating (label
    "" for a case-level dimension), NaN where unanswered; the Total per rating."""

    design: Design
    key: pd.DataFrame  # TC-ID, Response, System
    rows: pd.DataFrame  # the counted rows (main phase, raters not excluded)
    all_rows: pd.DataFrame
    values: dict[str, pd.Series] = field(default_factory=dict)
    adjudicated: dict[str, pd.Series] = field(default_factory=dict)  # (case, label) -> value
    totals: pd.Series | None = None

    def systems(self) -> list[str]:
        return sorted(self.key["System"].unique())

    def system_of(self) -> dict[tuple[str, str], str]:
        return {(r["TC-ID"], r["Response"]): r["System"] for _, r in self.key.iterrows()}


def _answer(dimension: Dimension, row) -> float:
    """The number a row's answer stands for (NaN: unanswered): the points of a counted
    dimension or checklist (a worksheet gives only those), the chosen option's value, a
    category's position, a preference in key order (negative prefers label A)."""
    if dimension.kind in ("counted", "checklist"):
        return _number(row["points"])
    if row["value"] == "":
        return math.nan
    if dimension.kind == "categorical":
        return float(dimension.values.index(row["value"]))
    return float(row["value"])


def _cell(dimension: Dimension, text: str) -> float:
    """An adjudicated answer (a worksheet cell) as ``_answer`` reads a rating."""
    if text == "":
        return math.nan
    if dimension.kind == "categorical":
        return float(dimension.values.index(text))
    return float(text)


def _to_system_order(rows: pd.DataFrame) -> np.ndarray:
    """Per case-level row: -1 where key label A holds the later system by name (the pair
    in key order is the ``system`` column, "A-system vs B-system"), else 1."""
    pairs = rows["system"].str.split(" vs ", regex=False)
    return np.where(pairs.str[0] > pairs.str[1], -1.0, 1.0)


def ratings_read(long: pd.DataFrame, key: pd.DataFrame, design: Design) -> Ratings:
    counted = long[(long["rater_status"] != "excluded") & (long["phase"] == "main")]
    ratings = Ratings(design=design, key=key, rows=counted, all_rows=long)
    for dimension in design.dimensions:
        rows = counted[counted["dimension"] == dimension.key]
        values = np.array([_answer(dimension, row) for _, row in rows.iterrows()], dtype=float)
        adjudicated = np.array(
            [_cell(dimension, text) for text in rows["adjudicated_value"]], dtype=float
        )
        if dimension.preference:
            turn = _to_system_order(rows) if len(rows) else np.ones(0)
            values, adjudicated = values * turn, adjudicated * turn
        index = pd.MultiIndex.from_arrays(
            [rows["rater"], rows["test_case"], rows["response_label"]],
            names=["rater", "case", "label"],
        )
        ratings.values[dimension.key] = pd.Series(values, index=index)
        per_item = pd.Series(adjudicated, index=index).droplevel("rater")
        ratings.adjudicated[dimension.key] = per_item[~per_item.index.duplicated()]
    if design.has_score:
        ratings.totals = _totals(ratings)
    return ratings


# Whether an optional part left blank makes the Total missing too. The brief of the test
# (issue 39) said a Total is missing when a *required* part is: an optional blank adds
# nothing. The app's brief and the issue ("totals are missing when a part is missing,
# unless the rubric says how to total a partial rating") say any part, and the app does
# so (studies/rubric/totals.py, docs/statistics.md); the lead may choose otherwise here.
OPTIONAL_BLANK_MAKES_TOTAL_MISSING = True


def _totals(ratings: Ratings) -> pd.Series:
    """Each rating's Total: the sum of its scored parts, missing when a required part is
    missing (an optional part left blank adds nothing)."""
    parts = [d for d in ratings.design.dimensions if d.scored]
    table = pd.concat({d.key: ratings.values[d.key] for d in parts}, axis=1)
    required = [d.key for d in parts if not d.optional or OPTIONAL_BLANK_MAKES_TOTAL_MISSING]
    total = table.sum(axis=1, min_count=1).fillna(0.0)
    if required:
        total[table[required].isna().any(axis=1)] = math.nan
    return total


# --- one label per item ---------------------------------------------------------------------


@dataclass
class Labels:
    """A question's labels per item ((case, label), or case for a preference) and its
    counts."""

    labels: pd.Series
    rule: str
    excluded_cases: int
    tied_items: int
    adjudicated_items: int
    changed_items: int
    tied: pd.Series  # per item: a tie, in a case the question counts (McNemar's ties)


def _majority(values: list[float], *, sides: bool) -> tuple[float, bool]:
    """(label, tie): the value most raters gave (a tie when several share the most); for a
    preference the side more raters chose, sign(sum of signs), never a tie of votes."""
    if not values:
        return math.nan, False
    if sides:
        return float(np.sign(np.sum(np.sign(values)))), False
    counts = pd.Series(values).value_counts()
    top = counts[counts == counts.max()]
    return (float(top.index[0]), False) if len(top) == 1 else (math.nan, True)


def _item_label(values, adjudicated: float, *, rule: str, minimum: int, sides: bool) -> dict:
    values = [v for v in values if not math.isnan(v)]
    kept = len(values) >= max(minimum, 1)
    majority, tie = _majority(values, sides=sides)
    if rule == MEAN:
        label = float(np.mean(values)) if values else math.nan
        label, tie = (float(np.sign(label)) if sides else label), False
    else:
        label = majority
    if sides and not math.isnan(adjudicated):
        adjudicated = float(np.sign(adjudicated))
    given = kept and not math.isnan(adjudicated)
    changed = given and (tie or adjudicated != majority)
    used = given and rule == ADJUDICATED
    if used:
        label, tie = adjudicated, False
    return {
        "label": label if kept else math.nan,
        "kept": kept,
        "tie": tie and kept,
        "used": used,
        "changed": changed,
    }


def _items(ratings: Ratings, dimension: Dimension | None) -> list[tuple[str, str]]:
    """Every item of the sample: (case, label) from the key, or (case, "") per case."""
    if dimension is not None and dimension.scope == "case":
        return [(case, "") for case in ratings.design.cases]
    return [
        (case, label)
        for case, label in zip(ratings.key["TC-ID"], ratings.key["Response"], strict=True)
    ]


def question_labels(ratings: Ratings, dimension: Dimension | None, *, rule: str) -> Labels:
    """The labels of one question (``dimension`` None: the Total, always the mean)."""
    design = ratings.design
    values = ratings.totals if dimension is None else ratings.values[dimension.key]
    adjudicated = (
        pd.Series(dtype=float) if dimension is None else ratings.adjudicated[dimension.key]
    )
    sides = dimension is not None and dimension.preference
    by_item = {item: group.tolist() for item, group in values.groupby(level=["case", "label"])}
    rows = {}
    for item in _items(ratings, dimension):
        rows[item] = _item_label(
            by_item.get(item, []), float(adjudicated.get(item, math.nan)),
            rule=rule, minimum=design.min_ratings, sides=sides,
        )  # fmt: skip
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["case", "label"])
    excluded = ~table["kept"].groupby(level="case").all()
    in_excluded = table.index.get_level_values("case").isin(excluded[excluded].index)
    labels = table["label"].where(~in_excluded)
    counted = table[~in_excluded]
    ties = (labels == 0) if sides else counted["tie"]
    return Labels(
        labels=labels,
        rule=rule,
        excluded_cases=int(excluded.sum()),
        tied_items=int(ties.sum()),
        adjudicated_items=int(counted["used"].sum()),
        changed_items=int(counted["changed"].sum()),
        tied=table["tie"] & ~in_excluded,
    )


def _by_system(ratings: Ratings, labels: pd.Series) -> pd.DataFrame:
    """Case x system table of a per-response question's labels."""
    systems = ratings.system_of()
    frame = labels.rename("value").reset_index()
    frame["system"] = [
        systems[(c, lab)] for c, lab in zip(frame["case"], frame["label"], strict=True)
    ]
    table = frame.pivot(index="case", columns="system", values="value")
    return table.reindex(index=list(ratings.design.cases), columns=ratings.systems())


# --- the figures ----------------------------------------------------------------------------


def _p(value) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def _paired(first: pd.Series, second: pd.Series) -> dict:
    both = first.notna() & second.notna()
    a, b = first[both].to_numpy(float), second[both].to_numpy(float)
    d = b - a
    n = int(d.size)
    sd = float(np.std(d, ddof=1)) if n >= 2 else math.nan
    row = {
        "n": n,
        "mean_first": float(a.mean()) if n else None,
        "mean_second": float(b.mean()) if n else None,
        "difference": float(d.mean()) if n else None,
        "effect_size_dz": float(d.mean() / sd) if n >= 2 and sd > 0 else None,
        "wilcoxon_p": None,
        "t_p": None,
    }
    if n >= 2 and np.any(d != 0):
        row["wilcoxon_p"] = _p(stats.wilcoxon(b, a).pvalue)
    if n >= 2 and sd > 0:
        row["t_p"] = _p(stats.ttest_rel(b, a).pvalue)
    return row


def _pair_cases(ratings: Ratings) -> dict[str, tuple[str, str]]:
    """Each case's two systems in the systems' order (cases that compare two)."""
    pairs = {}
    for case, group in ratings.key.groupby("TC-ID"):
        systems = sorted(group.sort_values("Response")["System"].tolist()[:2])
        if len(systems) == 2 and systems[0] != systems[1]:
            pairs[case] = (systems[0], systems[1])
    return pairs


def oracle_figures(long: pd.DataFrame, key: pd.DataFrame, design: Design) -> dict:
    """Every figure, named as ``app_figures`` (in the test) names the report's."""
    ratings = ratings_read(long, key, design)
    figures: dict = {}
    systems = ratings.systems()
    pairs = list(combinations(systems, 2))
    questions = _comparison(ratings, figures, systems, pairs)
    _questions(figures, questions, primary=design.primary)
    _agreement(ratings, figures)
    _counts(ratings, figures)
    _export_checks(ratings, figures)
    return figures


def _labelled(ratings: Ratings, figures: dict) -> dict[str, Labels]:
    """Every question's labels (the Total's by the mean; a yes/no category's mean reads as
    its majority), and how each question's items were labelled."""
    design = ratings.design
    labelled = {}
    if design.has_score:
        labelled[TOTAL] = question_labels(ratings, None, rule=MEAN)
    for d in design.dimensions:
        if d.labelled:
            rule = d.applied_rule
            if not d.scored and not d.preference and rule == MEAN:
                rule = MAJORITY
            labelled[f"dimension:{d.key}"] = question_labels(ratings, d, rule=rule)
    for measure, how in labelled.items():
        figures[f"aggregation[{measure}].rule"] = how.rule
        figures[f"aggregation[{measure}].excluded_cases"] = how.excluded_cases
        figures[f"aggregation[{measure}].tied_items"] = how.tied_items
        figures[f"aggregation[{measure}].adjudicated_items"] = how.adjudicated_items
        figures[f"aggregation[{measure}].changed_items"] = how.changed_items
    figures["aggregation.min_ratings"] = design.min_ratings
    return labelled


def _comparison(ratings: Ratings, figures: dict, systems, pairs) -> list[tuple[str, float]]:
    """Per system and paired figures of the Total and each scored dimension, then the
    preferences and McNemar's tests; the questions they ask, in the report's order."""
    design = ratings.design
    labelled = _labelled(ratings, figures)
    measures = [(TOTAL, TOTAL)] if design.has_score else []
    measures += [(d.key, f"dimension:{d.key}") for d in design.dimensions if d.scored]
    strata = sorted(set(design.cases.values()))
    groups = [("overall", list(design.cases))]
    if len(strata) > 1:
        groups += [(s, [c for c, cs in design.cases.items() if cs == s]) for s in strata]
    questions: list[tuple[str, float | None]] = []
    for name, measure in measures:
        table = _by_system(ratings, labelled[measure].labels)
        for system in systems:
            column = table[system]
            figures[f"per_system[{name}][{system}].n"] = int(column.notna().sum())
            figures[f"per_system[{name}][{system}].mean"] = (
                float(column.mean()) if column.notna().any() else None
            )
        for first, second in pairs:
            for group, cases in groups:
                row = _paired(table.loc[cases, first], table.loc[cases, second])
                for field_name, value in row.items():
                    figures[f"paired[{measure}][{first}|{second}][{group}].{field_name}"] = value
            questions.append(
                (measure, figures[f"paired[{measure}][{first}|{second}][overall].wilcoxon_p"])
            )
    preference_questions = _preferences(ratings, figures, labelled, pairs)
    mcnemar_questions = _mcnemar(ratings, figures, labelled, systems, pairs)
    return preference_questions + questions + mcnemar_questions


def _preferences(ratings: Ratings, figures: dict, labelled: dict, pairs) -> list:
    questions = []
    pair_of = _pair_cases(ratings)
    for d in ratings.design.dimensions:
        if not d.preference:
            continue
        verdicts = labelled[f"dimension:{d.key}"].labels.droplevel("label")
        signs = np.sign(ratings.values[d.key])
        for first, second in pairs:
            cases = [
                c
                for c, p in pair_of.items()
                if p == (first, second) and not math.isnan(verdicts.get(c, math.nan))
            ]
            verdict = verdicts.loc[cases] if cases else pd.Series(dtype=float)
            wins, losses, ties = (
                int((verdict > 0).sum()),
                int((verdict < 0).sum()),
                int((verdict == 0).sum()),
            )
            name = f"preference[{d.key}][{first}|{second}]"
            figures[f"{name}.items"] = (wins, losses, ties)
            p = stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else None
            figures[f"{name}.items.p_value"] = p
            every = signs[signs.index.get_level_values("case").isin(cases)].dropna()
            figures[f"{name}.judgments"] = (
                int((every > 0).sum()),
                int((every < 0).sum()),
                int((every == 0).sum()),
            )
            questions.append((f"dimension:{d.key}", p))
    return questions


def _mcnemar(ratings: Ratings, figures: dict, labelled: dict, systems, pairs) -> list:
    questions = []
    for d in ratings.design.dimensions:
        if not d.binary:
            continue
        how = labelled[f"dimension:{d.key}"]
        if d.scored:  # its outcome is the majority (or the adjudicated answer), not a mean
            rule = MAJORITY if how.rule == MEAN else how.rule
            how = question_labels(ratings, d, rule=rule)
        table = _by_system(ratings, how.labels)
        outcome = (table == 1.0).astype(float).where(table.notna())
        tied = _by_system(ratings, how.tied.astype(float))
        for system in systems:
            column = outcome[system].dropna()
            name = f"mcnemar[{d.key}][{system}]"
            figures[f"{name}.positive"] = (int((column == 1).sum()), int(column.size))
            figures[f"{name}.ties"] = int(tied[system].sum())
        for first, second in pairs:
            both = outcome[first].notna() & outcome[second].notna()
            x, y = outcome.loc[both, first], outcome.loc[both, second]
            b, c = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
            p = mcnemar([[0, b], [c, 0]], exact=True).pvalue
            name = f"mcnemar[{d.key}][{first}|{second}]"
            figures[f"{name}.n"] = int(both.sum())
            figures[f"{name}.discordant"] = (b, c)
            figures[f"{name}.p"] = float(p)
            questions.append((f"dimension:{d.key}", float(p)))
    return questions


def _questions(figures: dict, questions: list, *, primary: str) -> None:
    """The primary question (the first one on the plan's measure) uncorrected, Holm's
    correction over the others (statsmodels), each named by its measure and its place
    among that measure's questions."""
    named = []
    seen: dict[str, int] = {}
    for measure, p in questions:
        named.append((f"question[{measure}#{seen.get(measure, 0)}]", measure, p))
        seen[measure] = seen.get(measure, 0) + 1
    chosen = next((i for i, (_, m, _) in enumerate(named) if primary and m == primary), None)
    rest = [q for i, q in enumerate(named) if i != chosen]
    if chosen is not None:
        name, _, p = named[chosen]
        figures[f"{name}.p"], figures[f"{name}.primary"], figures[f"{name}.p_holm"] = p, True, p
    present = [p for _, _, p in rest if p is not None]
    adjusted = iter(multipletests(present, method="holm")[1] if present else [])
    for name, _, p in rest:
        figures[f"{name}.p"], figures[f"{name}.primary"] = p, False
        figures[f"{name}.p_holm"] = float(next(adjusted)) if p is not None else None


# --- agreement ------------------------------------------------------------------------------


def _first_k(rows: pd.DataFrame, k: int) -> pd.DataFrame:
    """The adaptive design's fixed part: the ratings of each case's first k raters, in the
    order they submitted (an extra rater comes only once the case's raters are all in)."""
    stamped = rows.assign(submitted_at=pd.to_datetime(rows["submitted_at"], format="ISO8601"))
    order = stamped.groupby(["test_case", "rater"])["submitted_at"].min().reset_index()
    order = order.sort_values(["test_case", "submitted_at"])
    first = order.groupby("test_case").head(k)
    keep = pd.MultiIndex.from_frame(first[["test_case", "rater"]])
    return rows[pd.MultiIndex.from_frame(rows[["test_case", "rater"]]).isin(keep)]


def _agreement(ratings: Ratings, figures: dict) -> None:
    design = ratings.design
    rows = ratings.rows
    if design.k_min is not None:
        rows = _first_k(rows, design.k_min)
    kept = pd.MultiIndex.from_frame(rows[["rater", "test_case", "response_label"]])
    for d in design.dimensions:
        values = ratings.values[d.key]
        values = values[values.index.isin(kept)].dropna()
        matrix = values.unstack(level="rater").T if len(values) else pd.DataFrame()
        counts = matrix.notna().sum(axis=0) if len(values) else pd.Series(dtype=int)
        pairable = matrix.loc[:, counts >= 2] if len(values) else matrix
        name = f"agreement[{d.key}]"
        figures[f"{name}.n_judgments"] = int(values.size)
        figures[f"{name}.n_units"] = int((counts >= 2).sum())
        figures[f"{name}.n_pairable"] = int(pairable.notna().sum().sum()) if len(values) else 0
        data = pairable.to_numpy(float) if len(values) else np.zeros((0, 0))
        distinct = np.unique(data[~np.isnan(data)]) if data.size else []
        figures[f"{name}.alpha"] = (
            float(krippendorff.alpha(reliability_data=data, level_of_measurement=d.level))
            if len(distinct) >= 2
            else None
        )


def _rating_count(rows: pd.DataFrame, design: Design) -> int:
    """Ratings: one per rater and response rated, or per rater and case (a verdict) in a
    rubric of preferences only."""
    columns = (
        ["rater", "test_case"]
        if design.preferences_only
        else ["rater", "test_case", "response_label"]
    )
    if not design.preferences_only:
        rows = rows[rows["scope"] == "response"]
    return int(len(rows[columns].drop_duplicates()))


def _counts(ratings: Ratings, figures: dict) -> None:
    design = ratings.design
    rows = ratings.rows
    counted = _first_k(rows, design.k_min) if design.k_min is not None else rows
    figures["agreement.ratings"] = _rating_count(counted, design)
    every = ratings.all_rows[ratings.all_rows["phase"] == "main"]
    figures["left_out.excluded_rater_ratings"] = _rating_count(
        every[every["rater_status"] == "excluded"], design
    )
    if design.k_min is not None:
        figures["left_out.beyond_k_min_ratings"] = (
            _rating_count(rows, design) - figures["agreement.ratings"]
        )
    if design.imported_elsewhere:
        figures["imported_ratings"] = _rating_count(every, design)
    cases = ratings.all_rows.drop_duplicates("test_case")
    status = cases["adjudication"].value_counts()
    figures["adjudication"] = {
        "total": int(status.sum() - status.get("", 0)),
        "waiting": int(status.get("waiting", 0)),
        "done": int(status.get("done", 0)),
        "unresolvable": int(status.get("unresolvable", 0)),
    }


def _export_checks(ratings: Ratings, figures: dict) -> None:
    """The long table against itself: an unanswered answer carries no points, and each
    response's total is the Total of its parts (empty where it is missing)."""
    rows = ratings.all_rows
    design = ratings.design
    blank = 0
    for d in design.dimensions:
        if d.kind in ("counted", "checklist"):
            continue
        mine = rows[rows["dimension"] == d.key]
        blank += int(((mine["value"] == "") & (mine["points"] != "")).sum())
    figures["long.unanswered_with_points"] = blank
    if design.has_score and ratings.totals is not None:
        responses = ratings.rows[ratings.rows["scope"] == "response"].drop_duplicates(
            ["rater", "test_case", "response_label"]
        )
        exported = pd.Series(
            [_number(t) for t in responses["response_total"]],
            index=pd.MultiIndex.from_frame(responses[["rater", "test_case", "response_label"]]),
        )
        ours = ratings.totals.reindex(exported.index)
        same = (exported == ours) | (exported.isna() & ours.isna())
        figures["long.response_total_not_its_parts"] = int((~same).sum())

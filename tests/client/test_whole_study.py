"""A whole study driven with the Python client alone against a live server, as a research
team's pipeline would (issue 26): create, rubric, cases, an administrator makes raters'
accounts, one more rater joins by an invitation link, each accepts and consents with their
own client, assign, open, (ratings), close, agreement, the analysis plan's primary
question, unblind, judges (a template with ties, prompts, outputs of a judge that ties,
calibration), the ranking, the report and its bundle; and a second study whose ratings
come in by system name through the ratings import.

The one step the client cannot take is the raters' own rating: ratings are made only on
the rating screen, so here they go through the rating service (``rating_submit``) as the
screen's submit does, from answers the test sets per system (the rater reads the texts).

Every statistic is checked against an independent oracle computed here from the data the
test put in or the client exported: the krippendorff package, scikit-learn's Cohen's kappa,
scipy's tests. Never against a number the server produced."""

import io
import json
import zipfile

import krippendorff
import numpy as np
import pandas as pd
import pytest
from concord_client import JobFailed, PermissionDenied
from django.contrib.auth import get_user_model
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.multitest import multipletests

from annotation.models import Assignment
from annotation.services import rating_submit
from studies.models import Study
from tests.factories import UserFactory, make_cases

Z, Q = "Zephyr-Alpha-7", "Quokka-Omega-3"  # names no text can hold by accident
CASES = 8
# Each rater's preference per case in system terms: +1 prefers Z, -1 prefers Q, 0 a tie.
HUMANS = [
    [1, 1, 1, -1, 0, 1, 1, 0],
    [1, 1, -1, -1, 0, 1, 0, 1],
    [1, 0, 1, 1, -1, 1, 1, 0],
]
# The judge's preference per case, the same in both orders: ties on cases 5 and 7.
JUDGE = [1, 1, -1, -1, 0, 1, 0, 1]
TIE_TEMPLATE = (
    "Question: {question}\n\nFirst response:\n{step_a}\n\nSecond response:\n{step_b}\n\n"
    'Answer "[[A]]" if the first is better, "[[B]]" if the second is, "[[C]]" for a tie.'
)


# Each rater's clarity (1-5) of each system's response per case: Z mostly clearer, with
# per-case mean differences all distinct in size (no ties for the signed-rank test).
CLARITY = {
    Z: [[5, 4, 4, 3, 3, 5, 4, 4], [4, 4, 3, 3, 3, 5, 4, 5], [5, 3, 4, 2, 3, 4, 4, 4]],
    Q: [[3, 3, 4, 4, 3, 2, 3, 2], [2, 3, 5, 4, 3, 2, 3, 1], [3, 2, 4, 5, 2, 3, 2, 2]],
}


def clarity(rater: int, case: int, system: str) -> int:
    return CLARITY[system][rater][case - 1]


def text_of(case: int, system: str) -> str:
    return make_cases(CASES, systems=(Z, Q))[case - 1]["responses"][system]


@pytest.fixture
def admin(transactional_db):
    return UserFactory(username="whole-admin", is_staff=True, is_superuser=True)


def rate_on_the_screen(slug: str, raters: list[str]) -> None:
    """Each rater's answers as the rating screen submits them: the screen shows labels A and
    B, possibly swapped; the rater, reading the texts, answers about the systems."""
    study = Study.objects.get(slug=slug)
    for r, username in enumerate(raters):
        membership = study.memberships.get(user__username=username)
        for assignment in membership.assignments.select_related("test_case"):
            case = int(assignment.test_case.case_id[3:])
            labels = {
                label.label: label.response.system.name
                for label in assignment.test_case.labels.select_related("response__system")
            }
            prefers_z = HUMANS[r][case - 1]
            key_choice = -prefers_z if labels["A"] == Z else prefers_z  # -1: A better
            rating_submit(
                assignment=assignment,
                payload={
                    "responses": {
                        label: {"clarity": {"choice": clarity(r, case, system)}}
                        for label, system in labels.items()
                    },
                    "case": {
                        "preference": {"choice": -key_choice if assignment.flipped else key_choice}
                    },
                    "confidence": "high",
                },
                any_version=True,
            )


def judge_output(prompt: str, case: int, verdict_by_system: int) -> str:
    """The judge's answer to one prompt: it reads which text is shown first."""
    if verdict_by_system == 0:
        return "Both are equally good.\n[[C]]"
    preferred = text_of(case, Z if verdict_by_system > 0 else Q)
    other = text_of(case, Q if verdict_by_system > 0 else Z)
    first = prompt.index(preferred) < prompt.index(other)
    return f"Reasoning about case {case}.\n[[{'A' if first else 'B'}]]"


def krippendorff_oracle(long: pd.DataFrame, dimension: str, level: str) -> float:
    """The krippendorff package on the exported long table: a response's points per unit
    (case, response) for a per-response dimension, the case's value for a preference."""
    rows = long[long["dimension"] == dimension]
    units = ["test_case"] if rows["scope"].iloc[0] == "case" else ["test_case", "response_label"]
    column = "value" if units == ["test_case"] else "points"
    table = rows.pivot_table(index="rater", columns=units, values=column, aggfunc="first")
    data = table.apply(pd.to_numeric).to_numpy(dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def raters_majority(votes: list[int]) -> float:
    """The side more raters chose, a rater's tie choosing neither side, else the tie 0: the
    report's per-case preference and the judges' reference (docs/statistics.md)."""
    sides = sum(int(np.sign(v)) for v in votes)
    return float(np.sign(sides))


def kappa_oracle(judge: list[int], humans: list[float], to_key: np.ndarray) -> tuple[float, int]:
    """scikit-learn's Cohen's kappa over three categories (A, tie, B; ties kept), in key
    terms as the raters answered, on the cases both have."""
    judge_key = to_key * np.array(judge, dtype=float)
    humans_key = to_key * np.array(humans, dtype=float)
    both = ~np.isnan(judge_key) & ~np.isnan(humans_key)
    value = cohen_kappa_score(judge_key[both], humans_key[both], labels=[-1.0, 0.0, 1.0])
    return float(value), int(both.sum())


def set_up(lead, administrator, concord_as) -> list:
    """Study, rubric (a preference and a clarity scale), cases, plan, raters; the raters'
    own clients once each has joined and consented."""
    study = lead.study_create("whole", "Whole study", rubric_preset="pairwise")
    assert study["status"] == "draft"
    presets = lead.rubric_presets()
    rubric = presets["pairwise"]
    rubric["dimensions"].append(
        next(d for d in presets["likert"]["dimensions"] if d["key"] == "clarity")
    )
    assert [d["key"] for d in lead.rubric_set("whole", rubric)["dimensions"]] == [
        "preference",
        "clarity",
    ]
    updated = lead.study_update("whole", raters_per_item=3, side_mode="balanced")
    assert (updated["raters_per_item"], updated["side_mode"]) == (3, "balanced")
    assert lead.cases_import("whole", make_cases(CASES, systems=(Z, Q)))["imported"] == CASES
    # The primary question, named before opening as the protocol's plan asks.
    plan = lead.analysis_plan("whole")
    assert plan["primary_measure"] == "" and "dimension:preference" in plan["primary_measures"]
    plan = lead.analysis_plan_update("whole", primary_measure="dimension:preference")
    assert plan["primary_measure"] == "dimension:preference"

    # Two accounts made by an administrator (the lead may not), a third rater by a link.
    made = [
        administrator.account_create("whole", f"whole-rater-{n}", email=f"r{n}@example.org")
        for n in range(2)
    ]
    assert [m["pseudonym"] for m in made] == ["R-01", "R-02"]
    assert all("password_link" not in m for m in made)
    with pytest.raises(PermissionDenied):
        lead.account_create("whole", "whole-rater-9", email="r9@example.org")
    invited = UserFactory(username="whole-rater-2")
    link = lead.invitation_create("whole", note="third rater")["link"]
    users = [*(get_user_model().objects.get(username=m["username"]) for m in made), invited]
    raters = [concord_as(user) for user in users]
    joined = raters[2].invitation_accept(link.rstrip("/").rsplit("/", 1)[1])
    assert (joined["study"], joined["role"], joined["pseudonym"]) == ("whole", "rater", "R-03")

    assert lead.assign("whole")["created"] == {"R-01": 8, "R-02": 8, "R-03": 8}
    assert lead.study_open("whole")["status"] == "open"
    for rater in raters:
        assert rater.onboarding("whole")["next_step"] == "consent"
        consented = rater.consent_give("whole", agree=True, prior_knowledge=False)
        assert consented["next_step"] is None and consented["consent"]["given_at"]
        mine = rater.my_assignments()
        assert [(s["study"], s["done"], s["total"]) for s in mine] == [("whole", 0, CASES)]
    return [user.username for user in users]


def check_agreement(lead) -> None:
    """The stored alphas against the krippendorff package on the exported long table."""
    agreement = lead.agreement_wait("whole")
    assert agreement["stale"] is False and agreement["ratings"] == 48  # one per response
    table = lead.agreement_table("whole")
    long = lead.export_table("whole", "long-csv")
    assert not long.isin([Z, Q]).any().any()  # blinded: no system anywhere
    for dimension in ("preference", "clarity"):
        level = table.loc[dimension, "level"]
        oracle = krippendorff_oracle(long, dimension, level)
        assert table.loc[dimension, "alpha"] == pytest.approx(oracle, abs=5e-7), dimension
    # Before unblinding nothing names a system: the key refused for the blinding, no
    # ranking, a report without estimates.
    with pytest.raises(PermissionDenied) as refused:
        lead.export("whole", "key-csv")
    assert "blind" in refused.value.message.lower()
    ranking = lead.ranking("whole")
    assert ranking["state"] == "unavailable" and "unblinded" in ranking["reason"]
    report = lead.report("whole")
    assert report["comparison"] is None and report["systems"] == []
    assert Z not in json.dumps(report) and Q not in json.dumps(report)
    with zipfile.ZipFile(io.BytesIO(lead.report_bundle("whole"))) as bundle:
        assert "whole-key.csv" not in bundle.namelist()
        assert json.loads(bundle.read("results.json")) == report
        for name in bundle.namelist():
            data = bundle.read(name)
            assert Z.encode() not in data and Q.encode() not in data, name


def check_judges(lead, to_key: np.ndarray) -> None:
    """A template that allows ties, its prompts, a judge that ties (and the same outputs
    read by the strict template, its ties malformed), each calibrated against the raters."""
    saved = lead.judge_template_save("whole", name="with-ties", text=TIE_TEMPLATE, allow_tie=True)
    (own,) = [t for t in saved["templates"] if not t["built_in"]]
    assert own["name"] == "with-ties" and own["allow_tie"] is True
    prompts = lead.judge_prompts("whole", template=own["uuid"])
    assert sorted((p["case_id"], p["order"]) for p in prompts) == sorted(
        (f"TC-{n:03d}", order) for n in range(1, CASES + 1) for order in ("AB", "BA")
    )
    assert '"[[C]]" for a tie' in prompts[0]["prompt"]
    assert not any(Z in p["prompt"] or Q in p["prompt"] for p in prompts)
    outputs = []
    for prompt in prompts:
        case = int(prompt["case_id"][3:])
        text = judge_output(prompt["prompt"], case, JUDGE[case - 1])
        outputs.append({**{k: prompt[k] for k in ("case_id", "order")}, "output": text})
    tying = lead.judges_import(
        "whole", [{**o, "judge": "tying-judge"} for o in outputs], template=own["uuid"]
    )
    assert tying == {
        "rows": 16, "judges": ["tying-judge"], "unparseable": 0, "ties": 4, "allow_tie": True,
    }  # fmt: skip
    strict = lead.judges_import(
        "whole", [{**o, "judge": "strict-judge"} for o in outputs], template="reference"
    )
    assert (strict["unparseable"], strict["ties"], strict["allow_tie"]) == (4, 0, False)
    judges = {judge["name"]: judge for judge in lead.judges_list("whole")}
    assert judges["tying-judge"]["ties"] == 4 and judges["strict-judge"]["unparseable"] == 4

    humans = [raters_majority([row[n] for row in HUMANS]) for n in range(CASES)]
    tied = lead.judge_calibration("whole", judges["tying-judge"]["uuid"], compute=True)
    assert tied["state"] == "computed"
    report = tied["calibration"]
    assert (report["n_ties"], report["n_case_ties"], report["tie_rate"]) == (4, 2, 0.25)
    kappa, n = kappa_oracle(JUDGE, humans, to_key)
    assert report["humans"]["majority"]["n"] == n == CASES  # ties kept
    assert report["humans"]["majority"]["kappa"] == pytest.approx(kappa, abs=1e-9)
    for r, row in enumerate(report["humans"]["per_rater"]):
        expected, _ = kappa_oracle(JUDGE, [float(v) for v in HUMANS[r]], to_key)
        assert row["rater"] == f"R-{r + 1:02d}" and row["kappa"] == pytest.approx(expected)

    # The strict reading: ties malformed, so only the decisive cases are compared.
    strict_report = lead.judge_calibration("whole", judges["strict-judge"]["uuid"], compute=True)
    strict_report = strict_report["calibration"]
    assert {u["problem"] for u in strict_report["unparseable"]} == {
        "malformed verdict token '[[C]]' (only [[A]] or [[B]])"
    }
    decisive = [v if v != 0 else np.nan for v in JUDGE]
    kappa, n = kappa_oracle(decisive, humans, to_key)
    assert strict_report["humans"]["majority"]["n"] == n == 6
    assert strict_report["humans"]["majority"]["kappa"] == pytest.approx(kappa, abs=1e-9)


def test_a_whole_study_through_the_client(concord_as, lead_user, admin, settings, jobs_in_threads):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    lead = concord_as(lead_user)
    raters = set_up(lead, concord_as(admin), concord_as)

    rate_on_the_screen("whole", raters)
    # Balanced sides: some raters saw a case's responses the other way round.
    assert Assignment.objects.filter(test_case__study__slug="whole", flipped=True).exists()
    assert lead.progress_table("whole")["done"].tolist() == [8, 8, 8]
    assert lead.study_close("whole", confirm=True)["status"] == "closed"
    check_agreement(lead)

    assert lead.unblind("whole", reason="analysis")["status"] == "unblinded"
    key = lead.export_table("whole", "key-csv")
    assert len(key) == 2 * CASES and set(key["System"]) == {Z, Q}
    z_is_a = {
        row["TC-ID"]: row["System"] == Z for _, row in key.iterrows() if row["Response"] == "A"
    }
    # System terms (+1 prefers Z) to key terms (-1 prefers A), per case.
    to_key = np.array([-1.0 if z_is_a[f"TC-{n:03d}"] else 1.0 for n in range(1, CASES + 1)])
    check_judges(lead, to_key)
    check_results(lead)


def per_case_means(system: str) -> np.ndarray:
    """Each case's clarity of a system, the mean over its raters (the plan's rule)."""
    return np.array(CLARITY[system], dtype=float).mean(axis=0)


def check_results(lead) -> None:
    """The ranking, the report and its bundle, each figure against scipy or a closed form."""
    signs = np.array(HUMANS)
    wins, losses, ties = (int((signs == v).sum()) for v in (1, -1, 0))
    assert (wins, losses, ties) == (14, 4, 6)

    # The ranking: the win matrix counts every preference; with two systems the
    # Bradley-Terry fit is the logit of Z's share of wins (a tie half), split about 0.
    ranking = lead.ranking("whole", compute=True)
    assert ranking["state"] == "computed"
    body = ranking["ranking"]
    assert body["systems"] == [Q, Z] and body["n_comparisons"] == wins + losses + ties
    z_row = next(row for row in body["matrix"] if row["system"] == Z)["cells"][0]
    assert (z_row["wins"], z_row["losses"], z_row["ties"]) == (wins, losses, ties)
    share = (wins + ties / 2) / (wins + losses + ties)
    half_logit = 0.5 * np.log(share / (1 - share))
    scores = {row["system"]: row for row in body["ranking"]}
    assert scores[Z]["rank"] == 1 and scores[Z]["score"] == pytest.approx(half_logit, abs=1e-8)
    assert scores[Q]["score"] == pytest.approx(-half_logit, abs=1e-8)
    assert body["n_resamples"] == ranking["n_resamples"]

    lead.agreement_wait("whole")  # the analysis recomputed on unblinding
    report = lead.report("whole")
    assert report["systems"] == [Q, Z] and report["unblinded"] is True
    assert report["primary"]["measure"] == "dimension:preference"
    assert report["primary_named"]["before_opening"] is True
    comparison = report["comparison"]
    assert comparison is not None and comparison["n_cases"] == CASES

    # The preference, per case: the sign of the sum of the raters' signs (the plan's
    # default rule); scipy's exact binomial test and Clopper-Pearson interval.
    case_verdicts = np.sign(signs.sum(axis=0))
    item_wins, item_losses = int((case_verdicts > 0).sum()), int((case_verdicts < 0).sum())
    (preference,) = comparison["preferences"]
    (pair,) = preference["pairs"]
    assert (pair["first"], pair["second"]) == (Q, Z)
    items = pair["items"]
    assert (items["wins"], items["losses"], items["ties"]) == (item_wins, item_losses, 0)
    test = stats.binomtest(item_wins, item_wins + item_losses, 0.5)
    assert items["p_value"] == pytest.approx(test.pvalue, abs=1e-12)
    interval = test.proportion_ci(confidence_level=0.95, method="exact")
    assert (items["low"], items["high"]) == pytest.approx((interval.low, interval.high), abs=1e-9)
    judgments = pair["judgments"]
    assert (judgments["wins"], judgments["losses"], judgments["ties"]) == (wins, losses, ties)
    assert judgments["p_value"] == pytest.approx(
        stats.binomtest(wins, wins + losses, 0.5).pvalue, abs=1e-12
    )

    # Clarity (and the total score, which is clarity alone here): the paired difference of
    # the per-case means, scipy's signed-rank and paired t-tests.
    z, q = per_case_means(Z), per_case_means(Q)
    wilcoxon = stats.wilcoxon(z, q)
    t_test = stats.ttest_rel(z, q)
    for measure in ("dimension:clarity", "total"):
        (paired,) = [
            row
            for row in comparison["paired"]
            if row["measure"] == measure and row["stratum"] == "overall"
        ]
        assert (paired["first"], paired["second"], paired["n"]) == (Q, Z, CASES)
        assert paired["difference"] == pytest.approx((z - q).mean(), abs=1e-12)
        assert paired["mean_second"] == pytest.approx(z.mean(), abs=1e-12)
        assert paired["wilcoxon_p"] == pytest.approx(wilcoxon.pvalue, abs=1e-12)
        assert paired["t_p"] == pytest.approx(t_test.pvalue, abs=1e-12)
        assert paired["effect_size_dz"] == pytest.approx(
            (z - q).mean() / (z - q).std(ddof=1), abs=1e-12
        )

    # The questions: the named primary one alone uncorrected, the others under Holm.
    questions = {row["measure"]: row for row in comparison["questions"]}
    assert questions["dimension:preference"]["primary"] is True
    assert questions["dimension:preference"]["p"] == pytest.approx(test.pvalue, abs=1e-12)
    others = ["total", "dimension:clarity"]
    raw = [questions[m]["p"] for m in others]
    assert raw == pytest.approx([wilcoxon.pvalue] * 2, abs=1e-12)
    _, holm, _, _ = multipletests(raw, method="holm")
    assert [questions[m]["p_holm"] for m in others] == pytest.approx(list(holm), abs=1e-12)

    # The bundle: the report's files, its numbers the JSON's, the key and the long table.
    with zipfile.ZipFile(io.BytesIO(lead.report_bundle("whole"))) as bundle:
        names = set(bundle.namelist())
        assert {
            "report.html",
            "results.json",
            "README.txt",
            "whole-long.csv",
            "whole-key.csv",
        } <= names
        assert json.loads(bundle.read("results.json")) == report
        key = pd.read_csv(io.BytesIO(bundle.read("whole-key.csv")), dtype=str)
        assert key.equals(lead.export_table("whole", "key-csv").astype(str))
        long = pd.read_csv(io.BytesIO(bundle.read("whole-long.csv")), dtype=str)
        assert len(long) == len(lead.export_table("whole", "long-csv"))
        assert Z in bundle.read("report.html").decode()


# The second study: ratings made elsewhere, imported by system name.
M = "Marlin-Beta-2"
IMPORTED_SYSTEMS = (Z, Q, M)
FILE_RATERS = ("Ann Example", "Bo Example", "Cy Example")
LIKERT = ("helpfulness", "clarity", "accuracy")
IMPORTED_CASES = 6


def imported_values() -> np.ndarray:
    """raters x cases x systems x dimensions, 1-5: each system's own level, rater noise."""
    level = np.array([4, 3, 2])[None, None, :, None]
    noise = np.random.default_rng(26).integers(-1, 2, size=(3, IMPORTED_CASES, 3, 3))
    return np.clip(level + noise, 1, 5)


def long_file(values: np.ndarray) -> bytes:
    lines = ["Case ID,System,Rater,Helpfulness,Clarity,Accuracy,Confidence,Notes,Timestamp"]
    for r, rater in enumerate(FILE_RATERS):
        for c in range(IMPORTED_CASES):
            for s, system in enumerate(IMPORTED_SYSTEMS):
                scores = ",".join(str(v) for v in values[r, c, s])
                lines.append(f"TC-{c + 1:03d},{system},{rater},{scores},High,,2024-05-0{c + 1}")
    return ("\n".join(lines) + "\n").encode()


def test_a_study_whose_ratings_come_in_by_system(concord_as, lead_user, settings, tmp_path):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    lead = concord_as(lead_user)
    lead.study_create("elsewhere", "Re-analysis", rubric_preset="likert")
    cases = make_cases(IMPORTED_CASES, systems=IMPORTED_SYSTEMS)
    assert lead.cases_import("elsewhere", cases)["imported"] == IMPORTED_CASES
    assert lead.study_open("elsewhere")["status"] == "open"

    values = imported_values()
    upload = tmp_path / "published-ratings.csv"
    upload.write_bytes(long_file(values))
    n_ratings = len(FILE_RATERS) * IMPORTED_CASES * len(IMPORTED_SYSTEMS)
    # One bad row and nothing is written; the job's problems name its row and column.
    bad = tmp_path / "bad.csv"
    lines = long_file(values).decode().splitlines()
    cells = lines[3].split(",")
    cells[3] = "9"  # a helpfulness of 9 on a 1-5 scale, on the file's row 4
    lines[3] = ",".join(cells)
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(JobFailed) as failed:
        lead.ratings_import("elsewhere", bad)
    assert [(p["row"], p["column"]) for p in failed.value.problems] == [(4, "Helpfulness")]
    assert lead.raters_list("elsewhere") == []
    checked = lead.ratings_import("elsewhere", upload, check=True)
    assert checked["state"] == "done" and checked["check_only"] is True
    assert checked["result"]["ratings"] == n_ratings and checked["result"]["new_raters"] == 3
    assert lead.export_table("elsewhere", "long-csv").empty  # a check writes nothing
    done = lead.ratings_import_checked("elsewhere", checked["job"].rstrip("/").rsplit("/", 1)[1])
    assert done["state"] == "done" and done["result"]["ratings"] == n_ratings
    assert [r["pseudonym"] for r in lead.raters_list("elsewhere")] == ["R-01", "R-02", "R-03"]

    assert lead.study_close("elsewhere", confirm=True)["status"] == "closed"
    agreement = lead.agreement_wait("elsewhere")
    assert agreement["ratings"] == n_ratings
    table = lead.agreement_table("elsewhere")
    for d, dimension in enumerate(LIKERT):
        # The oracle reads the file itself: units (case, system), one row per rater.
        data = values[:, :, :, d].reshape(len(FILE_RATERS), -1).astype(float)
        oracle = krippendorff.alpha(
            reliability_data=data, level_of_measurement=table.loc[dimension, "level"]
        )
        assert table.loc[dimension, "alpha"] == pytest.approx(oracle, abs=5e-7), dimension

    assert lead.unblind("elsewhere", reason="re-analysis")["status"] == "unblinded"
    lead.agreement_wait("elsewhere")
    report = lead.report("elsewhere")
    assert any(
        f"{n_ratings} ratings imported from elsewhere, not blinded by Concord" in str(row)
        for row in report["deviations"]
    )
    # Helpfulness of Z against Q: the per-case means of the file, scipy's paired tests.
    means = values[:, :, :, 0].mean(axis=0)  # cases x systems
    z, q = means[:, 0], means[:, 1]
    (paired,) = [
        row
        for row in report["comparison"]["paired"]
        if row["measure"] == "dimension:helpfulness"
        and row["stratum"] == "overall"
        and {row["first"], row["second"]} == {Z, Q}
    ]
    sign = 1 if paired["second"] == Z else -1
    assert paired["difference"] == pytest.approx(sign * (z - q).mean(), abs=1e-12)
    assert paired["wilcoxon_p"] == pytest.approx(stats.wilcoxon(z, q).pvalue, abs=1e-12)
    assert paired["t_p"] == pytest.approx(stats.ttest_rel(z, q).pvalue, abs=1e-12)

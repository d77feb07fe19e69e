"""LLM judges end to end: prompt export, output import, calibration against scikit-learn."""

import contextlib
import csv
import io
import json
import re
import threading

import numpy as np
import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from agreement.judges import calibration
from agreement.judges.files import JudgeImportError
from agreement.models import Judge, JudgeOutput
from agreement.selectors.ratings import study_ratings
from agreement.services import judge_outputs_import
from annotation.services import assignments_create_all, rating_submit
from studies import services as study_services
from studies.blinding import judge_prompt_first
from studies.models import BlindedLabel, Membership, Study, StudyEvent
from studies.selectors import study_setup_events
from studies.services import membership_add, study_create

from ..factories import UserFactory, make_cases
from .analysis_pages import computed_page

# Key-order preferences (-1 = A, 0 = tie, +1 = B) of three raters on six cases.
HUMANS = [
    [-1, -1, 1, 1, 0, -1],
    [-1, 1, 1, 1, 0, 1],
    [-1, -1, 1, -1, 1, 1],
]
# The judge's verdicts per case (order AB, order BA) as they read when a case's prompts show
# its key label A first; ``outputs_jsonl`` turns them to the case's hidden prompt order.
JUDGE = [("A", "B"), ("A", "B"), ("B", "B"), ("B", "A"), ("A", "B"), ("B", "A")]


@pytest.fixture
def study(db):
    lead = UserFactory(username="judge-lead")
    study = study_create(
        slug="judged", name="Judged", lead=lead, rubric_preset="pairwise", side_mode="balanced"
    )
    study_services.test_cases_add(
        study=study, systems=["alpha", "beta"], cases=make_cases(6, ("alpha", "beta"))
    )
    raters = []
    for _ in range(3):
        membership = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=membership)
        raters.append(membership)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    for membership, preferences in zip(raters, HUMANS, strict=True):
        for assignment in membership.assignments.select_related("test_case"):
            case = int(assignment.test_case.case_id[3:]) - 1
            key_value = preferences[case]
            choice = -key_value if assignment.flipped else key_value
            rating_submit(
                assignment=assignment,
                payload={"case": {"preference": {"choice": choice}}, "confidence": "high"},
                any_version=True,
            )
    return study


def swapped(study, case_id):
    """Whether the case's prompts show its key label B first in order "AB"."""
    labels = BlindedLabel.objects.filter(test_case__study=study, test_case__case_id=case_id)
    systems = dict(labels.values_list("label", "response__system__name"))
    first = judge_prompt_first(
        seed=study.blinding_seed,
        secret=study.blinding_secret,
        case_id=case_id,
        systems=sorted(systems.values()),
    )
    return first == systems["B"]


def unblind(study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.UNBLINDED)


def outputs_jsonl(study, verdicts=JUDGE, judge="judge-1"):
    lines = []
    for n, (first, second) in enumerate(verdicts, 1):
        flip = {"A": "B", "B": "A"} if swapped(study, f"TC-{n:03d}") else {"A": "A", "B": "B"}
        for order, verdict in (("AB", flip[first]), ("BA", flip[second])):
            lines.append(
                {
                    "case_id": f"TC-{n:03d}",
                    "order": order,
                    "judge": judge,
                    "output": f"Reasoning about case {n}.\n[[{verdict}]]",
                }
            )
    return "\n".join(json.dumps(line) for line in lines).encode()


def upload(client, study, name, data):
    return client.post(
        reverse("agreement:judges", args=[study.slug]),
        {"action": "import", "file": SimpleUploadedFile(name, data)},
    )


def test_prompt_export_has_both_orders_swapped_and_no_system_names(client, study):
    client.force_login(study.lead)
    response = client.get(reverse("agreement:judge_prompts", args=[study.slug]))
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode()
    lines = [json.loads(line) for line in body.splitlines()]
    assert [(line["case_id"], line["order"]) for line in lines[:4]] == [
        ("TC-001", "AB"), ("TC-001", "BA"), ("TC-002", "AB"), ("TC-002", "BA"),
    ]  # fmt: skip
    assert len(lines) == 12
    for case in study.test_cases.all():
        labels = case.labels.select_related("response")
        texts = {label.label: label.response.text for label in labels}
        first, second = ("B", "A") if swapped(study, case.case_id) else ("A", "B")
        ab, ba = (line["prompt"] for line in lines if line["case_id"] == case.case_id)
        # Each case's prompt order is its own hidden draw, not the key: the order "AB"
        # shows the key's A first only where the draw says so.
        assert ab.index(texts[first]) < ab.index(texts[second])
        assert ba.index(texts[second]) < ba.index(texts[first])
    assert "[[A]]" in lines[0]["prompt"]
    assert "alpha" not in body and "beta" not in body


def test_prompt_export_with_an_edited_template(client, study):
    client.force_login(study.lead)
    response = client.post(
        reverse("agreement:judges", args=[study.slug]),
        {"action": "template", "name": "short", "text": "Q: {question}\n1) {step_a}\n2) {step_b}"},
    )
    assert response.status_code == 302
    template = study.judge_templates.get()
    response = client.get(
        reverse("agreement:judge_prompts", args=[study.slug]), {"template": str(template.uuid)}
    )
    first = json.loads(b"".join(response.streaming_content).decode().splitlines()[0])
    assert first["prompt"].startswith("Q: Prompt number 1")
    bad = client.post(
        reverse("agreement:judges", args=[study.slug]),
        {"action": "template", "name": "bad", "text": "Judge {candidate}"},
    )
    assert bad.status_code == 400
    assert "Unknown placeholder" in bad.content.decode()
    assert study.judge_templates.count() == 1


def test_before_unblinding_the_calibration_shows_the_judge_on_its_own(client, study):
    client.force_login(study.lead)
    upload(client, study, "judge.jsonl", outputs_jsonl(study))
    judge = Judge.objects.get(study=study, name="judge-1")
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    report = page.context["report"]
    assert report["humans"] is None
    # Same preference after swapping in 5 of 6 cases; the first shown chosen 5 of 12.
    assert report["position_consistency"] == pytest.approx(5 / 6)
    shown_first = outputs_jsonl(study).decode().count("[[A]]")
    assert report["first_position_rate"] == pytest.approx(shown_first / 12)
    assert report["n_judged"] == 6 and report["n_outputs"] == 12
    html = page.content.decode()
    assert "shown once the study is unblinded" in html
    for absent in ("kappa-majority", "disagreement", "Agreement with each rater", "alpha"):
        assert absent not in html


def test_import_and_calibration_match_scikit_learn(client, study):
    client.force_login(study.lead)
    response = upload(client, study, "judge.jsonl", outputs_jsonl(study))
    assert response.status_code == 302
    judge = Judge.objects.get(study=study, name="judge-1")
    assert judge.outputs.count() == 12

    unblind(study)
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    assert page.status_code == 200
    report = page.context["report"]
    humans = report["humans"]

    # Humans: the side more of the three raters chose (a tie chooses none; the report's rule),
    # a tie when as many chose each; judge: a tie where the orders disagree. Compared in key
    # order (the raters' answers are), whatever order the prompts showed. The last case's
    # (tie, tie, second) is the second.
    majority = []
    for column in np.array(HUMANS, dtype=float).T:
        first, second = (column < 0).sum(), (column > 0).sum()
        majority.append(-1.0 if first > second else 1.0 if second > first else 0.0)
    assert majority[-1] == 1.0
    judge_key = []
    for first, second in JUDGE:
        ab = -1 if first == "A" else 1
        ba = 1 if second == "A" else -1
        judge_key.append(ab if ab == ba else 0)
    shared = [i for i, m in enumerate(majority) if m is not None]
    expected = cohen_kappa_score(
        [judge_key[i] for i in shared], [majority[i] for i in shared], labels=[-1, 0, 1]
    )
    assert humans["majority"]["kappa"] == pytest.approx(expected)
    assert humans["majority"]["n"] == len(shared)
    assert humans["majority"]["low"] <= humans["majority"]["kappa"] <= humans["majority"]["high"]
    for row, preferences in zip(humans["per_rater"], HUMANS, strict=True):
        assert row["kappa"] == pytest.approx(
            cohen_kappa_score(judge_key, preferences, labels=[-1, 0, 1])
        )
    # Same key-order verdict after swapping in 5 of 6 cases; the first shown chosen 5 of 12.
    assert report["position_consistency"] == pytest.approx(5 / 6)
    shown_first = outputs_jsonl(study).decode().count("[[A]]")
    assert report["first_position_rate"] == pytest.approx(shown_first / 12)
    assert humans["n_disagreements"] == sum(judge_key[i] != majority[i] for i in shared)
    assert "Shown first (order AB)" in page.content.decode()


def test_judges_never_count_as_raters(client, study):
    client.force_login(study.lead)
    upload(client, study, "judge.jsonl", outputs_jsonl(study))
    ratings = study_ratings(study=study, pilot=False)
    assert len(ratings.raters) == 3
    assert "judge-1" not in ratings.raters


def test_unparseable_outputs_are_kept_with_the_reason_and_listed(client, study):
    client.force_login(study.lead)
    rows = [
        ("TC-001", "AB", "Clear.\n[[A]]"),
        ("TC-001", "BA", "[[B]] since it is right"),
        ("TC-002", "AB", "Both fine. [[A]] [[A]]"),
        ("TC-002", "BA", "Hmm [[C]]"),
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["case_id", "order", "judge", "output"])
    writer.writerows((case, order, "csv-judge", text) for case, order, text in rows)
    response = upload(client, study, "judge.csv", buffer.getvalue().encode())
    assert response.status_code == 302
    judge = Judge.objects.get(name="csv-judge")
    problems = dict(judge.outputs.values_list("raw_text", "problem"))
    assert problems["Clear.\n[[A]]"] == ""
    assert "before the explanation" in problems["[[B]] since it is right"]
    assert "more than one verdict" in problems["Both fine. [[A]] [[A]]"]
    assert "malformed" in problems["Hmm [[C]]"]
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    assert len(page.context["report"]["unparseable"]) == 3
    assert "more than one verdict" in page.content.decode()


def test_a_file_with_row_errors_imports_nothing(client, study):
    client.force_login(study.lead)
    lines = outputs_jsonl(study).decode().splitlines()
    lines.append(json.dumps({"case_id": "TC-999", "order": "AB", "judge": "j", "output": "x"}))
    lines.append(json.dumps({"case_id": "TC-001", "order": "XY", "judge": "j", "output": "x"}))
    lines.append("not json")
    response = upload(client, study, "judge.jsonl", "\n".join(lines).encode())
    assert response.status_code == 400
    html = response.content.decode()
    assert "Line/row 14" in html and "XY" in html and "Line/row 15" in html
    assert not JudgeOutput.objects.exists() and not Judge.objects.exists()
    response = upload(
        client, study, "judge.jsonl", outputs_jsonl(study) + b"\n" + lines[0].encode()
    )
    assert response.status_code == 400
    assert "again" in response.content.decode()
    assert not JudgeOutput.objects.exists()


def test_win_rates_after_unblinding_name_the_systems(client, study):
    client.force_login(study.lead)
    upload(client, study, "judge.jsonl", outputs_jsonl(study))
    unblind(study)
    judge = Judge.objects.get()
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    rates = {row["system"]: row for row in page.context["report"]["humans"]["win_rates"]}
    assert set(rates) == {"alpha", "beta"}
    assert rates["alpha"]["judge"] + rates["beta"]["judge"] == pytest.approx(1.0)
    assert rates["alpha"]["humans_n"] == rates["beta"]["humans_n"]


def test_judge_outputs_export_apart_in_key_order_without_system_names(client, study):
    client.force_login(study.lead)
    upload(client, study, "judge.jsonl", outputs_jsonl(study))
    response = client.get(reverse("agreement:judge_export", args=[study.slug]))
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(body)))
    assert len(rows) == 12
    # Before unblinding the key-order column is empty: with the prompts, it is the key.
    assert {row["preferred_key_label"] for row in rows} == {""}
    assert "alpha" not in body and "beta" not in body
    Study.objects.filter(pk=study.pk).update(status=Study.Status.UNBLINDED)
    response = client.get(reverse("agreement:judge_export", args=[study.slug]))
    rows = list(
        csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")))
    )
    first = {(r["case_id"], r["order"]): r for r in rows}
    # Case 1: the judge preferred the key's A in both orders, whatever the prompt order.
    assert first["TC-001", "AB"]["preferred_key_label"] == "A"
    assert first["TC-001", "BA"]["preferred_key_label"] == "A"
    assert first["TC-001", "BA"]["verdict_as_shown"] == ("A" if swapped(study, "TC-001") else "B")


def test_judge_imports_and_templates_are_in_the_history(client, study):
    client.force_login(study.lead)
    upload(client, study, "judge.jsonl", outputs_jsonl(study))
    client.post(
        reverse("agreement:judges", args=[study.slug]),
        {"action": "template", "name": "short", "text": "Q: {question}\n1) {step_a}\n2) {step_b}"},
    )
    refused = client.post(
        reverse("agreement:judges", args=[study.slug]),
        {"action": "template", "name": "bad", "text": "Judge {candidate}"},
    )
    assert refused.status_code == 400
    imported = study.events.get(kind=StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED)
    assert imported.actor == study.lead
    assert imported.detail["rows"] == 12 and imported.detail["judges"] == ["judge-1"]
    saved = study.events.filter(kind=StudyEvent.Kind.JUDGE_TEMPLATE_SAVED)
    assert [event.detail["name"] for event in saved] == ["short"]  # the refused one is not
    history = [row["what"] for row in study_setup_events(study=study)]
    assert any(text.startswith("Judge outputs imported: 12 from judge.jsonl") for text in history)


@pytest.mark.django_db(transaction=True)
def test_two_imports_of_a_new_judge_at_once_both_succeed(study, monkeypatch):
    """Two coordinators import outputs naming the same new judge at the same moment: the
    second waits for the first instead of failing on the judge's unique name."""
    real = JudgeOutput.objects.bulk_create
    arrived = threading.Barrier(2, timeout=30)

    def after_both_arrived(*args, **kwargs):
        with contextlib.suppress(threading.BrokenBarrierError):
            arrived.wait(timeout=2)  # the second import is blocked by the first's locks
        return real(*args, **kwargs)

    monkeypatch.setattr(JudgeOutput.objects, "bulk_create", after_both_arrived)
    errors = []

    def run():
        try:
            judge_outputs_import(
                study=study, filename="o.jsonl", data=outputs_jsonl(study, judge="new-judge")
            )
        except Exception as error:  # any failure is the finding
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Judge.objects.filter(study=study, name="new-judge").count() == 1
    assert JudgeOutput.objects.filter(judge__study=study).count() == 12


def test_the_calibration_is_computed_once_until_its_inputs_change(client, study, monkeypatch):
    calls = []
    real = calibration.judge_calibration

    def counted(**kwargs):
        calls.append(kwargs["judge"].name)
        return real(**kwargs)

    monkeypatch.setattr(calibration, "judge_calibration", counted)
    client.force_login(study.lead)
    upload(client, study, "judge.jsonl", outputs_jsonl(study))
    judge = Judge.objects.get()
    url = reverse("agreement:judge_calibration", args=[study.slug, judge.uuid])
    args = ("agreement:judge_calibration", study.slug, judge.uuid)
    first = computed_page(client, *args).context["report"]
    again = client.get(url).context["report"]
    assert calls == ["judge-1"] and again == first
    # New outputs of the judge: not computed for them yet, until the next press.
    upload(client, study, "judge.jsonl", outputs_jsonl(study, verdicts=[("A", "B")] * 6))
    page = client.get(url)
    assert 'id="analysis-not-computed"' in page.text and calls == ["judge-1"]
    changed = computed_page(client, *args).context["report"]
    assert calls == ["judge-1", "judge-1"]
    assert changed["position_consistency"] == 1.0 != first["position_consistency"]
    # A human's answer withdrawn from the analysis (a rater excluded): computed again.
    unblind(study)
    assert computed_page(client, *args).context["report"]["humans"]["n_raters"] == 3
    membership = study.memberships.filter(role=Membership.Role.RATER).first()
    Membership.objects.filter(pk=membership.pk).update(status=Membership.Status.EXCLUDED)
    assert computed_page(client, *args).context["report"]["humans"]["n_raters"] == 2
    assert len(calls) == 4


def _constant_judge(verdict, name):
    lines = [
        {"case_id": f"TC-{n:03d}", "order": order, "judge": name, "output": f"Sure.\n[[{verdict}]]"}
        for n in range(1, 7)
        for order in ("AB", "BA")
    ]
    return "\n".join(json.dumps(line) for line in lines).encode()


CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def _coordinator_view(client, study):
    """What a coordinator reads of the judges before unblinding: the prompts, each judge's
    calibration page and report, and the outputs export."""
    cache.clear()
    client.get(reverse("agreement:judges", args=[study.slug]))  # shows the imports' messages
    prompts = client.get(reverse("agreement:judge_prompts", args=[study.slug]))
    outputs = client.get(reverse("agreement:judge_export", args=[study.slug]))
    view = {
        "prompts": b"".join(prompts.streaming_content),
        "outputs": b"".join(outputs.streaming_content),
    }
    for judge in Judge.objects.filter(study=study):
        page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
        view[judge.name] = (page.context["report"], CSRF.sub("", page.content.decode()))
    return view


def _swap_the_key(study):
    """The same study under another key: every case's responses trade labels A and B; the
    raters' answers, stored by label, stay as they are."""
    for label in BlindedLabel.objects.filter(test_case__study=study, label="A"):
        other = BlindedLabel.objects.get(test_case_id=label.test_case_id, label="B")
        BlindedLabel.objects.filter(pk=label.pk).update(label="Z")
        BlindedLabel.objects.filter(pk=other.pk).update(label="A")
        BlindedLabel.objects.filter(pk=label.pk).update(label="B")


def test_two_made_up_judges_tell_a_coordinator_nothing_about_the_key(client, study):
    """The attack: judges that always answer [[A]] and always [[B]], read beside the texts
    the coordinator knows by system. Under another key with the same answers by label,
    everything the coordinator reads of the judges before unblinding is the same."""
    client.force_login(study.lead)
    upload(client, study, "a.jsonl", _constant_judge("A", "always-a"))
    upload(client, study, "b.jsonl", _constant_judge("B", "always-b"))
    before = _coordinator_view(client, study)
    _swap_the_key(study)
    after = _coordinator_view(client, study)
    assert after == before
    report, html = before["always-a"]
    assert report["humans"] is None and report["first_position_rate"] == 1.0
    assert "first 0, tie" not in html and "humans first" not in html
    # After unblinding the comparison with the raters is there, and follows the key.
    unblind(study)
    cache.clear()
    judge = Judge.objects.get(name="always-a")
    page = computed_page(client, "agreement:judge_calibration", study.slug, judge.uuid)
    assert page.context["report"]["humans"]["n_raters"] == 3


def test_the_keyswap_comparison_catches_a_calibration_that_reads_the_key(
    client, study, monkeypatch
):
    """The comparison above has the power to fail: a calibration that read the key before
    unblinding (here it lists each case's systems in key order) differs between the keys."""
    real = calibration._judge_diagnostics

    def leaking(cases, pairs, verdicts):
        report = real(cases, pairs, verdicts)
        key = [
            (labels.get("A"), labels.get("B"))
            for labels in (
                dict(
                    BlindedLabel.objects.filter(test_case_id=pk).values_list(
                        "label", "response__system__name"
                    )
                )
                for pk, *_ in cases
            )
        ]
        report["leak"] = key
        return report

    monkeypatch.setattr(calibration, "_judge_diagnostics", leaking)
    client.force_login(study.lead)
    upload(client, study, "a.jsonl", _constant_judge("A", "always-a"))
    before = _coordinator_view(client, study)
    _swap_the_key(study)
    assert _coordinator_view(client, study) != before


def test_a_file_with_two_problems_of_two_kinds_reports_both(study):
    good = {"case_id": "TC-001", "order": "AB", "judge": "j", "output": "Fine.\n[[A]]"}
    lines = [good, {**good, "case_id": "TC-999"}, {**good, "order": "CA"}]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    with pytest.raises(JudgeImportError) as refused:
        judge_outputs_import(study=study, filename="outputs.jsonl", data=data)
    problems = refused.value.problems
    assert any("Line/row 2" in p and "TC-999" in p for p in problems)
    assert any("Line/row 3" in p and "'CA'" in p for p in problems)
    assert not JudgeOutput.objects.exists()


def test_without_a_preference_dimension_the_calibration_says_why_no_human_comparison(client, db):
    lead = UserFactory(username="no-preference-lead")
    study = study_create(slug="no-preference", name="No preference", lead=lead)
    study_services.test_cases_add(
        study=study, systems=["alpha", "beta"], cases=make_cases(2, ("alpha", "beta"))
    )
    rater = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=rater)
    client.force_login(lead)
    page = client.get(reverse("agreement:judges", args=[study.slug]))
    assert "no pairwise preference dimension" in page.content.decode()
    lines = [
        {"case_id": case, "order": order, "judge": "j", "output": "Because.\n[[A]]"}
        for case in ("TC-001", "TC-002")
        for order in ("AB", "BA")
    ]
    judge_outputs_import(
        study=study, filename="j.jsonl", data="\n".join(map(json.dumps, lines)).encode()
    )
    unblind(study)
    judge = Judge.objects.get(study=study, name="j")
    html = computed_page(
        client, "agreement:judge_calibration", study.slug, judge.uuid
    ).content.decode()
    assert "no pairwise preference dimension" in html
    assert "No submitted human ratings yet" not in html

from annotation import selectors, services
from tests.payloads import full_marks_payload


def submit(assignment, payload, version=0):
    return services.rating_submit(assignment=assignment, payload=payload, expected_version=version)


def test_self_check_lists_counted_items_side_by_side_and_points_out_inconsistencies(membership):
    first, second = list(membership.assignments.order_by("position"))[:2]
    payload = full_marks_payload()
    payload["responses"]["A"]["depth"]["items"][0] = {"text": "Misuse risk", "half": False}
    payload["responses"]["A"]["depth"]["flagged"] = True
    payload["responses"]["A"]["depth"]["flag_note"] = "Sub-factors?"
    submit(first, payload)
    other = full_marks_payload(confidence="low")
    other["responses"]["B"]["depth"]["items"][0] = {"text": "misuse risk", "half": True}
    submit(second, other)

    check = selectors.self_check(rater=membership)
    assert [row["assignment"] for row in check.rows] == [first, second]
    assert check.labels == ["A", "B"]
    assert check.rows[0]["responses"][0]["total"] == 20
    depth = next(block for block in check.counted if block["dimension"]["key"] == "depth")
    first_cell = depth["cases"][0]["cells"][0]
    assert first_cell["items"][0]["text"] == "Misuse risk"
    assert first_cell["count"] == "6" and first_cell["points"] == 5
    assert depth["cases"][1]["cells"][1]["count"] == "5.5"
    kinds = [finding.kind for finding, _ in check.findings]
    assert "weight" in kinds
    assert check.flags[0]["note"] == "Sub-factors?"
    assert len(check.pending) == 2


def test_self_check_shows_screen_labels_on_a_flipped_screen(membership):
    assignment = membership.assignments.first()
    assignment.flipped = True
    assignment.save()
    payload = full_marks_payload()
    payload["responses"]["A"]["evidence"] = {"checked": [False, False, False]}
    submit(assignment, payload)
    check = selectors.self_check(rater=membership)
    # Key label A was shown second, as "Response B".
    totals = {r["label"]: r["total"] for r in check.rows[0]["responses"]}
    assert totals == {"A": 20, "B": 17}


def test_self_check_shows_answers_counted_offline_by_their_points(membership):
    """A worksheet records points alone for counted dimensions and checklists."""
    assignment = membership.assignments.order_by("position").first()
    submit(assignment, full_marks_payload())
    rating = assignment.ratings.get(label="A")
    rating.scores["depth"] = {"items": None, "points": 4, "flagged": False, "flag_note": ""}
    rating.scores["evidence"] = {"checked": None, "points": 2, "flagged": False, "flag_note": ""}
    rating.save()

    check = selectors.self_check(rater=membership)
    depth = next(block for block in check.counted if block["dimension"]["key"] == "depth")
    offline, listed = depth["cases"][0]["cells"]  # screen labels A and B
    assert offline["offline"] and offline["points"] == 4 and offline["items"] == []
    assert not listed["offline"] and listed["count"] == "6"
    # The self-check writes each answer as the form put it (issue 42): points as text.
    assert check.rows[0]["responses"][0]["points"][:2] == ["4", "2"]
    assert not [f for f, _ in check.findings if f.kind in ("weight", "duplicate")]


def test_case_position_and_next_unrated_follow_the_raters_order(membership):
    cases = list(membership.assignments.order_by("position"))
    position = selectors.case_position(assignment=cases[1])
    assert (position.number, position.previous, position.next) == (2, cases[0], cases[2])
    assert (position.progress.done, position.progress.total) == (0, len(cases))
    first, last = (selectors.case_position(assignment=a) for a in (cases[0], cases[-1]))
    assert (first.number, first.previous, first.next) == (1, None, cases[1])
    assert (last.number, last.previous, last.next) == (len(cases), cases[-2], None)
    submit(cases[0], full_marks_payload())
    assert selectors.case_position(assignment=cases[1]).progress.done == 1
    assert selectors.next_unrated(rater=membership) == cases[1]
    assert selectors.next_unrated(rater=membership, after=cases[3]) == cases[1]


def test_onboarding_overview_names_raters_by_pseudonym_only(study, rater):
    rows = selectors.onboarding_overview(study=study)
    assert [row.pseudonym for row in rows] == ["R-01", "R-02"]
    assert all(row.consent is not None for row in rows)
    assert rater.username not in repr(rows)


def test_the_one_query_gate_answers_as_the_onboarding_state(membership):
    from django.utils import timezone

    from annotation.models import QualificationAttempt, TrainingItem, Withdrawal

    study = membership.study

    def both():
        membership.refresh_from_db()
        study.refresh_from_db()
        membership.study = study
        full = selectors.onboarding_state(rater=membership).blocking_step
        assert selectors.onboarding_blocking_step(rater=membership) == full
        return full

    assert both() is None
    TrainingItem.objects.create(
        study=study, kind="qualification", title="Q", prompt="P", responses=["a", "b"]
    )
    assert both() is None  # an item without an answer key is not asked
    TrainingItem.objects.create(
        study=study,
        kind="qualification",
        title="Q2",
        prompt="P",
        responses=["a", "b"],
        key={"x": 1},
    )
    assert both() == "qualification"
    QualificationAttempt.objects.create(
        rater=membership, number=1, started_at=timezone.now(), passed=False
    )
    assert both() == "qualification"
    QualificationAttempt.objects.create(
        rater=membership, number=2, started_at=timezone.now(), passed=True
    )
    assert both() is None
    study.consent_version += 1
    study.save(update_fields=["consent_version"])
    assert both() == "consent"
    Withdrawal.objects.create(
        rater=membership, data="keep", chosen_by_rater=True, withdrawn_at=timezone.now()
    )
    assert both() == "withdrawn"

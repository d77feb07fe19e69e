from annotation.consistency import Entry, find_inconsistencies, normalise
from studies.rubric import dimension_from_config

BANDS = {"bands": [[0, 0], [2, 2], [4, 4], [6, 5]]}
COUNTED = [
    dimension_from_config(key=key, name=name, kind="counted", config=BANDS)
    for key, name in (("depth", "Depth of Analysis"), ("alternatives", "Alternative Consideration"))
]


def entry(case, label, depth=(), alternatives=(), total=10):
    def items(pairs):
        return {"items": [{"text": text, "half": half} for text, half in pairs]}

    return Entry(case, label, {"depth": items(depth), "alternatives": items(alternatives)}, total)


def test_normalise_ignores_case_spacing_and_punctuation():
    assert normalise("  Misuse   risk. ") == normalise("misuse risk") == "misuse risk"


def test_same_item_counted_at_different_weights_is_pointed_out():
    findings = find_inconsistencies(
        entries=[
            entry("TC-003", "A", depth=[("Misuse risk", False)]),
            entry("TC-016", "B", depth=[("misuse risk.", True)]),
        ],
        counted=COUNTED,
        max_total=20,
    )
    assert [f.kind for f in findings] == ["weight"]
    assert "TC-003 A" in findings[0].message and "TC-016 B" in findings[0].message
    assert "Depth of Analysis" in findings[0].message


def test_duplicates_and_items_in_two_dimensions_are_pointed_out():
    findings = find_inconsistencies(
        entries=[
            entry(
                "TC-001",
                "A",
                depth=[("option value", False), ("Option value", False), ("staged release", False)],
                alternatives=[("staged release", False)],
            )
        ],
        counted=COUNTED,
        max_total=20,
    )
    assert sorted(f.kind for f in findings) == ["duplicate", "two-dimensions"]


def test_a_large_gap_between_responses_is_pointed_out():
    findings = find_inconsistencies(
        entries=[entry("TC-002", "A", total=18), entry("TC-002", "B", total=6)],
        counted=COUNTED,
        max_total=20,
    )
    assert [f.kind for f in findings] == ["gap"]
    assert "Response A scored 18" in findings[0].message


def test_consistent_scores_raise_nothing():
    findings = find_inconsistencies(
        entries=[
            entry("TC-001", "A", depth=[("cost", False)], total=10),
            entry("TC-001", "B", depth=[("cost", False)], total=12),
        ],
        counted=COUNTED,
        max_total=20,
    )
    assert findings == []

"""The report's histogram of paired differences: round bin edges over the data's own range,
0 marked when it is in range and left out when it is not."""

import re

from agreement.report.charts import histogram, histogram_bins


def _labels(svg: str, *, phone: bool = False) -> list[str]:
    """The bin edges' labels, in order; on a phone those not marked wide-screen only."""
    ticks = re.findall(r'<text [^>]*dominant-baseline="hanging"( class="tick-wide")?>([^<]+)<', svg)
    return [text for wide_only, text in ticks if not (phone and wide_only)]


def test_the_bins_cover_the_values_with_round_edges_and_do_not_start_at_0():
    values = [11, 12, 12.5, 13, 15, 14.5, 11.5, 13.5]
    bins = histogram_bins(values)
    assert bins["edges"][0] == 11 and bins["edges"][-1] > 15
    assert all(float(edge * 2).is_integer() for edge in bins["edges"])
    assert sum(bins["counts"]) == len(values)
    svg = histogram(values, label="differences")
    assert "data-zero" not in svg
    assert _labels(svg)[:3] == ["11", "11.5", "12"]


def test_awkward_values_get_round_edges_not_bin_centres():
    bins = histogram_bins([0.51, 1.53, 3, 7, 14.82])
    assert bins["edges"] == [float(e) for e in range(16)]
    assert bins["counts"][0] == 1 and bins["counts"][14] == 1
    assert "0.51" not in histogram([0.51, 1.53, 3, 7, 14.82], label="d")


def test_whole_point_values_are_never_split_into_half_point_bins():
    bins = histogram_bins([11, 12, 13, 15, 14, 11])
    assert bins["step"] == 1 and bins["counts"] == [2, 1, 1, 1, 1]


def test_0_is_marked_when_it_is_in_range():
    svg = histogram([-3, -1, 0, 2, 5], label="differences", x_label="B minus A")
    assert "data-zero" in svg and "B minus A" in svg
    bins = histogram_bins([-3, -1, 0, 2, 5])
    assert bins["edges"][0] == -3 and bins["counts"][bins["edges"].index(0)] == 1


def test_labels_are_escaped():
    assert "<b>" not in histogram([1, 2], label="d", x_label="<b>")


def test_on_a_phone_fewer_edges_are_labelled_each_a_round_number_far_from_the_next():
    values = [v / 2 for v in range(21, 50)]  # 10.5 to 24.5 by halves: fifteen bins of 1
    wide, phone = (
        _labels(histogram(values, label="d")),
        _labels(histogram(values, label="d"), phone=True),
    )
    assert wide == [f"{v:g}" for v in range(10, 26)]
    # Every few edges (at least 100 of the chart's 640 units apart), the first kept.
    assert phone[0] == "10" and 3 <= len(phone) <= 6
    steps = {float(b) - float(a) for a, b in zip(phone, phone[1:], strict=False)}
    assert len(steps) == 1 and steps.pop() * 560 / 16 >= 100
    # Few bins: every edge stays labelled on a phone too.
    assert _labels(histogram([1, 2, 3], label="d"), phone=True) == ["1", "2", "3", "4"]

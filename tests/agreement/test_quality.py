import pytest
from django.urls import reverse

from agreement.models import StudyAgreement
from annotation.services import rating_submit
from studies.models import Membership, StudyEvent
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def rated_study():
    raters = [UserFactory() for _ in range(3)]
    study = make_study(slug="qc", cases=3, raters=raters)
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        for assignment in membership.assignments.all():
            rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    return study, raters


def url(study):
    return reverse("agreement:qc", args=[study.slug])


def test_admins_see_flags_and_identities(client, rated_study):
    study, raters = rated_study
    client.force_login(UserFactory(is_staff=True))
    page = client.get(url(study))
    assert page.status_code == 200
    assert "R-01" in page.text and raters[0].username in page.text
    # Submitted through the service with no active time: every rater is flagged as fast.
    assert "median time per case 0 s" in page.text


def test_the_lead_sees_flags_by_pseudonym_only_and_cannot_act(client, rated_study):
    study, raters = rated_study
    client.force_login(study.lead)
    page = client.get(url(study))
    assert page.status_code == 200
    assert raters[0].username not in page.text
    response = client.post(url(study), {"rater": "R-01", "action": "exclude", "reason": "x"})
    assert response.status_code == 403
    assert Membership.objects.get(study=study, pseudonym="R-01").status == "active"


def test_raters_get_403_and_strangers_404(client, rated_study):
    study, raters = rated_study
    client.force_login(raters[0])
    assert client.get(url(study)).status_code == 403
    client.force_login(UserFactory())
    assert client.get(url(study)).status_code == 404


def test_excluding_a_rater_records_the_reason_and_recomputes_without_them(client, rated_study):
    study, _ = rated_study
    admin = UserFactory(is_staff=True)
    client.force_login(admin)
    response = client.post(
        url(study), {"rater": "R-02", "action": "exclude", "reason": "Failed gold items twice"}
    )
    assert response.status_code == 302
    membership = Membership.objects.get(study=study, pseudonym="R-02")
    assert membership.status == Membership.Status.EXCLUDED
    event = StudyEvent.objects.get(study=study, kind="rater_excluded")
    assert (event.actor, event.membership, event.reason) == (
        admin, membership, "Failed gold items twice"
    )  # fmt: skip
    result = StudyAgreement.objects.get(study=study).result
    assert result["raters"] == ["R-01", "R-03"]
    assert result["left_out"]["excluded_rater_ratings"] == 6
    assert "Failed gold items twice" in client.get(url(study)).text


def test_a_decision_without_a_reason_changes_nothing(client, rated_study):
    study, _ = rated_study
    client.force_login(UserFactory(is_staff=True))
    response = client.post(url(study), {"rater": "R-01", "action": "pause", "reason": "  "})
    assert response.status_code == 400
    assert "Give the reason" in response.text
    assert Membership.objects.get(study=study, pseudonym="R-01").status == "active"
    assert not StudyEvent.objects.filter(study=study, kind="rater_paused").exists()


def test_a_nul_character_in_a_decision_is_refused_and_changes_nothing(client, rated_study):
    study, _ = rated_study
    client.force_login(UserFactory(is_staff=True))
    events = StudyEvent.objects.count()
    response = client.post(url(study), {"rater": "R-01", "action": "pause", "reason": "slow\x00"})
    assert response.status_code == 400 and "NUL character" in response.text
    assert (
        client.post(url(study), {"rater": "R-\x0001", "action": "pause", "reason": "x"}).status_code
        == 404
    )
    assert Membership.objects.get(study=study, pseudonym="R-01").status == "active"
    assert StudyEvent.objects.count() == events


def test_a_paused_rater_cannot_submit(rated_study):
    from annotation.services import RatingClosedError
    from studies.services import rater_status_change

    study, _ = rated_study
    membership = Membership.objects.get(study=study, pseudonym="R-03")
    rater_status_change(
        membership=membership, action="retrain", reason="Calibration call", actor=study.lead
    )
    with pytest.raises(RatingClosedError):
        rating_submit(
            assignment=membership.assignments.first(),
            payload=full_marks_payload(),
            any_version=True,
        )


def test_decisions_about_raters_appear_in_the_studys_history(client, rated_study):
    from studies.services import rater_status_change

    study, _ = rated_study
    admin = UserFactory(is_staff=True)
    membership = Membership.objects.get(study=study, pseudonym="R-02")
    rater_status_change(membership=membership, action="exclude", reason="Careless", actor=admin)
    rater_status_change(membership=membership, action="reinstate", reason="Retrained", actor=admin)
    client.force_login(study.lead)
    page = client.get(reverse("studies:edit", args=[study.slug])).text
    assert "R-02: excluded from the analysis (Careless)" in page
    assert "R-02: reinstated (Retrained)" in page


def _action_options(page: str, pseudonym: str) -> list[str]:
    """The option values of a rater's Action menu, in order."""
    import re

    select = re.search(rf'<select[^>]*id="action-{pseudonym}"[^>]*>(.*?)</select>', page, re.S)
    assert select, f"no Action menu for {pseudonym}"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def test_the_action_menu_has_no_default_and_offers_only_what_changes_something(client, rated_study):
    study, _ = rated_study
    client.force_login(UserFactory(is_staff=True))
    page = client.get(url(study)).text
    # A placeholder first, selected: nothing destructive is pre-selected.
    assert _action_options(page, "R-01")[0] == ""
    assert 'value="" selected disabled>Choose an action' in page
    assert "pause" in _action_options(page, "R-01")
    assert "reinstate" not in _action_options(page, "R-01")
    paused = client.post(url(study), {"rater": "R-01", "action": "pause", "reason": "Too fast"})
    assert paused.status_code == 302
    options = _action_options(client.get(url(study)).text, "R-01")
    assert "reinstate" in options and "pause" not in options
    # The menu's rule is the service's rule: pausing again is refused and changes nothing.
    again = client.post(url(study), {"rater": "R-01", "action": "pause", "reason": "Again"})
    assert again.status_code == 400 and "already paused" in again.text
    assert StudyEvent.objects.filter(study=study, kind="rater_paused").count() == 1
    # Submitting the placeholder changes nothing either.
    empty = client.post(url(study), {"rater": "R-02", "action": "", "reason": "x"})
    assert empty.status_code == 400 and "Choose an action" in empty.text
    assert Membership.objects.get(study=study, pseudonym="R-02").status == "active"


def test_the_evidence_charts_have_labelled_axes(client, rated_study):
    study, _ = rated_study
    client.force_login(UserFactory(is_staff=True))
    page = client.get(url(study)).text
    chart = page[page.index("data-time-chart") :]
    chart = chart[: chart.index("</svg>")]
    # A readable height, a count axis and a count above each non-empty bar.
    assert 'height="140"' in chart
    assert 'text-anchor="end"' in chart and ">3</text>" in chart


def test_the_gold_chart_has_a_percentage_axis():
    from agreement.report.charts import accuracy_chart

    chart = accuracy_chart([1.0, 0.5, 2 / 3, 0.75], threshold=0.8)
    assert [tick["label"] for tick in chart["y_ticks"]] == ["0%", "50%", "100%"]
    zero, half, full = (tick["y"] for tick in chart["y_ticks"])
    assert zero == chart["bottom"] and full == chart["top"] and zero > half > full
    assert [tick["label"] for tick in chart["x_ticks"]] == [1, 2, 3, 4]
    assert chart["threshold_y"] == round(chart["top"] + 0.2 * (chart["bottom"] - chart["top"]), 1)

"""Study lifecycle: creation, settings, status changes, and what freezes when."""

from decimal import Decimal

import pytest

from annotation.services import draft_save
from studies import selectors, services
from studies.blinding import blinding_key
from studies.models import Response, Study, StudyEvent
from studies.services import StudySetupError

from ..factories import UserFactory, make_study


def kinds(study) -> list[str]:
    return list(study.events.order_by("created_at", "pk").values_list("kind", flat=True))


@pytest.fixture
def draft(lead):
    return make_study(lead=lead, slug="draft", cases=3, status=Study.Status.DRAFT)


@pytest.fixture
def started_pilot(lead, rater):
    """A pilot in which a rater has saved a draft: what raters see is fixed from here."""
    study = make_study(lead=lead, slug="pilot", cases=3, raters=[rater], status=Study.Status.PILOT)
    assignment = study.memberships.get(user=rater).assignments.first()
    draft_save(assignment=assignment, payload={}, expected_version=0)
    return study


# --- Creation ---------------------------------------------------------------------------


def test_a_new_study_is_a_draft_with_its_own_rubric_and_a_recorded_creation(lead):
    one = services.study_create(slug="one", name="One", lead=lead, actor=lead)
    two = services.study_create(slug="two", name="Two", lead=lead, actor=lead)
    assert one.status == Study.Status.DRAFT
    assert one.rubric_id != two.rubric_id
    assert one.success_min_dimensions == 3  # alpha >= 0.70 on 3 of the 5 dimensions
    event = StudyEvent.objects.get(study=one, kind="created")
    assert event.actor == lead and event.detail["rubric_preset"] == "reference"


def test_the_success_criterion_fits_a_small_rubric(lead):
    study = services.study_create(slug="pw", name="PW", lead=lead, rubric_preset="pairwise")
    assert study.success_min_dimensions == 1


def test_a_slug_is_used_once(lead):
    services.study_create(slug="same", name="A", lead=lead)
    with pytest.raises(StudySetupError, match="already exists"):
        services.study_create(slug="same", name="B", lead=lead)


# --- Status changes ---------------------------------------------------------------------


def test_draft_pilot_open_closed_and_reopened(draft, lead):
    services.study_pilot_start(study=draft, actor=lead)
    opened = services.study_open(study=draft, actor=lead)
    assert opened.status == Study.Status.OPEN and opened.opened_at is not None
    closed = services.study_close(study=draft, actor=lead)
    assert closed.status == Study.Status.CLOSED and closed.closed_at is not None
    reopened = services.study_reopen(study=draft, actor=lead)
    assert reopened.status == Study.Status.OPEN and reopened.closed_at is None
    assert kinds(draft)[-4:] == ["pilot_started", "opened", "closed", "reopened"]
    assert all(e.actor == lead for e in draft.events.exclude(kind="created"))


def test_a_draft_can_open_without_a_pilot(draft, lead):
    services.study_open(study=draft, actor=lead)
    event = StudyEvent.objects.get(study=draft, kind="opened")
    assert event.detail["previous_status"] == "draft"


@pytest.mark.parametrize(
    ("status", "service", "message"),
    [
        (Study.Status.OPEN, services.study_open, "cannot be opened"),
        (Study.Status.OPEN, services.study_pilot_start, "cannot start a pilot"),
        (Study.Status.PILOT, services.study_pilot_start, "cannot start a pilot"),
        (Study.Status.DRAFT, services.study_close, "cannot be closed"),
        (Study.Status.OPEN, services.study_reopen, "cannot be reopened"),
        (Study.Status.UNBLINDED, services.study_reopen, "cannot be reopened"),
        (Study.Status.CLOSED, services.study_open, "cannot be opened"),
    ],
)
def test_impossible_status_changes_are_refused(lead, status, service, message):
    study = make_study(lead=lead, slug="s", cases=1, status=status)
    with pytest.raises(StudySetupError, match=message):
        service(study=study, actor=lead)
    study.refresh_from_db()
    assert study.status == status


def test_a_study_without_test_cases_cannot_open(lead):
    study = services.study_create(slug="empty", name="Empty", lead=lead)
    with pytest.raises(StudySetupError, match="Import the test cases first"):
        services.study_open(study=study, actor=lead)
    with pytest.raises(StudySetupError, match="Import the test cases first"):
        services.study_pilot_start(study=study, actor=lead)


def test_a_pairwise_preference_needs_exactly_two_responses_per_case(lead):
    study = make_study(lead=lead, slug="three", cases=1, status=Study.Status.DRAFT,
                       systems=("a", "b", "c"))  # fmt: skip
    services.rubric_replace_with_preset(study=study, actor=lead, preset="pairwise")
    with pytest.raises(StudySetupError, match="compares two responses, but 1 test case"):
        services.study_open(study=study, actor=lead)


def test_the_success_criterion_cannot_ask_for_more_dimensions_than_the_rubric_has(draft, lead):
    services.study_update(study=draft, actor=lead, changes={"success_min_dimensions": 6})
    with pytest.raises(StudySetupError, match="on 6 dimensions, but the rubric has 5"):
        services.study_open(study=draft, actor=lead)


def test_opening_asks_to_confirm_the_blinding_warnings(draft, lead):
    Response.objects.filter(test_case__study=draft).update(text="As an AI developed by OpenAI...")
    services.identity_mentions_rescan(study=draft)
    with pytest.raises(StudySetupError, match="blinding check found 6 responses"):
        services.study_open(study=draft, actor=lead)
    draft.refresh_from_db()
    assert draft.status == Study.Status.DRAFT and not draft.protocol_fingerprint
    services.study_open(study=draft, actor=lead, acknowledge_warnings=True)
    event = StudyEvent.objects.get(study=draft, kind="opened")
    # Two passages in each of the six responses: "As an AI" and "OpenAI".
    assert event.detail["blinding_warnings_acknowledged"] == 12


def test_opening_stores_the_fingerprint_of_the_protocol(draft, lead):
    expected = selectors.study_protocol_fingerprint(study=draft)
    opened = services.study_open(study=draft, actor=lead)
    assert opened.protocol_fingerprint == expected
    assert len(expected) == 64
    event = StudyEvent.objects.get(study=draft, kind="opened")
    assert event.detail["fingerprint"] == expected


def test_reopening_checks_the_protocol_still_matches_its_fingerprint(draft, lead):
    services.study_open(study=draft, actor=lead)
    services.study_close(study=draft, actor=lead)
    Response.objects.filter(test_case__study=draft).update(text="Tampered with.")
    with pytest.raises(StudySetupError, match="no longer matches the fingerprint"):
        services.study_reopen(study=draft, actor=lead)


# --- What can change, and when ----------------------------------------------------------

PROTOCOL_CHANGES = [
    {"instructions": "New instructions"},
    {"blinding_seed": 7},
    {"side_mode": "balanced"},
    {"raters_per_item": 2},
    {"success_alpha": Decimal("0.800")},
    {"success_min_dimensions": 2},
]


def rubric_and_case_changes(study, lead):
    return [
        lambda: services.dimension_save(
            study=study,
            actor=lead,
            key="depth",
            new_key="depth",
            name="Depth",
            kind="checklist",
            config={"criteria": [{"label": "Deep?"}]},
            level="ordinal",
        ),  # fmt: skip
        lambda: services.dimension_delete(study=study, actor=lead, key="depth"),
        lambda: services.dimension_move(study=study, actor=lead, key="depth", offset=1),
        lambda: services.rubric_replace_with_preset(study=study, actor=lead, preset="likert"),
        lambda: services.test_cases_remove_all(study=study, actor=lead),
    ]


@pytest.mark.parametrize("status", [Study.Status.OPEN, Study.Status.CLOSED, Study.Status.UNBLINDED])
@pytest.mark.parametrize("change", PROTOCOL_CHANGES)
def test_protocol_settings_are_frozen_once_open(lead, status, change):
    study = make_study(lead=lead, slug="frozen", cases=2, status=status)
    with pytest.raises(StudySetupError, match="frozen"):
        services.study_update(study=study, actor=lead, changes=change)
    study.refresh_from_db()
    field, value = next(iter(change.items()))
    assert getattr(study, field) != value


@pytest.mark.parametrize("change", PROTOCOL_CHANGES)
def test_protocol_settings_are_frozen_once_rating_has_started(started_pilot, lead, change):
    with pytest.raises(StudySetupError, match="Raters have started rating"):
        services.study_update(study=started_pilot, actor=lead, changes=change)


def test_the_rubric_and_test_cases_are_frozen_once_open(lead):
    study = make_study(lead=lead, slug="frozen", cases=2, status=Study.Status.OPEN)
    fingerprint = selectors.study_protocol_fingerprint(study=study)
    for change in rubric_and_case_changes(study, lead):
        with pytest.raises(StudySetupError, match="frozen"):
            change()
    assert selectors.study_protocol_fingerprint(study=study) == fingerprint


def test_the_rubric_and_test_cases_are_frozen_once_rating_has_started(started_pilot, lead):
    fingerprint = selectors.study_protocol_fingerprint(study=started_pilot)
    for change in rubric_and_case_changes(started_pilot, lead):
        with pytest.raises(StudySetupError, match="Raters have started rating"):
            change()
    assert selectors.study_protocol_fingerprint(study=started_pilot) == fingerprint


def test_everything_can_change_in_a_pilot_nobody_has_started(lead, rater):
    study = make_study(lead=lead, slug="quiet", cases=2, raters=[rater], status=Study.Status.PILOT)
    services.study_update(study=study, actor=lead, changes={"instructions": "Read carefully."})
    services.dimension_delete(study=study, actor=lead, key="depth")
    assert study.rubric.dimensions.count() == 4


def test_the_level_of_measurement_can_change_until_the_study_opens(started_pilot, lead):
    dimension = services.dimension_level_set(
        study=started_pilot, actor=lead, key="depth", level="interval"
    )
    assert dimension.level == "interval"
    services.study_open(study=started_pilot, actor=lead)
    with pytest.raises(StudySetupError, match="frozen protocol once the study opens"):
        services.dimension_level_set(study=started_pilot, actor=lead, key="depth", level="ratio")


@pytest.mark.parametrize("status", [Study.Status.OPEN, Study.Status.UNBLINDED])
def test_name_description_and_consent_can_change_at_any_time(lead, status):
    study = make_study(lead=lead, slug="any", cases=1, status=status)
    updated = services.study_update(
        study=study,
        actor=lead,
        changes={"name": "Renamed", "description": "New", "consent_text": "Amended consent"},
    )
    assert (updated.name, updated.description) == ("Renamed", "New")
    assert updated.consent_version == 2
    event = StudyEvent.objects.get(study=study, kind="settings_changed")
    assert event.detail == {"fields": ["consent_text", "description", "name"],
                            "consent_version": 2}  # fmt: skip


def test_the_consent_version_rises_only_when_the_text_changes(draft, lead):
    services.study_update(study=draft, actor=lead, changes={"consent_text": "v2"})
    services.study_update(study=draft, actor=lead, changes={"consent_text": "v2"})
    services.study_update(study=draft, actor=lead, changes={"name": "Other"})
    draft.refresh_from_db()
    assert draft.consent_version == 2


def test_a_new_seed_reblinds_every_test_case(draft, lead):
    case_ids = list(draft.test_cases.values_list("case_id", flat=True))
    for seed in (7, 2026):
        services.study_update(study=draft, actor=lead, changes={"blinding_seed": seed})
        key = {
            case.case_id: {row.label: row.response.system.name for row in case.labels.all()}
            for case in draft.test_cases.prefetch_related("labels__response__system")
        }
        assert key == blinding_key(
            seed=seed,
            secret=draft.blinding_secret,
            case_ids=case_ids,
            systems=["baseline", "improved"],
        )


def test_seed_and_sides_are_fixed_once_raters_have_their_cases(lead, rater):
    study = make_study(lead=lead, slug="assigned", cases=2, raters=[rater],
                       status=Study.Status.DRAFT)  # fmt: skip
    for change in ({"blinding_seed": 1}, {"side_mode": "balanced"}):
        with pytest.raises(StudySetupError, match="Raters already have their cases"):
            services.study_update(study=study, actor=lead, changes=change)
    services.study_update(study=study, actor=lead, changes={"raters_per_item": 2})


def test_unknown_settings_are_a_programming_error(draft, lead):
    with pytest.raises(ValueError, match="Not a study setting: status"):
        services.study_update(study=draft, actor=lead, changes={"status": "open"})


# --- Access -------------------------------------------------------------------------------


def test_coordinators_and_staff_may_create_studies(db):
    from django.contrib.auth.models import AnonymousUser, Group

    from studies.access import can_create_studies

    member = UserFactory()
    member.groups.add(Group.objects.create(name="Coordinators"))
    assert can_create_studies(member)
    assert can_create_studies(UserFactory(is_staff=True))
    assert not can_create_studies(UserFactory())
    assert not can_create_studies(AnonymousUser())


# --- The transition table -----------------------------------------------------------------


@pytest.mark.parametrize("name", list(services.TRANSITIONS))
@pytest.mark.parametrize("status", Study.Status.values)
def test_each_status_change_is_made_exactly_from_the_statuses_in_the_table(lead, name, status):
    study = make_study(lead=lead, slug="table", cases=2, status=status)
    if status in (Study.Status.OPEN, Study.Status.CLOSED, Study.Status.UNBLINDED):
        study.protocol_fingerprint = selectors.study_protocol_fingerprint(study=study)
        study.save(update_fields=["protocol_fingerprint"])
    transition = services.TRANSITIONS[name]
    kwargs = {"acknowledge_warnings": True} if name == "open" else {}
    if status in transition.sources:
        changed = transition.service(study=study, actor=lead, **kwargs)
        assert changed.status == transition.target
    else:
        with pytest.raises(StudySetupError, match="cannot"):
            transition.service(study=study, actor=lead, **kwargs)
        study.refresh_from_db()
        assert study.status == status


def test_the_settings_page_offers_the_changes_the_table_allows(client, lead):
    from django.urls import reverse

    study = make_study(lead=lead, slug="offers", cases=2, status=Study.Status.DRAFT)
    client.force_login(lead)
    page = client.get(reverse("studies:edit", args=[study.slug])).text
    offered = {name for name in services.TRANSITIONS if f"/status/{name}/" in page}
    assert offered == {"pilot", "open"}

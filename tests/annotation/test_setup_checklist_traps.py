"""The set-up checklist and the Open page point out the traps of a study's set-up: quality
items the rates give nobody, adjudication rules that leave an invited adjudicator idle,
pay recorded but not yet checked, and the qualification test."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.services import training
from studies.models import Membership, Study
from studies.selectors import study_setup_checklist
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add
from studies.services.adjudication_rules import adjudication_rules_set
from studies.services.invitations import invitation_create
from studies.services.quality import attention_check_create, quality_settings_update
from studies.services.welfare import welfare_settings_update
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_cases

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft():
    lead = UserFactory()
    study = study_create(slug="traps", name="Traps", lead=lead)
    cases_add(study=study, systems=["baseline", "improved"], cases=make_cases(20))
    membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    return study


def _item(study, title):
    return next(i for i in study_setup_checklist(study=study).items if i.title == title)


def _open_page(client, study):
    client.force_login(study.lead)
    page = client.get(reverse("studies:status", args=[study.slug, "open"]))
    assert page.status_code == 200
    return page.content.decode()


def test_an_attention_check_the_rate_gives_nobody_is_pointed_out_before_open(client, draft):
    attention_check_create(study=draft, case_id="TC-900", prompt="Check", text="", actor=draft.lead)
    item = _item(draft, "Quality items")
    # One per 50 items with 20 items per rater rounds to none: done, but not silent.
    assert item.done
    assert "Each rater will see 0 gold items and 0 attention checks among all 20" in item.detail
    assert "No rater will see the 1 attention check" in item.warning
    page = _open_page(client, draft)
    assert 'id="open-warnings"' in page and "No rater will see the 1 attention check" in page
    # At one per five items every rater sees it, and the warning goes.
    quality_settings_update(study=draft, values={"attention_every": 5}, actor=draft.lead)
    item = _item(draft, "Quality items")
    assert not item.warning and "1 attention check among" in item.detail
    assert 'id="open-warnings"' not in _open_page(client, draft)


def test_an_invited_adjudicator_with_every_rule_never_is_warned_of_before_open(client, draft):
    assert not _item(draft, "Adjudication rules").warning  # nobody to leave idle
    invitation_create(study=draft, created_by=draft.lead, role=Membership.Role.ADJUDICATOR)
    item = _item(draft, "Adjudication rules")
    assert not item.done and 'every adjudication rule is "Never"' in item.warning
    assert "every adjudication rule is &quot;Never&quot;" in _open_page(client, draft)
    adjudication_rules_set(
        study=draft,
        actor=draft.lead,
        rules=[{"dimension": "depth", "trigger": "disagreement", "tolerance": 1}],
    )
    item = _item(draft, "Adjudication rules")
    assert item.done and not item.warning and "Depth" in item.detail


def test_pay_once_recorded_is_not_missing(client, draft):
    assert not _item(draft, "Rater pay").done
    welfare_settings_update(
        study=draft,
        actor=draft.lead,
        values={
            "pay_basis": "case",
            "pay_amount": Decimal("2.00"),
            "pay_currency": "EUR",
            "minimum_hourly": Decimal("12.00"),
        },
    )
    item = _item(draft, "Rater pay")
    assert item.done and "2.00 EUR per case" in item.detail
    assert "Run the pilot" in item.detail
    client.force_login(draft.lead)
    overview = client.get(reverse("annotation:overview", args=[draft.slug])).content.decode()
    pay = overview[overview.index('data-item="annotation:welfare"') :]
    assert pay[: pay.index("</li>")].count("Missing") == 0


def test_the_qualification_test_is_counted_on_the_checklist(draft):
    Study.objects.filter(pk=draft.pk).update(consent_text="You agree.")
    draft.refresh_from_db()
    item = training.training_item_save(
        study=draft, kind="qualification", title="q", prompt="p", responses=["a", "b"]
    )
    training.training_item_key_save(item=item, payload=full_marks_payload())
    detail = _item(draft, "Consent and training").detail
    assert "1 qualification item" in detail

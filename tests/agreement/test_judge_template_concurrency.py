"""A judge template saved under one name from two tabs at once: one is saved, the other is
told the name is taken, as when the two saves come one after the other (never a server
error). Real threads on PostgreSQL."""

import pytest
from django.db import connection

from agreement.judges.verdicts import REFERENCE_TEMPLATE
from agreement.models import JudgeTemplate
from agreement.services import judge_template_save
from agreement.services.judges import JudgeTemplateError

from ..annotation.test_locks import together
from ..factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database with row locks and concurrent connections")


def test_one_name_saved_from_two_tabs_at_once_is_one_template_and_one_clear_refusal():
    study = make_study(cases=2)

    def save():
        return judge_template_save(
            study=study, name="strict", text=REFERENCE_TEMPLATE, actor=study.lead
        )

    runs = together(save, save)
    errors = [run.error for run in runs if run.error is not None]
    assert len(errors) == 1, [run.error for run in runs]
    assert isinstance(errors[0], JudgeTemplateError), repr(errors[0])
    assert "already has a template named 'strict'" in str(errors[0])
    assert JudgeTemplate.objects.filter(study=study, name="strict").count() == 1

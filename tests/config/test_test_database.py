"""Between two transactional tests the database is emptied (tests/conftest.py empties it
with DELETE rather than TRUNCATE): a test that leaves rows in any table, linked to others by
foreign keys, leaves nothing behind for the next."""

import pytest
from django.core.management import call_command
from django.db import connection

from ..factories import UserFactory, make_study

# What the flush's post_migrate signal writes again at once.
REFILLED = {"django_content_type", "auth_permission"}


def rows_per_table() -> dict[str, int]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        counts = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")  # noqa: S608 - our own table names
            counts[table] = cursor.fetchone()[0]
    return counts


@pytest.mark.django_db(transaction=True)
def test_the_flush_between_transactional_tests_empties_every_table():
    rater = UserFactory()
    make_study(cases=3, raters=[rater], consented=True)
    filled = {table for table, count in rows_per_table().items() if count}
    # Rows in tables that refer to one another across the three apps.
    assert {"studies_study", "studies_testcase", "studies_membership", "auth_user"} <= filled

    # As Django's TransactionTestCase empties it after each test.
    call_command("flush", interactive=False, verbosity=0, reset_sequences=False)

    assert {table for table, count in rows_per_table().items() if count} <= REFILLED

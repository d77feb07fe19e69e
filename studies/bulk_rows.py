"""Inserting many new rows fast: COPY on PostgreSQL, ``bulk_create`` elsewhere.

Django's ``bulk_create`` builds a model instance and quotes every value in Python, which
was most of a large case import's time. On PostgreSQL the ids are taken from the table's
sequence in one query and the rows are streamed with COPY; the rows are the same either
way (every concrete field, defaults filled in as the model fills them).
"""

import json
from collections.abc import Sequence
from enum import Enum

from django.db import connection, transaction
from django.db.models import DateTimeField, JSONField, Model
from django.utils import timezone


def rows_insert(model: type[Model], rows: Sequence[dict]) -> list[int]:
    """Insert ``rows`` ({field attname: value}) into ``model``'s table; returns their ids."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        created = model.objects.bulk_create([model(**row) for row in rows])
        return [instance.pk for instance in created]
    meta = model._meta
    fields = [field for field in meta.concrete_fields if field is not meta.pk]
    names = [field.attname for field in fields]
    # Fields the rows leave out take their default: a callable's (uuid4) anew for each row.
    fixed, per_row = {}, []
    now = timezone.now()
    for field in fields:
        if field.attname not in rows[0]:
            if isinstance(field, DateTimeField) and (field.auto_now or field.auto_now_add):
                fixed[field.attname] = now  # as ``pre_save`` stamps a new row
            elif isinstance(field, JSONField) and field.get_default() is not None:
                # The same default for every row (``dict``: {}), as JSON text once: encoding
                # it for each of 30,000 assignments was a good part of their COPY.
                fixed[field.attname] = json.dumps(field.get_default(), cls=field.encoder)
            elif field.has_default() and callable(field.default):
                per_row.append(field)
            else:
                fixed[field.attname] = _plain(field.get_default())
    # JSON values go to the database through the field's own adaptation.
    json_fields = [f for f in fields if isinstance(f, JSONField) and f.attname not in fixed]
    table = connection.ops.quote_name(meta.db_table)
    columns = ", ".join(
        connection.ops.quote_name(column)
        for column in [meta.pk.column, *(f.column for f in fields)]
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(rows)],
        )
        ids = [row[0] for row in cursor.fetchall()]
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for pk, row in zip(ids, rows, strict=True):
                values = {**fixed, **row}
                for field in per_row:
                    values[field.attname] = field.default()
                for field in json_fields:
                    values[field.attname] = field.get_db_prep_save(
                        values[field.attname], connection
                    )
                copy.write_row([pk, *(values[name] for name in names)])
    return ids


def _plain(value):
    """A choice's value as the database stores it (an enum member would be sent by name)."""
    return value.value if isinstance(value, Enum) else value


def tables_analyze_on_commit(models: Sequence[type[Model]]) -> None:
    """Refresh PostgreSQL's planner statistics of these tables once the transaction commits.

    After a bulk write the planner still believes the tables' old sizes until autovacuum's
    next pass (a minute by default, never where it is off), and picks nested loops that
    cost seconds over the new rows. Nothing to do on SQLite; a failure is only logged (the
    rows are committed; autovacuum will analyse them later).
    """
    if connection.vendor != "postgresql":
        return
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)

    def analyze() -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {tables}")

    transaction.on_commit(analyze, robust=True)

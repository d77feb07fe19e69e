"""Writing many rows fast: COPY and ``UPDATE ... FROM (VALUES ...)`` on PostgreSQL,
``bulk_create`` and ``bulk_update`` elsewhere.

Django's ``bulk_create`` builds a model instance and quotes every value in Python, which
was most of a large case import's time. On PostgreSQL the ids are taken from the table's
sequence in one query and the rows are streamed with COPY; the rows are the same either
way (every concrete field, defaults filled in as the model fills them).

Django's ``bulk_update`` writes a ``CASE WHEN id = ... THEN ...`` per field with a branch
per row: building and evaluating it grows with the square of the batch, and it was two
thirds of a 10,000-case worksheet's import. ``rows_update`` joins the table to a list of
values instead, one statement per batch.
"""

import json
import os
import uuid
from collections.abc import Iterable, Iterator, Sequence
from enum import Enum
from itertools import islice

from django.db import connection, transaction
from django.db.models import DateTimeField, Field, JSONField, Model
from django.utils import timezone


def batches(rows: Iterable, size: int) -> Iterator[list]:
    """``rows`` in lists of ``size`` (the last one shorter), read as they are needed: a
    large read goes a batch at a time, each with what it needs read for it at once."""
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def rows_insert(model: type[Model], rows: Sequence[dict]) -> list[int]:
    """Insert ``rows`` ({field attname: value}, the same fields in each) into ``model``'s
    table; returns their ids."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        created = model.objects.bulk_create([model(**row) for row in rows])
        return [instance.pk for instance in created]
    meta = model._meta
    fields = [field for field in meta.concrete_fields if field is not meta.pk]
    given = [field for field in fields if field.attname in rows[0]]
    # Fields the rows leave out take their default: a callable's (uuid4) anew for each row.
    fixed, per_row = {}, []
    now = timezone.now()
    for field in fields:
        if field in given:
            continue
        if isinstance(field, DateTimeField) and (field.auto_now or field.auto_now_add):
            fixed[field] = now  # as ``pre_save`` stamps a new row
        elif isinstance(field, JSONField) and field.get_default() is not None:
            # The same default for every row (``dict``: {}), as JSON text once: encoding
            # it for each of 30,000 assignments was a good part of their COPY.
            fixed[field] = json.dumps(field.get_default(), cls=field.encoder)
        elif field.has_default() and callable(field.default):
            per_row.append(field)
        else:
            fixed[field] = _plain(field.get_default())
    # A row's values go in this order: its own, the fixed ones, then the fresh defaults.
    table = connection.ops.quote_name(meta.db_table)
    columns = ", ".join(
        connection.ops.quote_name(field.column) for field in [meta.pk, *given, *fixed, *per_row]
    )
    names = [field.attname for field in given]
    # JSON values go to the database through the field's own adaptation.
    json_fields = [(i, f) for i, f in enumerate(given) if isinstance(f, JSONField)]
    fixed_values = tuple(fixed.values())
    fresh = [islice(_fresh_defaults(field), len(rows)) for field in per_row]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(rows)],
        )
        ids = [row[0] for row in cursor.fetchall()]
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for pk, row, *defaults in zip(ids, rows, *fresh, strict=True):
                values = [row[name] for name in names]
                for index, field in json_fields:
                    values[index] = field.get_db_prep_save(values[index], connection)
                copy.write_row((pk, *values, *fixed_values, *defaults))
    return ids


# Rows per ``UPDATE ... FROM (VALUES ...)`` statement: well under PostgreSQL's 65,535
# parameters for a dozen fields.
UPDATE_BATCH = 1000


def rows_update(model: type[Model], objects: Sequence[Model], fields: Sequence[str]) -> None:
    """Write ``fields`` (names) of ``objects``, saved instances of ``model``, as they are in
    memory (``auto_now`` is not stamped): what ``bulk_update`` does, without its ``CASE``."""
    if not objects:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_update(objects, fields, batch_size=UPDATE_BATCH)
        return
    meta = model._meta
    targets = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    # Each value cast to its column's type: a VALUES list has no types of its own.
    casts = [f"%s::{meta.pk.db_type(connection)}"] + [
        f"%s::{field.db_type(connection)}" for field in targets
    ]
    row_sql = "(" + ", ".join(casts) + ")"
    names = ", ".join(["pk", *(f"f{i}" for i in range(len(targets)))])
    assignments = ", ".join(f"{quote(field.column)} = v.f{i}" for i, field in enumerate(targets))
    with connection.cursor() as cursor:
        for batch in batches(objects, UPDATE_BATCH):
            params: list = []
            for instance in batch:
                params.append(instance.pk)
                for field in targets:
                    value = getattr(instance, field.attname)
                    params.append(field.get_db_prep_save(value, connection))
            # Only the model's own quoted names go into the text; every value is a parameter.
            values = ", ".join([row_sql] * len(batch))
            sql = f"UPDATE {table} SET {assignments} FROM (VALUES {values}) AS v({names}) "  # noqa: S608
            cursor.execute(sql + f"WHERE {table}.{quote(meta.pk.column)} = v.pk", params)


# ``uuid.uuid4`` in bulk: random bytes with the version (4) and variant bits set, as it sets
# them; a row's uuid cost more than the rest of its COPY when made one at a time.
_UUID_VERSION_4 = bytes((byte & 0x0F) | 0x40 for byte in range(256))
_UUID_VARIANT = bytes((byte & 0x3F) | 0x80 for byte in range(256))
UUID_CHUNK = 1024


def _uuid4_texts() -> Iterator[str]:
    """Random (version 4) UUIDs as 32 hex digits, made a thousand at a time, without end."""
    while True:
        raw = bytearray(os.urandom(16 * UUID_CHUNK))
        raw[6::16] = raw[6::16].translate(_UUID_VERSION_4)
        raw[8::16] = raw[8::16].translate(_UUID_VARIANT)
        digits = raw.hex()
        for start in range(0, len(digits), 32):
            yield digits[start : start + 32]


def _fresh_defaults(field: Field) -> Iterator:
    """A field's callable default, called anew for each row, without end."""
    if field.default is uuid.uuid4:
        return _uuid4_texts()
    return iter(field.default, object())


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

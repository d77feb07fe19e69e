"""Row locks: the one order every write takes them in, and the two strengths of each.

**The lock order.** A write that locks more than one kind of row takes them in this order,
skipping the kinds it does not need and never going back up:

    user -> invitation -> study -> membership -> participant -> test case -> assignment
    -> exposure day -> adjudication

(Only an identity erasure locks a user row: ``user_lock``. A participant link's row is
locked after its study, by the lead's changes to it.)

Rows of one kind are locked in id order (e.g. a worksheet's assignments; a rater's exposure
days, written by an upsert, in day order). Two writes that
follow the order cannot wait for each other in a circle, so they cannot deadlock.

**Only the row named is locked.** ``select_for_update()`` on a query that joins other
tables (``select_related``) locks the joined rows too in PostgreSQL, so every helper here
locks ``of=("self",)``.

**Two strengths.**

- *shared* (``FOR SHARE``): "this row must not change until I commit". Any number of
  writers hold it at once: every rater's autosave and submit holds the study and their
  membership shared, and so does a worksheet import for the study, so raters never wait
  for each other or for an import.
- *exclusive* (``FOR NO KEY UPDATE``): "I change this row". It waits for the shared
  holders, and they wait for it. A status change of the study (closing it) or of a rater
  (pausing, withdrawing) holds it, so it cannot slip between a rating write's check of
  the status and that write's commit: the write either commits before the change, or
  waits for it and then reads the new status.

SQLite has no row locks; it lets one transaction write at a time, which serialises these
writes just the same, so there the helpers only read the row.
"""

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Model

from studies.models import Membership, Study


def _shared(model: type[Model], pk: int):
    if connection.vendor != "postgresql":
        return model.objects.get(pk=pk)
    # Django's ORM has no FOR SHARE; the table and column names come from the model.
    table = connection.ops.quote_name(model._meta.db_table)
    column = connection.ops.quote_name(model._meta.pk.column)
    query = f"SELECT * FROM {table} WHERE {column} = %s FOR SHARE"  # noqa: S608
    rows = list(model.objects.raw(query, [pk]))
    if not rows:
        raise model.DoesNotExist(f"No {model.__name__} with id {pk}.")
    return rows[0]


def _exclusive(model: type[Model], pk: int):
    return model.objects.select_for_update(of=("self",), no_key=True).get(pk=pk)


def study_lock(study_id: int, *, exclusive: bool = False) -> Study:
    """The study row, locked shared (a rating write, an import) or exclusively (a change)."""
    return _exclusive(Study, study_id) if exclusive else _shared(Study, study_id)


def membership_lock(membership_id: int, *, exclusive: bool = False) -> Membership:
    """A membership row, locked shared (a rating write) or exclusively (a status change)."""
    return (
        _exclusive(Membership, membership_id) if exclusive else _shared(Membership, membership_id)
    )


def user_lock(user_id: int):
    """An account row, locked exclusively: one erasure of a person at a time."""
    return _exclusive(get_user_model(), user_id)

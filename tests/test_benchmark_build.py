"""The recompute benchmark's study (benchmarks/recompute.py) copies a few answers made by
``rating_submit`` to every other assignment in SQL: the copy must store what the service
stores, or its figures are of data the app never writes. The check writes a small study
both ways and compares every stored answer, rating, point figure and tally."""

import pytest
from django.db import connection

from benchmarks import recompute


@pytest.mark.django_db
def test_the_benchmark_copy_stores_what_the_rating_service_stores():
    if connection.vendor != "postgresql":
        pytest.skip("the copy is PostgreSQL's SQL")
    recompute.build_check(ratings=180)

"""Excluding a run and pruning old rows: the only rewrites of a history store, on a folder and on
a table."""

from __future__ import annotations

import datetime as dt

import pytest

from cola_core import Cola, ColaError
from cola_core.history.retention import exclude_run, prune_history
from cola_core.history.store import RunInfo
from cola_helpers import HISTORY_RULES, history_day

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_prune_deletes_what_is_older_than_the_duration(spark, monitored_store):
    # The store's days are March 1st and 2nd, 2026: a duration reaching a day before them keeps all.
    reach = (dt.datetime.now(dt.timezone.utc) - history_day(1)).days + 2
    assert prune_history(spark, monitored_store, f"{reach}d") == 0
    assert prune_history(spark, monitored_store, "1d") == 6
    assert spark.read.parquet(monitored_store).count() == 0
    with pytest.raises(ColaError, match=r"^--older-than must be a duration such as 90d, 12h or 3600s, got '5%'$"):
        prune_history(spark, monitored_store, "5%")


def test_exclude_and_prune_rewrite_a_table_store(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_history_rewrite")
    store = {"table": "cola_history_rewrite"}
    long_ago = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    try:
        Cola().run(people, HISTORY_RULES[:2], history=store,
                   run_info=RunInfo(dataset="p", run_id="a", validated_at=long_ago))
        Cola().run(people, HISTORY_RULES[:2], history=store, run_info=RunInfo(dataset="p", run_id="b"))
        assert exclude_run(spark, store, "a") == 2
        assert sorted((r.run_id, r.excluded) for r in spark.table("cola_history_rewrite").collect()) == [
            ("a", True), ("a", True), ("b", False), ("b", False),
        ]
        assert prune_history(spark, store, "30d") == 2
        assert sorted(r.run_id for r in spark.table("cola_history_rewrite").collect()) == ["b", "b"]
        # Nothing but the store is left in the catalog: no staging or previous table.
        names = [t.name for t in spark.catalog.listTables() if t.name.startswith(("_cola", "cola_history_rewrite"))]
        assert names == ["cola_history_rewrite"]
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_history_rewrite")

"""Excluding a run and pruning old rows: the only rewrites of a history store.

Every run only appends (``cola_core.history.append``); these two replace the store's rows with
the ones kept, written beside it first and then swapped in. Run them when no job appends to the
store: an append meanwhile would be lost. ``cola history exclude`` and ``cola history prune``
call them.

Apart from ``cola_core.history.store`` because a rewrite has its own ways to swap each kind of
store (a managed file table by name, any other table in place, a folder by moving) that no run
uses.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cola_core.errors import ColaError, ThresholdError
from cola_core.history.store import (
    FAILED_RECORDS_SCHEMA,
    HISTORY_COLUMNS,
    HISTORY_SCHEMA,
    _add_columns,
    _load,
    _missing_columns,
    failed_records_spec,
    read_history,
)
from cola_core.language.thresholds import DURATION_SECONDS, parse_threshold
from cola_core.storage.catalog import publish_table_swap, sibling_table, table_facts
from cola_core.storage.publish import Publication, file_system, publish_folder
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec, history_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["exclude_run", "prune_history"]


def exclude_run(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, run_id: str) -> int:
    """Mark every row of ``run_id`` excluded, so that baselines skip it (the data was fixed
    after a bad load). Returns the rows marked.

    Raises:
        ColaError: the store holds no such run.
    """
    from pyspark.sql import functions as F

    spec = history_spec(store)
    rows = read_history(spark, spec)
    marked = rows.where(F.col("run_id") == F.lit(run_id)).count()
    if not marked:
        raise ColaError(f"the history store {spec.target} holds no run {run_id!r}")
    flagged = rows.withColumn("excluded", F.col("excluded") | (F.col("run_id") == F.lit(run_id)))
    _rewrite(spark, spec, flagged.select(*HISTORY_COLUMNS))
    return marked


def prune_history(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, older_than: str) -> int:
    """Delete the rows (and the failed records) validated more than ``older_than`` ago, a
    duration in the threshold language's units (``90d``, ``12h``, ``3600s``). Returns the
    history rows deleted.

    Raises:
        ColaError: ``older_than`` is not a duration.
    """
    from pyspark.sql import functions as F

    seconds = _duration_seconds(older_than)
    spec = history_spec(store)
    cutoff = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=seconds)
    recent = F.col("validated_at") >= F.lit(cutoff)
    deleted = 0
    for target, schema in ((spec, HISTORY_SCHEMA), (failed_records_spec(spec), FAILED_RECORDS_SCHEMA)):
        rows = _load(spark, target, schema)
        if rows is None:
            continue
        old = rows.where(~recent).count()
        if target is spec:
            deleted = old
        if old:
            _rewrite(spark, target, rows.where(recent))
    return deleted


def _duration_seconds(text: str) -> float:
    try:
        threshold = parse_threshold(f"< {text}")
    except (ThresholdError, TypeError) as error:
        raise ColaError(f"--older-than must be a duration such as 90d, 12h or 3600s, got {text!r}") from error
    bound = threshold.bounds[0]
    # More than a million years back would pass the earliest date a timestamp holds.
    if bound.suffix not in DURATION_SECONDS or not 0 < bound.value <= 1e6 * 365 * 86400:
        raise ColaError(f"--older-than must be a duration such as 90d, 12h or 3600s, got {text!r}")
    return bound.value


def _rewrite(spark: SparkSession, spec: OutputSpec, rows: DataFrame) -> None:
    """Replace the store's rows with ``rows``: written beside it first, then swapped in.
    Run it when no job appends to the store: an append meanwhile would be lost."""
    publication = Publication()
    if spec.table is not None:
        facts = table_facts(spark, spec.table)
        staged = sibling_table(spec.table, "_cola_staging")
        try:
            if facts.managed and facts.provider in ("parquet", "orc"):
                # A managed file table is swapped by name, atomically, and stays in the warehouse.
                rows.coalesce(1).write.format(facts.provider).saveAsTable(staged)
                publish_table_swap(publication, spark, staged, spec.table)
                publication.commit()
                return
            # Any other table (external, Delta, Iceberg, Hive) is written over in place, so it
            # keeps its format, location and properties; its own commit protocol decides how
            # atomic that is.
            rows.coalesce(1).write.saveAsTable(staged)
            if tuple(rows.columns) == HISTORY_COLUMNS:
                # insertInto goes by position: a table written before the added columns gets them first.
                added = _missing_columns(spark, spec, spark.table(spec.table).schema, HISTORY_SCHEMA)
                if added:
                    _add_columns(spark, spec.table, added)
            spark.table(staged).write.insertInto(spec.table, overwrite=True)
        except Exception:
            publication.rollback()
            raise
        finally:
            spark.sql(f"DROP TABLE IF EXISTS {staged}")
        return
    assert spec.path is not None
    fs = file_system(spark)
    staging = fs.sibling(spec.path, "_cola_staging")
    try:
        write_output(rows.coalesce(1), dataclasses.replace(spec, path=staging, mode="errorifexists"))
        publish_folder(publication, fs, staging, spec.path, "overwrite")
        publication.commit()
    except Exception:
        publication.rollback()
        raise
    finally:
        if fs.exists(staging):
            fs.delete(staging)

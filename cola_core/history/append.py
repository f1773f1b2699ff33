"""Appending a run's rows to the history store, and its samples to the failed-records store.

Each run appends its rows and nothing else: the rows are written to a hidden staging folder
beside the store and their files are then moved in, one rename each, so that runs appending at
the same time lose nothing (Spark's own append to one folder shares a ``_temporary`` folder
between concurrent jobs). A table store is appended to with ``saveAsTable``; one written before
the columns of ``store.ADDED_COLUMNS`` existed gets them first.

Apart from ``cola_core.history.store`` (what a row is, reading and checking a store) because it
is the one writer a run uses: the staging and the moving in, with their undo, are its own.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cola_core.common.spark_errors import first_line, is_lasting_storage_error
from cola_core.errors import ColaError, ColaOutputError
from cola_core.history.store import (
    FAILED_RECORDS_SCHEMA,
    HISTORY_SCHEMA,
    RunInfo,
    _add_columns,
    _missing_columns,
    _stored,
    check_history_store,
    failed_records_spec,
)
from cola_core.language.result import CheckResult
from cola_core.storage.publish import Publication, file_system, publish_folder
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec, history_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["append_history", "history_frame"]


def _rows(results: Sequence[CheckResult], run: RunInfo) -> list[tuple[Any, ...]]:
    # Tuples in HISTORY_SCHEMA's column order: the frame is built from that DDL text, by position.
    rows = []
    for result in results:
        metric = result.metric_value
        baseline = result.baseline
        rows.append((
            run.run_id, run.pipeline, run.dataset, result.rule_id, result.code, result.rule_type, result.check_name,
            result.dimension, result.severity, bool(result.passed), int(result.failed_count),
            None if metric is None else float(metric), None if baseline is None else float(baseline),
            result.rows_checked, run.validated_at, run.dag_id, run.task_id, run.airflow_run_id, False,
            run.data_moment, run.data_interval_start, run.data_interval_end, run.logical_date, run.map_index,
            run.run_kind,
        ))
    return rows


def _failed_records(results: Sequence[CheckResult], run: RunInfo) -> list[tuple[Any, ...]]:
    return [
        (run.run_id, run.dataset, result.rule_id, result.code, run.validated_at, json.dumps(sample, sort_keys=True))
        for result in results
        for sample in result.samples or []
    ]


def history_frame(spark: SparkSession, results: Sequence[CheckResult], run: RunInfo) -> DataFrame:
    """The history rows of one run, one per result, as the store holds them."""
    return spark.createDataFrame(_rows(results, run), HISTORY_SCHEMA)


def append_history(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, results: Sequence[CheckResult], run: RunInfo
) -> None:
    """Append one row per result (and the samples, to the failed-records store).

    Raises:
        ColaOutputError: the store is not a Cola history, or cannot be written.
    """
    spec = history_spec(store)
    records = failed_records_spec(spec)
    if spec.path is not None:
        file_system(spark).qualified(spec.path)  # over Spark Connect: a store this client can append to
    stored = _stored(spark, spec)
    added = [] if stored is None else _missing_columns(spark, spec, stored.schema, HISTORY_SCHEMA)
    samples = _failed_records(results, run)
    if samples:
        check_history_store(spark, records, FAILED_RECORDS_SCHEMA)
    if added and spec.table is not None:
        _add_columns(spark, spec.table, added)
    _append(spark, spec, history_frame(spark, results, run))
    if samples:
        _append(spark, records, spark.createDataFrame(samples, FAILED_RECORDS_SCHEMA))


def _append(spark: SparkSession, spec: OutputSpec, rows: DataFrame) -> None:
    # A handful of rows: one file per run keeps the store tidy.
    rows = rows.coalesce(1)
    if spec.table is not None:
        write_output(rows, spec)
        return
    assert spec.path is not None
    fs = file_system(spark)
    staging = fs.sibling(spec.path, "_cola_staging")
    publication = Publication()
    try:
        write_output(rows, dataclasses.replace(spec, path=staging, mode="errorifexists"))
        # The store's folder is made first, so that two first runs both append by moving files
        # (a rename onto a folder that appeared meanwhile would nest one run inside it).
        fs.make_folders(spec.path)
        publish_folder(publication, fs, staging, spec.path, "append")
        publication.commit()
    except Exception as error:
        publication.rollback()
        if isinstance(error, ColaError):
            raise
        if is_lasting_storage_error(error):
            raise ColaOutputError(f"cannot append to the history store {spec.path}: {first_line(error)}") from error
        raise
    finally:
        if fs.exists(staging):
            fs.delete(staging)

"""The history store: one row per result per run, in the user's own table or folder.

A store is an output config or a plain path (a local parquet folder by default). Each run
appends its rows and nothing else: the rows are written to a hidden staging folder beside the
store and their files are then moved in, one rename each, so that runs appending at the same
time lose nothing (Spark's own append to one folder shares a ``_temporary`` folder between
concurrent jobs). A table store is appended to with ``saveAsTable``.

With samples, the sample rows go to a companion failed-records store beside the results store
(``<path>_failed_records``, ``<table>_failed_records``), never inside it: a plain-path store
always reads back exactly one row per result.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cola_core._spark_errors import condition_of, first_line, is_lasting_storage_error
from cola_core.errors import ColaError, ColaOutputError
from cola_core.publish import FileSystem, Publication, publish_folder
from cola_core.result import CheckResult
from cola_core.specs import OutputSpec, SourceSpec, history_spec
from cola_core.storage import write_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = [
    "FAILED_RECORDS_SCHEMA",
    "HISTORY_COLUMNS",
    "HISTORY_SCHEMA",
    "RunInfo",
    "append_history",
    "check_history_store",
    "default_dataset",
    "failed_records_spec",
    "read_baselines",
    "read_history",
]

HISTORY_COLUMNS = (
    "run_id", "pipeline", "dataset", "rule_id", "code", "rule_type", "check_name", "dimension", "severity", "passed",
    "failed_count", "metric_value", "baseline", "rows_checked", "validated_at", "dag_id", "task_id", "airflow_run_id",
    "excluded",
)
HISTORY_SCHEMA = (
    "run_id string, pipeline string, dataset string, rule_id string, code string, rule_type string, "
    "check_name string, dimension string, severity string, passed boolean, failed_count bigint, "
    "metric_value double, baseline double, rows_checked bigint, validated_at timestamp, dag_id string, "
    "task_id string, airflow_run_id string, excluded boolean"
)
FAILED_RECORDS_SCHEMA = (
    "run_id string, dataset string, rule_id string, code string, validated_at timestamp, record string"
)
_FAILED_RECORDS = "_failed_records"


@dataclass(frozen=True)
class RunInfo:
    """What a run writes beside each result in the history store.

    Attributes:
        dataset: what was checked; see :func:`default_dataset`.
        pipeline: the pipeline name (as in the report).
        dag_id: from Airflow, the DAG of the task that ran the rules.
        task_id: from Airflow, that task.
        airflow_run_id: from Airflow, the DAG run's id.
        run_id: this run's own id, fresh by default; every row of one run shares it.
        validated_at: when the rules ran; now (UTC) by default.
    """

    dataset: str
    pipeline: str | None = None
    dag_id: str | None = None
    task_id: str | None = None
    airflow_run_id: str | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    validated_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))


def default_dataset(source: SourceSpec) -> str:
    """The dataset a source is known by in the history: its path, its table, or
    ``query:<12 hex digits>`` of the query's text."""
    if source.path is not None:
        return source.path
    if source.table is not None:
        return source.table
    return "query:" + hashlib.sha256(str(source.query).encode()).hexdigest()[:12]


def failed_records_spec(store: OutputSpec) -> OutputSpec:
    """The companion store of the sample rows, beside ``store``."""
    if store.path is not None:
        return dataclasses.replace(store, path=store.path.rstrip("/") + _FAILED_RECORDS)
    return dataclasses.replace(store, table=f"{store.table}{_FAILED_RECORDS}")


def _schema_of(spark: SparkSession, spec: OutputSpec) -> StructType | None:
    """The store's schema, or None when it does not exist yet."""
    if spec.table is not None:
        if not spark.catalog.tableExists(spec.table):
            return None
        return spark.table(spec.table).schema
    assert spec.path is not None
    if not FileSystem(spark).exists(spec.path):
        return None
    reader = spark.read.format(spec.format or "parquet").options(**spec.options)
    try:
        return reader.load(spec.path).schema
    except Exception as error:
        if condition_of(error) == "UNABLE_TO_INFER_SCHEMA":
            return None  # a folder with no data files yet
        raise ColaOutputError(f"cannot read the history store {spec.path}: {first_line(error)}") from error


def check_history_store(spark: SparkSession, store: OutputSpec, expected: str = HISTORY_SCHEMA) -> None:
    """Refuse a store that exists with other columns than a Cola history's, before anything
    is written to it.

    Raises:
        ColaOutputError: naming the store and what differs.
    """
    schema = _schema_of(spark, store)
    if schema is None:
        return
    wanted = spark.createDataFrame([], expected).schema
    have = {f.name: f.dataType.simpleString() for f in schema.fields}
    want = {f.name: f.dataType.simpleString() for f in wanted.fields}
    if have == want:
        return
    missing = [name for name in want if name not in have]
    extra = [name for name in have if name not in want]
    retyped = [f"{name} is {have[name]}, not {want[name]}" for name in want if have.get(name, want[name]) != want[name]]
    problems = (
        ([f"it lacks {', '.join(missing)}"] if missing else [])
        + ([f"it has {', '.join(extra)}, which a history has not"] if extra else [])
        + retyped
    )
    raise ColaOutputError(
        f"{store.target} is not a Cola history store: {'; '.join(problems)}. "
        "Use a new path or table for the history, or one Cola wrote"
    )


def _rows(results: Sequence[CheckResult], run: RunInfo) -> list[tuple[Any, ...]]:
    rows = []
    for result in results:
        metric = result.metric_value
        baseline = getattr(result, "baseline", None)
        rows.append((
            run.run_id, run.pipeline, run.dataset, result.rule_id, result.code, result.rule_type, result.check_name,
            result.dimension, result.severity, bool(result.passed), int(result.failed_count),
            None if metric is None else float(metric), None if baseline is None else float(baseline),
            result.rows_checked, run.validated_at, run.dag_id, run.task_id, run.airflow_run_id, False,
        ))
    return rows


def _failed_records(results: Sequence[CheckResult], run: RunInfo) -> list[tuple[Any, ...]]:
    return [
        (run.run_id, run.dataset, result.rule_id, result.code, run.validated_at, json.dumps(sample, sort_keys=True))
        for result in results
        for sample in result.samples or []
    ]


def append_history(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, results: Sequence[CheckResult], run: RunInfo
) -> None:
    """Append one row per result (and the samples, to the failed-records store).

    Raises:
        ColaOutputError: the store is not a Cola history, or cannot be written.
    """
    spec = history_spec(store)
    records = failed_records_spec(spec)
    check_history_store(spark, spec)
    samples = _failed_records(results, run)
    if samples:
        check_history_store(spark, records, FAILED_RECORDS_SCHEMA)
    _append(spark, spec, spark.createDataFrame(_rows(results, run), HISTORY_SCHEMA))
    if samples:
        _append(spark, records, spark.createDataFrame(samples, FAILED_RECORDS_SCHEMA))


def _append(spark: SparkSession, spec: OutputSpec, rows: DataFrame) -> None:
    # A handful of rows: one file per run keeps the store tidy.
    rows = rows.coalesce(1)
    if spec.table is not None:
        write_output(rows, spec)
        return
    assert spec.path is not None
    fs = FileSystem(spark)
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


def read_history(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec) -> DataFrame:
    """The store's rows (an empty frame of the history's schema when it does not exist yet).

    Raises:
        ColaOutputError: the store exists but is not a Cola history.
    """
    spec = history_spec(store)
    check_history_store(spark, spec)
    if _schema_of(spark, spec) is None:
        return spark.createDataFrame([], HISTORY_SCHEMA)
    if spec.table is not None:
        return spark.table(spec.table)
    assert spec.path is not None
    return spark.read.format(spec.format or "parquet").options(**spec.options).load(spec.path)


def read_baselines(
    spark: SparkSession, store: OutputSpec, dataset: str, needs: Mapping[str, int]
) -> dict[str, list[float]]:
    """The earlier values of each rule's metric, newest first: for each ``rule_id`` in
    ``needs``, its last ``needs[rule_id]`` non-excluded runs on ``dataset`` that measured a
    number. One query for the whole block; an empty dict when the store does not exist yet."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not needs or _schema_of(spark, store) is None:
        return {}
    newest = Window.partitionBy("rule_id").orderBy(F.col("validated_at").desc(), F.col("run_id").desc())
    wanted = F.col("rule_id").isin(list(needs))
    rows = (
        read_history(spark, store)
        .where((F.col("dataset") == F.lit(dataset)) & wanted & ~F.col("excluded") & F.col("metric_value").isNotNull())
        .select("rule_id", "metric_value", F.row_number().over(newest).alias("newest"))
        .where(F.col("newest") <= max(needs.values()))
        .collect()
    )
    values: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        if row["newest"] <= needs[row["rule_id"]]:
            values.setdefault(row["rule_id"], []).append((row["newest"], float(row["metric_value"])))
    return {rule_id: [value for _, value in sorted(ranked)] for rule_id, ranked in values.items()}

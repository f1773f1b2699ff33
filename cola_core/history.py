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

from cola_core._columns import quote
from cola_core._spark_errors import analyse_now, condition_of, first_line, is_lasting_storage_error, is_unreachable
from cola_core.errors import ColaError, ColaOutputError, ThresholdError
from cola_core.publish import (
    Publication,
    file_system,
    publish_folder,
    publish_table_swap,
    sibling_table,
    table_facts,
    table_parts,
)
from cola_core.result import CheckResult
from cola_core.specs import OutputSpec, SourceSpec, history_spec
from cola_core.storage import write_output
from cola_core.thresholds import DURATION_SECONDS, parse_threshold

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
    "daily_summary",
    "default_dataset",
    "dimension_summary",
    "exclude_run",
    "failed_records_spec",
    "history_trends",
    "index_rows",
    "prune_history",
    "read_baselines",
    "read_history",
    "rule_trend",
    "top_offenders",
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
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


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
    parts = table_parts(str(store.table))
    named = [*parts[:-1], parts[-1] + _FAILED_RECORDS]
    return dataclasses.replace(store, table=".".join(quote(part) for part in named))


def _load(spark: SparkSession, spec: OutputSpec, expected: str = HISTORY_SCHEMA) -> DataFrame | None:
    """The store's rows, checked to have the columns ``expected`` names; None when it does not
    exist yet. Read once: for a folder, Spark reads its files' footers in a job.

    Raises:
        ColaOutputError: the store exists with other columns, or cannot be read.
    """
    if spec.table is not None:
        if not spark.catalog.tableExists(spec.table):
            return None
        rows = spark.table(spec.table)
    else:
        assert spec.path is not None
        reader = spark.read.format(spec.format or "parquet").options(**spec.options)
        try:
            rows = reader.load(spec.path)
            analyse_now(rows)  # Spark Connect reads lazily; this finds a missing store here too
        except Exception as error:
            # Asked of Spark, not of a file system: over Spark Connect the client has none, and
            # a store on s3 or HDFS is read wherever the server can read it.
            if condition_of(error) in ("PATH_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA"):
                return None  # not there yet, or a folder with no data files yet
            if is_unreachable(error):
                raise
            raise ColaOutputError(f"cannot read the history store {spec.path}: {first_line(error)}") from error
    _check_columns(spark, spec, rows.schema, expected)
    return rows


def check_history_store(spark: SparkSession, store: OutputSpec, expected: str = HISTORY_SCHEMA) -> None:
    """Refuse a store that exists with other columns than a Cola history's, before anything
    is written to it.

    Raises:
        ColaOutputError: naming the store and what differs; or, over Spark Connect, a path
            store this client cannot append to (see ``publish.LocalFileSystem``).
    """
    if store.path is not None:
        file_system(spark).qualified(store.path)  # refused here, not after the run's scan
    _load(spark, store, expected)


def _check_columns(spark: SparkSession, store: OutputSpec, schema: StructType, expected: str) -> None:
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
        baseline = result.baseline
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


def read_history(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec) -> DataFrame:
    """The store's rows (an empty frame of the history's schema when it does not exist yet).

    Raises:
        ColaOutputError: the store exists but is not a Cola history.
    """
    rows = _load(spark, history_spec(store))
    return spark.createDataFrame([], HISTORY_SCHEMA) if rows is None else rows


def read_baselines(
    spark: SparkSession, store: OutputSpec, run: RunInfo, needs: Mapping[str, int]
) -> dict[str, list[float]]:
    """The earlier values of each rule's metric, newest first: for each ``rule_id`` in
    ``needs``, its last ``needs[rule_id]`` non-excluded runs on ``run.dataset`` that measured a
    number. A task re-run in the same Airflow run (a retry, a cleared task) never compares
    with its own earlier attempts. One query for the whole block; an empty dict when the
    store does not exist yet."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    history = _load(spark, store)
    if not needs or history is None:
        return {}
    newest = Window.partitionBy("rule_id").orderBy(F.col("validated_at").desc(), F.col("run_id").desc())
    wanted = F.col("rule_id").isin(list(needs))
    earlier = (F.col("dataset") == F.lit(run.dataset)) & wanted & ~F.col("excluded") & F.col("metric_value").isNotNull()
    if run.airflow_run_id is not None:
        same_task = (
            F.col("dag_id").eqNullSafe(F.lit(run.dag_id))
            & F.col("task_id").eqNullSafe(F.lit(run.task_id))
            & (F.col("airflow_run_id") == F.lit(run.airflow_run_id))
        )
        earlier = earlier & ~F.ifnull(same_task, F.lit(False))
    rows = (
        history
        .where(earlier)
        .select("rule_id", "metric_value", F.row_number().over(newest).alias("newest"))
        .where(F.col("newest") <= max(needs.values()))
        .collect()
    )
    values: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        if row["newest"] <= needs[row["rule_id"]]:
            values.setdefault(row["rule_id"], []).append((row["newest"], float(row["metric_value"])))
    return {rule_id: [value for _, value in sorted(ranked)] for rule_id, ranked in values.items()}


# -- excluding a run, and retention: the only rewrites of a store ------------------------------


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


# -- monitoring: seed 004's summaries over the store ---------------------------------------------


def _recent(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, dataset: str | None,
            days: int | None) -> DataFrame:
    from pyspark.sql import functions as F

    rows = read_history(spark, store).withColumn("run_date", F.to_date("validated_at"))
    if dataset is not None:
        rows = rows.where(F.col("dataset") == F.lit(dataset))
    if days is not None:
        rows = rows.where(F.col("run_date") > F.date_sub(F.current_date(), days))
    return rows


def _outcomes() -> list[Any]:
    from pyspark.sql import functions as F

    return [
        F.count(F.lit(1)).alias("results"),
        F.count(F.when(F.col("severity") == "pass", 1)).alias("passed"),
        F.count(F.when(F.col("severity") == "warn", 1)).alias("warned"),
        F.count(F.when(F.col("severity") == "fail", 1)).alias("failed"),
        F.round(100.0 * F.count(F.when(F.col("passed"), 1)) / F.count(F.lit(1)), 2).alias("pass_rate"),
    ]


def daily_summary(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """Per day and dataset: the runs, the results, how many passed, warned and failed, and the
    pass rate in percent (a warn passes). Newest day first."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("run_date", "dataset")
        .agg(F.count_distinct("run_id").alias("runs"), *_outcomes())
        .orderBy(F.col("run_date").desc(), "dataset")
    )


def dimension_summary(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """Per day, dataset and dimension (NULL for rules without one): results and outcomes."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("run_date", "dataset", "dimension")
        .agg(*_outcomes())
        .orderBy(F.col("run_date").desc(), "dataset", F.col("dimension").asc_nulls_last())
    )


def rule_trend(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, rule_id: str | None = None,
    dataset: str | None = None, days: int | None = 30,
) -> DataFrame:
    """Per rule and day: its runs, outcomes, and the average and last metric value. Oldest
    day first, as a trend reads."""
    from pyspark.sql import functions as F

    rows = _recent(spark, history, dataset, days)
    if rule_id is not None:
        rows = rows.where(F.col("rule_id") == F.lit(rule_id))
    return (
        rows.groupBy("dataset", "rule_id", "run_date")
        .agg(
            F.first("code").alias("code"), *_outcomes(),
            F.avg("metric_value").alias("avg_metric"), F.max_by("metric_value", "validated_at").alias("last_metric"),
        )
        .orderBy("dataset", "rule_id", "run_date")
    )


def top_offenders(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, top_n: int = 10, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """The ``top_n`` rules with the lowest pass rate (then the most failures), worst first."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("dataset", "rule_id")
        .agg(F.max_by("code", "validated_at").alias("code"), *_outcomes())
        .orderBy("pass_rate", F.col("failed").desc(), "dataset", "rule_id")
        .limit(top_n)
    )


# -- the HTML report's trends and index (cola_core.pages draws them) ------------------------------


def _last_runs(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, runs: int, dataset: str | None
) -> dict[tuple[str, str], list[Any]]:
    """Per (dataset, rule_id): the rows of its last ``runs`` runs, oldest first, each with
    ``dataset_latest``, the run id of its dataset's latest run. One query.

    Excluded runs are left out, as the baselines leave them out: a run someone excluded was
    declared not to count (a bad load, since fixed), so it is neither a rule's latest verdict
    nor a point of its trend."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ColaError(f"runs must be a whole number >= 1, got {runs!r}")
    rows = read_history(spark, store).where(F.col("rule_id").isNotNull() & ~F.coalesce(F.col("excluded"), F.lit(False)))
    if dataset is not None:
        rows = rows.where(F.col("dataset") == F.lit(dataset))
    newest_first = (F.col("validated_at").desc(), F.col("run_id").desc())
    newest = Window.partitionBy("dataset", "rule_id").orderBy(*newest_first)
    # The first row of the dataset's window is its latest run (the frame runs from the top).
    dataset_latest = F.first("run_id").over(Window.partitionBy("dataset").orderBy(*newest_first))
    # The time as microseconds since the epoch, not the timestamp: collect() gives a timestamp as
    # a naive datetime in this process's local time zone, which would show a run at another hour
    # than its report (tz-aware UTC) on any host not set to UTC. The number is the same in classic
    # mode and over Spark Connect, whatever the session's time zone.
    latest = (
        rows.select("dataset", "rule_id", "code", "check_name", "severity", "metric_value", "run_id",
                    F.unix_micros("validated_at").alias("validated_micros"),
                    F.row_number().over(newest).alias("newest"), dataset_latest.alias("dataset_latest"))
        .where(F.col("newest") <= runs)
        .collect()
    )
    grouped: dict[tuple[str, str], list[Any]] = {}
    for row in sorted(latest, key=lambda row: -row["newest"]):
        grouped.setdefault((row["dataset"], row["rule_id"]), []).append(row)
    return grouped


def _utc(micros: int | None) -> dt.datetime | None:
    """A ``unix_micros`` value as a tz-aware UTC datetime (None for a row without a time)."""
    return None if micros is None else _EPOCH + dt.timedelta(microseconds=micros)


def _points(rows: Sequence[Any]) -> list[tuple[dt.datetime | None, float | None, str]]:
    return [(_utc(row["validated_micros"]), row["metric_value"], row["severity"]) for row in rows]


def history_trends(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, dataset: str, runs: int = 20
) -> dict[str, list[tuple[dt.datetime | None, float | None, str]]]:
    """Per ``rule_id`` of ``dataset``: its last ``runs`` runs, oldest first, each
    ``(validated_at, metric_value, severity)``: the ``trends`` of ``cola_core.pages.render_html``.
    ``validated_at`` is a tz-aware UTC datetime whatever this process's or the session's time
    zone, as the run's own report has it. Excluded runs are left out. An empty dict when the
    store does not exist yet.

    Raises:
        ColaError: ``runs`` is not a whole number >= 1.
        ColaOutputError: the store exists but is not a Cola history.
    """
    return {rule_id: _points(rows) for (_, rule_id), rows in _last_runs(spark, store, runs, dataset).items()}


def index_rows(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, runs: int = 20
) -> list[dict[str, Any]]:
    """One dict per dataset and rule in the store, the ``rows`` of ``cola_core.pages.render_index``:
    ``dataset``, ``rule_id``, and from its latest run ``code``, ``check_name``, ``severity`` and
    ``validated_at`` (tz-aware UTC, as in :func:`history_trends`); ``trend`` is its last
    ``runs`` runs, oldest first; ``current`` is False for a rule its dataset's latest run did
    not check (a rule since removed or renamed), whose verdict is then only history. Sorted by
    dataset and rule. Excluded runs are left out.

    Raises:
        ColaError: ``runs`` is not a whole number >= 1.
        ColaOutputError: the store exists but is not a Cola history.
    """
    index = []
    for (dataset, rule_id), rows in sorted(_last_runs(spark, store, runs, None).items()):
        latest = rows[-1]
        index.append({
            "dataset": dataset, "rule_id": rule_id, "code": latest["code"], "check_name": latest["check_name"],
            "severity": latest["severity"], "validated_at": _utc(latest["validated_micros"]), "trend": _points(rows),
            "current": latest["run_id"] == latest["dataset_latest"],
        })
    return index

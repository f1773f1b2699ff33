"""The history store: one row per result per run, in the user's own table or folder.

A store is an output config or a plain path (a local parquet folder by default). Each run
appends its rows and nothing else: the rows are written to a hidden staging folder beside the
store and their files are then moved in, one rename each, so that runs appending at the same
time lose nothing (Spark's own append to one folder shares a ``_temporary`` folder between
concurrent jobs). A table store is appended to with ``saveAsTable``.

With samples, the sample rows go to a companion failed-records store beside the results store
(``<path>_failed_records``, ``<table>_failed_records``), never inside it: a plain-path store
always reads back exactly one row per result.

**Time is the data's time.** Each row records the data interval its run checked: ``data_date``
(from Airflow, the DAG run's logical date, the date ``{{ ds }}`` renders; from the API or the
command line, the ``data_date`` given; otherwise the run's own time), and from Airflow the
data interval, the logical date and the map index. Airflow reruns, clears and backfills tasks, so one interval
may have several attempts: the latest attempt of each interval is the one that counts
(``cola_core.history.index``). Baselines compare with the latest earlier *data* interval,
never with an attempt at the same one; summaries, trends and the index group and order by
the data's date. ``run_kind`` says whether a check or a split wrote the row, and baselines
compare like with like.

A store written before these columns existed is read as it is (a missing ``data_date`` reads
as the run's ``validated_at``, a missing ``run_kind`` counts for both kinds); the next append
writes parts with every column (a table store gets them with ``ALTER TABLE ... ADD COLUMNS``).
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

from cola_core.common.columns import quote
from cola_core.common.spark_errors import (
    analyse_now,
    condition_of,
    first_line,
    is_lasting_storage_error,
    is_unreachable,
)
from cola_core.common.values import utc_datetime
from cola_core.errors import ColaError, ColaOutputError, ThresholdError
from cola_core.history.index import TrendPoint, index_entries
from cola_core.language.result import CheckResult
from cola_core.language.thresholds import DURATION_SECONDS, parse_threshold
from cola_core.storage.catalog import publish_table_swap, sibling_table, table_facts, table_parts
from cola_core.storage.publish import Publication, file_system, publish_folder
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec, SourceSpec, history_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = [
    "ADDED_COLUMNS",
    "FAILED_RECORDS_SCHEMA",
    "HISTORY_COLUMNS",
    "HISTORY_SCHEMA",
    "RUN_KINDS",
    "RunInfo",
    "append_history",
    "check_history_store",
    "collected",
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

# The columns of the first stores, before the data's date was recorded.
_FIRST_COLUMNS = (
    "run_id", "pipeline", "dataset", "rule_id", "code", "rule_type", "check_name", "dimension", "severity", "passed",
    "failed_count", "metric_value", "baseline", "rows_checked", "validated_at", "dag_id", "task_id", "airflow_run_id",
    "excluded",
)
# Added since: a store without them is read with them (see the module docstring).
ADDED_COLUMNS = ("data_date", "data_interval_start", "data_interval_end", "logical_date", "map_index", "run_kind")
HISTORY_COLUMNS = (*_FIRST_COLUMNS, *ADDED_COLUMNS)
HISTORY_SCHEMA = (
    "run_id string, pipeline string, dataset string, rule_id string, code string, rule_type string, "
    "check_name string, dimension string, severity string, passed boolean, failed_count bigint, "
    "metric_value double, baseline double, rows_checked bigint, validated_at timestamp, dag_id string, "
    "task_id string, airflow_run_id string, excluded boolean, data_date timestamp, data_interval_start timestamp, "
    "data_interval_end timestamp, logical_date timestamp, map_index int, run_kind string"
)
FAILED_RECORDS_SCHEMA = (
    "run_id string, dataset string, rule_id string, code string, validated_at timestamp, record string"
)
_FAILED_RECORDS = "_failed_records"
# The kinds of run a row may come from: baselines compare like with like.
RUN_KINDS = ("check", "split")


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
        data_date: the date of the data the run checked (a date is its midnight in UTC, a
            datetime without a zone is taken as UTC); from Airflow, the DAG run's logical date
            (see ``airflow_provider_cola._rules``); the run's ``validated_at`` when none is
            given. Baselines, summaries, trends and the index go by it.
        data_interval_start: from Airflow, the DAG run's data interval start.
        data_interval_end: from Airflow, its end.
        logical_date: from Airflow, the DAG run's logical date.
        map_index: from Airflow, the mapped task instance's index (None for a task that is
            not mapped); baselines compare an instance with the same instance.
        run_kind: ``check`` or ``split``; ``Cola.split_write`` sets ``split``.
    """

    dataset: str
    pipeline: str | None = None
    dag_id: str | None = None
    task_id: str | None = None
    airflow_run_id: str | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    validated_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    data_date: dt.datetime | dt.date | None = None
    data_interval_start: dt.datetime | None = None
    data_interval_end: dt.datetime | None = None
    logical_date: dt.datetime | None = None
    map_index: int | None = None
    run_kind: str = "check"

    def __post_init__(self) -> None:
        object.__setattr__(self, "validated_at", _utc(self.validated_at, "validated_at"))
        for name in ("data_interval_start", "data_interval_end", "logical_date"):
            value = getattr(self, name)
            object.__setattr__(self, name, None if value is None else _utc(value, name))
        data_date = self.validated_at if self.data_date is None else _utc(self.data_date, "data_date")
        object.__setattr__(self, "data_date", data_date)
        if self.map_index is not None and (isinstance(self.map_index, bool) or not isinstance(self.map_index, int)):
            raise ColaError(f"map_index must be a whole number, got {self.map_index!r}")
        if self.run_kind not in RUN_KINDS:
            raise ColaError(f"run_kind must be one of {', '.join(RUN_KINDS)}, got {self.run_kind!r}")

    @property
    def data_moment(self) -> dt.datetime:
        """``data_date`` as the tz-aware UTC datetime it always is after construction."""
        assert isinstance(self.data_date, dt.datetime)
        return self.data_date


def _utc(value: Any, name: str) -> dt.datetime:
    """``value`` as a tz-aware UTC datetime (see ``_values.utc_datetime``).

    Raises:
        ColaError: naming ``name``, for a value that is no date, datetime or ISO text.
    """
    try:
        return utc_datetime(value)
    except ValueError as error:
        raise ColaError(f"{name} must be a date, a datetime or an ISO date or timestamp: {error}") from error


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
    """The store's rows with every column ``expected`` names (see :func:`_completed`); None
    when it does not exist yet. Read once: for a folder, Spark reads its files' footers in a job.

    Raises:
        ColaOutputError: the store exists with other columns, or cannot be read.
    """
    rows = _stored(spark, spec)
    if rows is None:
        return None
    _missing_columns(spark, spec, rows.schema, expected)
    return _completed(rows, expected)


def _stored(spark: SparkSession, spec: OutputSpec) -> DataFrame | None:
    """The store's rows as they are stored; None when it does not exist yet.

    Raises:
        ColaOutputError: the store cannot be read.
    """
    if spec.table is not None:
        if not spark.catalog.tableExists(spec.table):
            return None
        return spark.table(spec.table)
    assert spec.path is not None
    if _path_missing(spark, spec.path):
        return None
    # Every part's schema, merged: a store appended to across versions holds parts with and
    # without the added columns, and Spark would otherwise take one part's schema for all.
    reader = spark.read.format(spec.format or "parquet").options(**spec.options).option("mergeSchema", "true")
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
        raise ColaOutputError(
            f"cannot read the history store {spec.path}: {_part_problem(spark, spec) or first_line(error)}"
        ) from error
    return rows


def _part_problem(spark: SparkSession, spec: OutputSpec) -> str | None:
    """Which part of a folder store cannot be read with the others, and why: its schema read
    alone, part by part (Spark's own message when the parts' schemas cannot be merged names
    no file). None when each part reads alone, or the parts cannot be listed here."""
    assert spec.path is not None
    try:
        fs = file_system(spark)
        # Named from the store's path as given: the message reads the same in classic mode
        # and over Spark Connect (whose file system qualifies paths with file:).
        parts = [f"{spec.path.rstrip('/')}/{name}" for name in fs.data_files(spec.path)]
    except Exception:  # a store this process cannot list (over Spark Connect, a remote path)
        return None
    schemas: dict[str, str] = {}
    for part in parts:
        try:
            schema = spark.read.format(spec.format or "parquet").options(**spec.options).load(part).schema
        except Exception as error:
            if is_unreachable(error):
                raise
            return f"its part {part} cannot be read: {first_line(error)}"
        for column in schema.fields:
            kind = column.dataType.simpleString()
            first = schemas.setdefault(column.name, kind)
            if kind != first:
                return (
                    f"its part {part} holds {column.name} as {kind}, where an earlier part holds it as {first}; "
                    "a Cola history's parts all have the history's columns"
                )
    return None


def collected(frame: DataFrame, store: OutputSpec) -> list[Any]:
    """``frame.collect()`` of a query over the history store ``store``.

    Raises:
        ColaOutputError: a part of the store cannot be read (a truncated or corrupt file),
            naming the file as Spark does.
    """
    try:
        return frame.collect()
    except Exception as error:
        if is_unreachable(error) or not _is_read_failure(error):
            raise
        raise ColaOutputError(f"cannot read the history store {store.target}: {first_line(error)}") from error


def _is_read_failure(error: BaseException) -> bool:
    return condition_of(error) == "FAILED_READ_FILE" or "Encountered error while reading file" in str(error)


def _path_missing(spark: SparkSession, path: str) -> bool:
    """Whether the store's folder surely does not exist yet: the first run of every store, an
    expected state that must not cost a Java stack trace in the log (Spark logs one, at WARN,
    when it is asked to read a path that is not there). False when this process cannot tell
    (over Spark Connect, a path the client does not share): Spark's read then decides."""
    try:
        return not file_system(spark).exists(path)
    except ColaOutputError:
        return False


def check_history_store(spark: SparkSession, store: OutputSpec, expected: str = HISTORY_SCHEMA) -> None:
    """Refuse a store that exists with other columns than a Cola history's, before anything
    is written to it. A store written before the columns of :data:`ADDED_COLUMNS` existed is
    a Cola history.

    Raises:
        ColaOutputError: naming the store and what differs; or, over Spark Connect, a path
            store this client cannot append to (see ``publish.LocalFileSystem``).
    """
    if store.path is not None:
        file_system(spark).qualified(store.path)  # refused here, not after the run's scan
    _load(spark, store, expected)


def _missing_columns(spark: SparkSession, store: OutputSpec, schema: StructType, expected: str) -> list[str]:
    """The columns of :data:`ADDED_COLUMNS` the store lacks (a store written before them).

    Raises:
        ColaOutputError: the store lacks another column, has one a history has not, or has
            one of another type.
    """
    wanted = _schema(spark, expected)
    have = {f.name: f.dataType.simpleString() for f in schema.fields}
    want = {f.name: f.dataType.simpleString() for f in wanted.fields}
    added = [name for name in ADDED_COLUMNS if name in want and name not in have]
    missing = [name for name in want if name not in have and name not in added]
    if missing:  # not a store of an earlier Cola either: every absent column is missing
        missing, added = [name for name in want if name not in have], []
    extra = [name for name in have if name not in want]
    retyped = [f"{name} is {have[name]}, not {want[name]}" for name in want if have.get(name, want[name]) != want[name]]
    problems = (
        ([f"it lacks {', '.join(missing)}"] if missing else [])
        + ([f"it has {', '.join(extra)}, which a history has not"] if extra else [])
        + retyped
    )
    if not problems:
        return added
    raise ColaOutputError(
        f"{store.target} is not a Cola history store: {'; '.join(problems)}. "
        "Use a new path or table for the history, or one Cola wrote"
    )


def _completed(rows: DataFrame, expected: str) -> DataFrame:
    """``rows`` with every column of ``expected``, in its order: a column a store written
    before it existed lacks is NULL, except ``data_date``, which is then the run's time."""
    from pyspark.sql import functions as F

    schema = _schema(rows.sparkSession, expected)
    present = set(rows.columns)
    columns = []
    for column in schema.fields:
        value = F.col(column.name) if column.name in present else F.lit(None).cast(column.dataType)
        if column.name == "data_date" and "validated_at" in present:
            value = F.coalesce(value, F.col("validated_at"))
        columns.append(value.alias(column.name))
    return rows.select(*columns)


# The schemas of HISTORY_SCHEMA and FAILED_RECORDS_SCHEMA, parsed once (Spark parses a DDL text).
_SCHEMAS: dict[str, StructType] = {}


def _schema(spark: SparkSession, ddl: str) -> StructType:
    if ddl not in _SCHEMAS:
        _SCHEMAS[ddl] = spark.createDataFrame([], ddl).schema
    return _SCHEMAS[ddl]


def _add_columns(spark: SparkSession, table: str, names: Sequence[str]) -> None:
    """Give a table store written before :data:`ADDED_COLUMNS` existed the ones it lacks, so
    that this run's rows can be appended (its earlier rows read them as :func:`_completed` says)."""
    types = {column.name: column.dataType.simpleString() for column in _schema(spark, HISTORY_SCHEMA).fields}
    added = ", ".join(f"{quote(name)} {types[name]}" for name in names)
    try:
        spark.sql(f"ALTER TABLE {table} ADD COLUMNS ({added})")
    except Exception as error:
        if is_unreachable(error):
            raise
        raise ColaOutputError(
            f"the history table {table} was written by an earlier Cola and lacks {', '.join(names)}; adding them "
            f"failed: {first_line(error)}. Add them yourself (ALTER TABLE {table} ADD COLUMNS ({added})) or use a "
            "new table"
        ) from error


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
    ``needs``, the values of its last ``needs[rule_id]`` data intervals *before* the run's
    ``data_date`` on ``run.dataset``, each from that interval's latest attempt (excluded runs
    left out), by runs of the same kind and map index. An attempt at the run's own interval
    (a retry, a cleared task, a rerun) is never a baseline, and an interval whose latest
    attempt measured no number gives none. One query for the whole block; an empty dict when
    the store does not exist yet."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    history = _load(spark, store)
    if not needs or history is None:
        return {}
    wanted = F.col("rule_id").isin(list(needs))
    # Rows written before run_kind existed count for both kinds.
    same_kind = F.col("run_kind").isNull() | (F.col("run_kind") == F.lit(run.run_kind))
    earlier = (
        (F.col("dataset") == F.lit(run.dataset)) & wanted & ~F.coalesce(F.col("excluded"), F.lit(False))
        & (F.col("data_date") < F.lit(run.data_moment)) & same_kind
        & F.col("map_index").eqNullSafe(F.lit(run.map_index).cast("int"))
    )
    latest_attempt = Window.partitionBy("rule_id", "data_date").orderBy(
        F.col("validated_at").desc(), F.col("run_id").desc()
    )
    newest = Window.partitionBy("rule_id").orderBy(F.col("data_date").desc())
    query = (
        history
        .where(earlier)
        .select("rule_id", "data_date", "metric_value", F.row_number().over(latest_attempt).alias("attempt"))
        .where((F.col("attempt") == 1) & F.col("metric_value").isNotNull())
        .select("rule_id", "metric_value", F.row_number().over(newest).alias("newest"))
        .where(F.col("newest") <= max(needs.values()))
    )
    rows = collected(query, store)
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


# -- monitoring: summaries over the store ------------------------------------------------------


def _counted(history: DataFrame) -> DataFrame:
    """The rows that count: per dataset, rule, kind, map index and data interval, the latest
    attempt's (excluded runs left out), as the baselines and the index read the store."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    interval = ("dataset", "rule_id", "run_kind", "map_index", "data_date")
    latest = Window.partitionBy(*interval).orderBy(F.col("validated_at").desc(), F.col("run_id").desc())
    return (
        history.where(~F.coalesce(F.col("excluded"), F.lit(False)))
        .withColumn("_attempt", F.row_number().over(latest))
        .where(F.col("_attempt") == 1)
        .drop("_attempt")
    )


def _utc_date(column: str) -> Any:
    """The UTC calendar date of a timestamp column, whatever the session's time zone (which
    ``to_date`` would use: a midnight-UTC interval would fall on the day before in New York)."""
    from pyspark.sql import functions as F

    return F.date_from_unix_date(F.floor(F.unix_seconds(F.col(column)) / 86400).cast("int"))


def _recent(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, dataset: str | None,
            days: int | None) -> DataFrame:
    """The rows that count (:func:`_counted`), ``data_date`` made the data's UTC date; only
    ``dataset``'s, and only data dates of the last ``days`` days (today, UTC, being one)."""
    from pyspark.sql import functions as F

    rows = read_history(spark, store)
    if dataset is not None:
        rows = rows.where(F.col("dataset") == F.lit(dataset))
    # The interval's start kept as a number: a day may hold several intervals (an hourly DAG).
    rows = _counted(rows).withColumn("_data_micros", F.unix_micros("data_date"))
    rows = rows.withColumn("data_date", _utc_date("data_date"))
    if days is not None:
        today = dt.datetime.now(dt.timezone.utc).date()
        rows = rows.where(F.col("data_date") > F.lit(today - dt.timedelta(days=days)))
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
    """Per data date (UTC) and dataset: the runs that count (each interval's latest attempt),
    their results, how many passed, warned and failed, and the pass rate in percent (a warn
    passes). Newest data date first."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("data_date", "dataset")
        .agg(F.count_distinct("run_id").alias("runs"), *_outcomes())
        .orderBy(F.col("data_date").desc(), "dataset")
    )


def dimension_summary(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """Per data date (UTC), dataset and dimension (NULL for rules without one): results and
    outcomes of each interval's latest attempt."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("data_date", "dataset", "dimension")
        .agg(*_outcomes())
        .orderBy(F.col("data_date").desc(), "dataset", F.col("dimension").asc_nulls_last())
    )


def rule_trend(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, rule_id: str | None = None,
    dataset: str | None = None, days: int | None = 30,
) -> DataFrame:
    """Per rule and data date (UTC): the outcomes of its intervals' latest attempts, and the
    average and the last metric value (of the newest interval that day). Oldest data date
    first, as a trend reads."""
    from pyspark.sql import functions as F

    rows = _recent(spark, history, dataset, days)
    if rule_id is not None:
        rows = rows.where(F.col("rule_id") == F.lit(rule_id))
    return (
        rows.groupBy("dataset", "rule_id", "data_date")
        .agg(
            F.first("code").alias("code"), *_outcomes(),
            F.avg("metric_value").alias("avg_metric"), F.max_by("metric_value", "_data_micros").alias("last_metric"),
        )
        .orderBy("dataset", "rule_id", "data_date")
    )


def top_offenders(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, top_n: int = 10, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """The ``top_n`` rules with the lowest pass rate over their intervals' latest attempts
    (then the most failures), worst first."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("dataset", "rule_id")
        .agg(F.max_by("code", "data_date").alias("code"), *_outcomes())
        .orderBy("pass_rate", F.col("failed").desc(), "dataset", "rule_id")
        .limit(top_n)
    )


# -- the HTML report's trends and index (cola_core.report.pages and index_page draw them) ----------------


def _last_runs(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, runs: int, dataset: str | None,
    until: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """The index entries (``history_index.index_entries``) of the store, or of ``dataset``'s
    data intervals up to ``until``.

    Spark keeps, per dataset and rule, the latest attempt of each of its last ``runs`` data
    intervals, and only those rows are collected; ``index_entries`` then reads them as it
    reads a whole store, so the index is the same whoever reads the store. One query.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ColaError(f"runs must be a whole number >= 1, got {runs!r}")
    rows = read_history(spark, store).where(
        F.col("rule_id").isNotNull() & ~F.coalesce(F.col("excluded"), F.lit(False))
    )
    if dataset is not None:
        rows = rows.where(F.col("dataset") == F.lit(dataset))
    if until is not None:
        rows = rows.where(F.col("data_date") <= F.lit(until))
    latest_attempt = Window.partitionBy("dataset", "rule_id", "data_date").orderBy(
        F.col("validated_at").desc(), F.col("run_id").desc()
    )
    newest = Window.partitionBy("dataset", "rule_id").orderBy(F.col("data_date").desc())
    # Times as microseconds since the epoch, not timestamps: collect() gives a timestamp as a
    # naive datetime in this process's local time zone, which would show a run at another hour
    # than its report (tz-aware UTC) on any host not set to UTC. The number is the same in
    # classic mode and over Spark Connect, whatever the session's time zone.
    kept = (
        rows.select("*", F.row_number().over(latest_attempt).alias("_attempt"))
        .where(F.col("_attempt") == 1)
        .select("*", F.row_number().over(newest).alias("_newest"))
        .where(F.col("_newest") <= runs)
        .select(
            "dataset", "rule_id", "code", "check_name", "severity", "metric_value", "run_id",
            F.unix_micros("data_date").alias("data_micros"), F.unix_micros("validated_at").alias("validated_micros"),
            "excluded",
        )
    )
    return index_entries([row.asDict() for row in collected(kept, history_spec(store))], runs)


def history_trends(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, dataset: str, runs: int = 20,
    until: dt.datetime | None = None,
) -> dict[str, list[TrendPoint]]:
    """Per ``rule_id`` of ``dataset``: its last ``runs`` data intervals (up to the data date
    ``until``, when given), oldest first, each ``(data_date, metric_value, severity)`` of the
    interval's latest attempt: the ``trends`` of ``cola_core.report.pages.render_html``. ``data_date``
    is a tz-aware UTC datetime whatever this process's or the session's time zone. Excluded
    runs are left out. An empty dict when the store does not exist yet.

    Raises:
        ColaError: ``runs`` is not a whole number >= 1.
        ColaOutputError: the store exists but is not a Cola history.
    """
    return {entry["rule_id"]: entry["trend"] for entry in _last_runs(spark, store, runs, dataset, until)}


def index_rows(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, runs: int = 20
) -> list[dict[str, Any]]:
    """One dict per dataset and rule in the store, the ``rows`` of ``cola_core.report.index_page.render_index``
    (see ``cola_core.history.index.index_entries``): from the latest attempt of its newest data
    interval ``code``, ``check_name``, ``severity``, ``data_date`` and ``validated_at``
    (tz-aware UTC); ``trend``, its last ``runs`` intervals, oldest first; ``current``, False
    for a rule its dataset's newest interval did not check. Sorted by dataset and rule.
    Excluded runs are left out.

    Raises:
        ColaError: ``runs`` is not a whole number >= 1.
        ColaOutputError: the store exists but is not a Cola history.
    """
    return _last_runs(spark, store, runs, None)

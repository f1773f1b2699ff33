"""The history store: one row per result per run, in the user's own table or folder.

A store is an output config or a plain path (a local parquet folder by default). This module
holds what a row is (the columns, :class:`RunInfo`) and how a store is read and checked; the
modules beside it build on it: ``append`` adds a run's rows, ``baselines`` reads the earlier
values a change rule compares with, ``summaries`` the monitoring summaries and the HTML
report's trends and index, and ``retention`` holds the only rewrites of a store.

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
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cola_core.common.columns import quote
from cola_core.common.spark_errors import analyse_now, condition_of, first_line, is_unreachable
from cola_core.common.values import utc_datetime
from cola_core.errors import ColaError, ColaOutputError
from cola_core.storage.catalog import table_parts
from cola_core.storage.publish import file_system
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
    "check_history_store",
    "collected",
    "default_dataset",
    "failed_records_spec",
    "read_history",
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
            store this client cannot append to (see ``local_files.LocalFileSystem``).
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



def read_history(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec) -> DataFrame:
    """The store's rows (an empty frame of the history's schema when it does not exist yet).

    Raises:
        ColaOutputError: the store exists but is not a Cola history.
    """
    rows = _load(spark, history_spec(store))
    return spark.createDataFrame([], HISTORY_SCHEMA) if rows is None else rows

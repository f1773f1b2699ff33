"""Sources and outputs: everything the engine reads or writes outside a DataFrame.

Specs are parsed in pure Python (``parse_source``, ``parse_output``, ``read_rules_file``), so a
malformed one fails before Spark starts. Every output in the product (the report, the split's
valid and invalid rows, a ``sql`` rule's failed rows) goes through :func:`write_output`.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from cola_core._spark_errors import condition_of, first_line
from cola_core.errors import ColaOutputError, ColaRuleError, ColaSourceError
from cola_core.rules_file import read_rules_file  # re-exported: callers read sources and rules together
from cola_core.sqlguard import check_query, check_table_name, spark_parse_problem

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "FORMATS",
    "WRITE_MODES",
    "OutputSpec",
    "SourceSpec",
    "ensure_writable",
    "parse_output",
    "parse_source",
    "read_rules_file",
    "read_source",
    "write_counted",
    "write_output",
]

FORMATS = ("parquet", "csv", "json", "orc", "delta")
WRITE_MODES = ("append", "overwrite", "error", "errorifexists", "ignore")
_SOURCE_KEYS = ("path", "table", "query", "format", "options")
_OUTPUT_KEYS = ("path", "table", "format", "mode", "partition_by", "options")
_GLOB_CHARACTERS = frozenset("*?[{")


@dataclass(frozen=True)
class SourceSpec:
    """Where the data to validate comes from: exactly one of ``path``, ``table`` or ``query``.

    Attributes:
        path: a file or folder Spark reads with ``format`` and ``options``.
        table: a catalog table or view, e.g. ``db.orders``.
        query: one read-only ``SELECT``/``WITH`` query.
        format: the reader for ``path`` (one of :data:`FORMATS`).
        options: reader options, e.g. ``{"header": "true"}`` for CSV.
    """

    path: str | None = None
    table: str | None = None
    query: str | None = None
    format: str = "parquet"
    options: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """A short label for messages: ``parquet at /data/orders``, ``table db.orders``, ``query``."""
        if self.path is not None:
            return f"{self.format} at {self.path}"
        return f"table {self.table}" if self.table is not None else "query"


@dataclass(frozen=True)
class OutputSpec:
    """Where a DataFrame is written: exactly one of ``path`` or ``table``.

    Attributes:
        path: a folder, written with ``format`` (parquet by default).
        table: a catalog table, written with ``saveAsTable``.
        format: the writer; for a table, ``None`` keeps the table's own (or Spark's default).
        mode: ``append``, ``overwrite``, ``error``/``errorifexists`` (Spark's default) or ``ignore``.
        partition_by: columns to partition the output by.
        options: writer options.
    """

    path: str | None = None
    table: str | None = None
    format: str | None = "parquet"
    mode: str = "errorifexists"
    partition_by: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def target(self) -> str:
        """The path or the table name."""
        return self.path if self.path is not None else f"table {self.table}"


# -- parsing (pure Python) ---------------------------------------------------------------


def parse_source(source: Mapping[str, Any] | SourceSpec) -> SourceSpec:
    """Validate a source dict such as ``{"path": "/data/orders", "format": "csv"}``.

    Raises:
        ColaSourceError: when the dict is not exactly one of the three forms.
    """
    if isinstance(source, SourceSpec):
        return source
    if not isinstance(source, Mapping):
        raise ColaSourceError(
            'a source is an object such as {"path": "/data/orders", "format": "parquet"}, '
            f'{{"table": "db.orders"}} or {{"query": "SELECT ..."}}, got {type(source).__name__}'
        )
    _refuse_unknown_keys(source, _SOURCE_KEYS, "source", ColaSourceError)
    kinds = [key for key in ("path", "table", "query") if key in source]
    if len(kinds) != 1:
        found = f"gives {' and '.join(repr(k) for k in kinds)}" if kinds else "has none of them"
        raise ColaSourceError(f"a source needs exactly one of 'path', 'table' or 'query', but {found}")
    kind = kinds[0]
    value = source[kind]
    if not isinstance(value, str) or not value.strip():
        raise ColaSourceError(f"source '{kind}' must be a non-empty string, got {value!r}")
    if kind != "path":
        extra = [key for key in ("format", "options") if key in source]
        if extra:
            raise ColaSourceError(f"source '{extra[0]}' only applies to a 'path' source, not to a '{kind}'")
    if kind == "query":
        _check_read_only_query(value)
    if kind == "table":
        try:
            check_table_name(value, "table")
        except ColaRuleError as error:
            raise ColaSourceError(f"source {error.reason}") from error
    return SourceSpec(
        **{kind: value},
        format=_parse_format(source.get("format", "parquet"), ColaSourceError, "source"),
        options=_parse_options(source.get("options", {}), ColaSourceError, "source"),
    )


def parse_output(config: Mapping[str, Any] | str | OutputSpec) -> OutputSpec:
    """Validate an output config ``{format, path | table, mode, partition_by, options}``.

    A plain string is a parquet path.

    Raises:
        ColaOutputError: when the config is malformed.
    """
    if isinstance(config, OutputSpec):
        return config
    if isinstance(config, str):
        config = {"path": config}
    if not isinstance(config, Mapping):
        raise ColaOutputError(
            'an output is a path or an object such as {"path": "/data/out", "format": "parquet", '
            f'"mode": "overwrite"}}, got {type(config).__name__}'
        )
    _refuse_unknown_keys(config, _OUTPUT_KEYS, "output", ColaOutputError)
    kinds = [key for key in ("path", "table") if key in config]
    if len(kinds) != 1:
        found = "gives both" if kinds else "has neither"
        raise ColaOutputError(f"an output needs exactly one of 'path' or 'table', but {found}")
    kind = kinds[0]
    target = config[kind]
    if not isinstance(target, str) or not target.strip():
        raise ColaOutputError(f"output '{kind}' must be a non-empty string, got {target!r}")
    mode = config.get("mode", "errorifexists")
    if not isinstance(mode, str) or mode.lower() not in WRITE_MODES:
        raise ColaOutputError(f"output 'mode' must be one of {', '.join(WRITE_MODES)}, got {mode!r}")
    partition_by = config.get("partition_by", [])
    if isinstance(partition_by, str):
        partition_by = [partition_by]
    if not isinstance(partition_by, (list, tuple)) or not all(
        isinstance(column, str) and column.strip() for column in partition_by
    ):
        raise ColaOutputError(f"output 'partition_by' must be a list of column names, got {partition_by!r}")
    default_format = "parquet" if kind == "path" else None
    output_format = config.get("format", default_format)
    return OutputSpec(
        **{kind: target},
        format=None if output_format is None else _parse_format(output_format, ColaOutputError, "output"),
        mode=mode.lower(),
        partition_by=tuple(partition_by),
        options=_parse_options(config.get("options", {}), ColaOutputError, "output"),
    )


def _refuse_unknown_keys(config: Mapping[str, Any], valid: tuple[str, ...], what: str, error: type) -> None:
    unknown = [key for key in config if key not in valid]
    if unknown:
        raise error(f"unknown {what} key {unknown[0]!r}; valid keys are {', '.join(valid)}")


def _parse_format(value: Any, error: type, what: str) -> str:
    if not isinstance(value, str) or value.lower() not in FORMATS:
        raise error(f"unknown {what} format {value!r}; use one of {', '.join(FORMATS)}")
    return value.lower()


def _parse_options(options: Any, error: type, what: str) -> dict[str, str]:
    if not isinstance(options, Mapping):
        raise error(f"{what} 'options' must be an object of option name to value, got {type(options).__name__}")
    parsed = {}
    for key, value in options.items():
        if not isinstance(key, str) or isinstance(value, (Mapping, list, tuple)) or value is None:
            raise error(f"{what} option {key!r} must map a name to a string, number or boolean, got {value!r}")
        # Spark reads option values as strings; a JSON true must reach it as "true", not "True".
        parsed[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return parsed


def _check_read_only_query(query: str) -> None:
    try:
        check_query(query, "query")
    except ColaRuleError as error:
        raise ColaSourceError(f"source {error.reason}") from error


# -- Spark side --------------------------------------------------------------------------


def read_source(spark: SparkSession, source: Mapping[str, Any] | SourceSpec) -> DataFrame:
    """Read a source into a DataFrame.

    Raises:
        ColaSourceError: for a malformed spec, a missing path or table, a format the cluster
            lacks (``delta`` without Delta Lake), or a query Spark cannot analyse.
    """
    spec = parse_source(source)
    if spec.path is not None:
        # Checked here, it spares the user Spark's long Java stack trace for a common mistake.
        local = _local_path(spark, spec.path)
        if local is not None and not _GLOB_CHARACTERS & set(local) and not os.path.exists(local):
            raise ColaSourceError(f"input path {spec.path!r} does not exist")
    if spec.query is not None:
        # Spark's parser confirms what the lexer found: a query, so spark.sql runs nothing.
        problem = spark_parse_problem(spark, spec.query)
        if problem is not None:
            raise ColaSourceError(f"cannot read the query: {problem}")
    try:
        if spec.path is not None:
            return spark.read.format(spec.format).options(**spec.options).load(spec.path)
        if spec.table is not None:
            return spark.read.table(spec.table)
        return spark.sql(spec.query)
    except Exception as error:  # pyspark raises several unrelated classes; sort them by condition
        condition = condition_of(error)
        if condition == "PATH_NOT_FOUND":
            raise ColaSourceError(f"input path {spec.path!r} does not exist") from error
        if condition == "DATA_SOURCE_NOT_FOUND":
            raise ColaSourceError(
                f"format {spec.format!r} is not available on this Spark cluster; for delta, add Delta Lake "
                "(e.g. spark-submit --packages io.delta:delta-spark_2.13:<version>)"
            ) from error
        if condition is not None:
            raise ColaSourceError(f"cannot read the {spec.describe()}: {first_line(error)}") from error
        raise


def write_output(df: DataFrame, config: Mapping[str, Any] | str | OutputSpec) -> None:
    """Write ``df`` to an output; the one writer every output of the product uses.

    Raises:
        ColaOutputError: for a malformed config, or a target that exists when the mode is
            ``error``/``errorifexists``.
    """
    spec = parse_output(config)
    writer = df.write.mode(spec.mode).options(**spec.options)
    if spec.format is not None:
        writer = writer.format(spec.format)
    if spec.partition_by:
        writer = writer.partitionBy(*spec.partition_by)
    try:
        if spec.path is not None:
            writer.save(spec.path)
        else:
            writer.saveAsTable(spec.table)
    except Exception as error:
        condition = condition_of(error)
        if condition in ("PATH_ALREADY_EXISTS", "TABLE_OR_VIEW_ALREADY_EXISTS", "TABLE_ALREADY_EXISTS"):
            raise _exists_error(spec) from error
        if condition == "DATA_SOURCE_NOT_FOUND":
            raise ColaOutputError(f"format {spec.format!r} is not available on this Spark cluster") from error
        if condition is not None:
            raise ColaOutputError(f"cannot write {spec.target}: {first_line(error)}") from error
        raise


def write_counted(df: DataFrame, config: Mapping[str, Any] | str | OutputSpec) -> int:
    """Write ``df`` like :func:`write_output` and return the number of rows written.

    The count is observed during the write itself (``DataFrame.observe``), not by a second pass.

    Raises:
        ColaOutputError: as :func:`write_output`, and for mode ``ignore``: Spark skips the
            write when the target exists, and then no count is ever observed.
    """
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    spec = parse_output(config)
    if spec.mode == "ignore":
        raise ColaOutputError(
            f"mode 'ignore' cannot be used for {spec.target}: the rows written are counted during the write, "
            "and Spark skips the write when the target exists; use append, overwrite or errorifexists"
        )
    # A unique name: Spark matches observed metrics by name, across every query of the session.
    observation = Observation(f"cola_rows_{uuid.uuid4().hex}")
    write_output(df.observe(observation, F.count(F.lit(1)).alias("rows")), spec)
    return int(observation.get["rows"])


def ensure_writable(spark: SparkSession, config: Mapping[str, Any] | str | OutputSpec) -> None:
    """Refuse, before anything is written, an ``error``-mode target that already exists.

    Tables are looked up in the catalog. A path is checked when it is surely on the local
    file system (a ``file:`` URI, or no scheme on a local master); any other path is checked
    by Spark when it writes.

    Raises:
        ColaOutputError: when the target exists.
    """
    spec = parse_output(config)
    if spec.mode not in ("error", "errorifexists"):
        return
    if spec.table is not None:
        if spark.catalog.tableExists(spec.table):
            raise _exists_error(spec)
        return
    local = _local_path(spark, spec.path)
    if local is not None and os.path.exists(local):
        raise _exists_error(spec)


def _exists_error(spec: OutputSpec) -> ColaOutputError:
    return ColaOutputError(
        f"output {spec.target} already exists and its mode is {spec.mode!r}; "
        "set \"mode\" to \"overwrite\" or \"append\", or choose another target"
    )


def _local_path(spark: SparkSession, path: str) -> str | None:
    """The local file name of ``path``, or ``None`` when it may live on another file system."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    if "://" in path:
        return None
    # A path without a scheme is on the cluster's default file system (HDFS on YARN), so it
    # is only known to be local on a local master.
    try:
        master = spark.conf.get("spark.master", "")
    except Exception:  # Spark Connect may not expose it; then let Spark check
        return None
    return path if str(master).startswith("local") else None

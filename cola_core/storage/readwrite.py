"""Reading sources and writing outputs with Spark.

Every output in the product (the report, the split's staging write and copies, a ``sql``
rule's failed rows) is written by :func:`write_output`; moving a split's staged folders into
place is :mod:`cola_core.storage.publish`'s work.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cola_core.common.sessions import is_classic
from cola_core.common.spark_errors import analyse_now, condition_of, first_line, is_lasting_storage_error
from cola_core.errors import ColaOutputError, ColaSourceError
from cola_core.guards.sqlguard import spark_parse_problem
from cola_core.storage.specs import (
    GLOB_CHARACTERS,
    OutputSpec,
    SourceSpec,
    parse_output,
    parse_source,
    without_file_scheme,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamReader

__all__ = [
    "ensure_writable", "local_file_name", "local_path", "missing_input", "missing_local_path", "read_source",
    "write_output",
]

# A URI's scheme, as Hadoop reads one: ``s3a://``, ``hdfs:``, ``file:``.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def read_source(spark: SparkSession, source: Mapping[str, Any] | SourceSpec) -> DataFrame:
    """Read a source into a DataFrame.

    Raises:
        ColaSourceError: for a malformed spec, a missing path or table, a format the cluster
            lacks (``delta`` without Delta Lake), or a query Spark cannot analyse.
    """
    spec = parse_source(source)
    if spec.path is not None:
        # Checked here, it spares the user Spark's long Java stack trace for a common mistake.
        local = local_path(spark, spec.path)
        if local is not None and _missing(local):
            raise missing_input(spec.path)
    if spec.query is not None:
        # Spark's parser confirms what the lexer found: a query, so spark.sql runs nothing.
        problem = spark_parse_problem(spark, spec.query)
        if problem is not None:
            raise ColaSourceError(f"cannot read the query: {problem}")
    try:
        if spec.path is not None:
            df: DataFrame | None = _path_reader(spark, spec).load(spec.path)
        elif spec.table is not None:
            df = spark.read.table(spec.table)
        elif spec.query is not None:
            df = spark.sql(spec.query)
        else:
            df = None
        if df is not None:
            # A missing table or a bad query fails here over Spark Connect too, as in classic mode.
            analyse_now(df)
            return df
    except ColaSourceError:
        raise
    except Exception as error:  # pyspark raises several unrelated classes; sort them by condition
        condition = condition_of(error)
        if condition == "PATH_NOT_FOUND":
            raise missing_input(str(spec.path)) from error
        if condition == "DATA_SOURCE_NOT_FOUND":
            raise ColaSourceError(
                f"format {spec.format!r} is not available on this Spark cluster; for delta, add Delta Lake "
                "(e.g. spark-submit --packages io.delta:delta-spark_2.13:<version>)"
            ) from error
        if condition is not None:
            raise ColaSourceError(f"cannot read the {spec.describe()}: {first_line(error)}") from error
        raise
    # parse_source gives one of the three, but a SourceSpec built by hand may have none.
    raise ColaSourceError("a source needs exactly one of 'path', 'table' or 'query', but has none of them")


def _path_reader(spark: SparkSession, spec: SourceSpec) -> DataFrameReader | DataStreamReader:
    """The batch or streaming reader of a path source, with its format, options and schema."""
    reader = (spark.readStream if spec.stream else spark.read).format(spec.format).options(**spec.options)
    if spec.schema is None:
        return reader
    try:
        return reader.schema(spec.schema)
    except Exception as error:  # Spark's DDL parser; over Connect the schema is read when analysed
        if condition_of(error) is None:
            raise
        raise ColaSourceError(
            f"cannot read the {spec.describe()}: its schema is not Spark DDL text: {first_line(error)}"
        ) from error


def write_output(df: DataFrame, config: Mapping[str, Any] | str | OutputSpec) -> None:
    """Write ``df`` to an output; the one writer every output of the product uses.

    Raises:
        ColaOutputError: for a malformed config, or a target that exists when the mode is
            ``error``/``errorifexists``.
    """
    spec = parse_output(config)
    # The same mode under two names; Spark Connect knows only "error".
    mode = "error" if spec.mode == "errorifexists" else spec.mode
    writer = df.write.mode(mode).options(**spec.options)
    if spec.format is not None:
        writer = writer.format(spec.format)
    if spec.partition_by:
        writer = writer.partitionBy(*spec.partition_by)
    try:
        if spec.path is not None:
            writer.save(spec.path)
        elif spec.table is not None:
            writer.saveAsTable(spec.table)
        else:
            raise _no_output_target()  # not a Spark error: the handler below passes it on
    except Exception as error:
        condition = condition_of(error)
        if condition in ("PATH_ALREADY_EXISTS", "TABLE_OR_VIEW_ALREADY_EXISTS", "TABLE_ALREADY_EXISTS"):
            raise _exists_error(spec) from error
        if condition == "DATA_SOURCE_NOT_FOUND":
            raise ColaOutputError(f"format {spec.format!r} is not available on this Spark cluster") from error
        if condition is not None or is_lasting_storage_error(error):
            raise ColaOutputError(f"cannot write {spec.target}: {first_line(error)}") from error
        raise


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
    if spec.path is None:
        raise _no_output_target()
    local = local_path(spark, spec.path)
    if local is not None and os.path.exists(local):
        raise _exists_error(spec)


def _no_output_target() -> ColaOutputError:
    # parse_output gives a path or a table, but an OutputSpec built by hand may have neither.
    return ColaOutputError("an output needs exactly one of 'path' or 'table', but has none of them")


def _exists_error(spec: OutputSpec) -> ColaOutputError:
    return ColaOutputError(
        f"output {spec.target} already exists and its mode is {spec.mode!r}; "
        "set \"mode\" to \"overwrite\" or \"append\", or choose another target"
    )


def missing_input(path: str) -> ColaSourceError:
    """The error for a source (or a rule's reference) whose path does not exist."""
    return ColaSourceError(f"input path {path!r} does not exist")


def local_file_name(location: str) -> str | None:
    """The file name of ``location`` on this machine's storage when it is one there: without
    its ``file:`` scheme, or as it is when it has no scheme (for a local master: on another
    one, the cluster's default file system decides). ``None`` for any other scheme
    (``s3a://``, ``hdfs:``), which is other storage."""
    if location.startswith("file:"):
        return without_file_scheme(location)
    return None if _SCHEME.match(location) else location


def missing_local_path(location: str) -> bool:
    """Whether ``location``, read by a local master, names a file or folder of this machine
    that does not exist. A path on other storage (:func:`local_file_name`) and a glob, which
    is Spark's to expand, are never missing here: Spark says what it finds.

    Pure Python: the command line asks it before a JVM starts.
    """
    local = local_file_name(location)
    return local is not None and _missing(local)


def _missing(local: str) -> bool:
    return not GLOB_CHARACTERS & set(local) and not os.path.exists(local)


def local_path(spark: SparkSession, path: str) -> str | None:
    """The local file name of ``path``, or ``None`` when it may live on another file system."""
    if not is_classic(spark):
        return None  # a Spark Connect client's disk is not the server's: let Spark check
    if path.startswith("file:") or _SCHEME.match(path):
        return local_file_name(path)
    # A path without a scheme is on the cluster's default file system (HDFS on YARN), so it
    # is only known to be local on a local master.
    try:
        master = spark.conf.get("spark.master", "")
    except Exception:  # Spark Connect may not expose it; then let Spark check
        return None
    return path if str(master).startswith("local") else None

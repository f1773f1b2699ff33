"""Publishing into catalog tables: a table's facts, and the renames and refreshes that publish it.

``split_write`` and the history store publish a table output by name: a staged table is
renamed to the destination (``ALTER TABLE ... RENAME TO``), swapped with the table it
overwrites, or, for an append to a file-based table, its staged files are moved into the
table's folder (:func:`cola_core.storage.publish.publish_folder`) and the table refreshed and
its new partitions registered. Each step is recorded in the same
:class:`~cola_core.storage.publish.Publication` as the folder moves, with the step that takes
it back, so a table and a folder are published all or nothing together.

Kept apart from :mod:`cola_core.storage.publish` because this half speaks SQL to the catalog
(``DESCRIBE``, ``SHOW PARTITIONS``, ``ALTER TABLE``, ``REFRESH TABLE``) while that one moves
files; this one builds on that one's publication and folder moves, never the other way round.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from cola_core.common.columns import quote
from cola_core.common.spark_errors import first_line
from cola_core.errors import ColaOutputError
from cola_core.guards.sqlguard import tokenize
from cola_core.storage.publish import Files, Publication, publish_folder

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "TableFacts",
    "drop_table",
    "publish_new_table",
    "publish_table_files",
    "publish_table_swap",
    "rename_table",
    "sibling_table",
    "table_facts",
    "table_parts",
]


@dataclass(frozen=True)
class TableFacts:
    """What publishing needs to know of an existing table.

    Attributes:
        name: the name as given.
        managed: whether Spark owns its files (``MANAGED``), rather than ``EXTERNAL``.
        provider: its data source (``parquet``, ``delta``, ``hive``...), lower case.
        location: its folder.
        columns: its columns, in order, with their types (``("id", "bigint")``).
        partition_columns: its partition columns, in order.
        bucketed: whether it has buckets, whose files a split cannot write.
    """

    name: str
    managed: bool
    provider: str
    location: str
    columns: tuple[tuple[str, str], ...]
    partition_columns: tuple[str, ...]
    bucketed: bool = False


def _described(spark: SparkSession, sql: str) -> list[tuple[str, str]]:
    """The detail rows of a ``DESCRIBE ... EXTENDED``: those after its first ``# Detailed``
    header, so that a column named ``Location`` or ``Provider`` is never read as one."""
    rows = [(str(row["col_name"] or "").strip(), str(row["data_type"] or "").strip())
            for row in spark.sql(sql).collect()]
    start = next((n for n, (name, _) in enumerate(rows) if name.startswith("# Detailed")), len(rows))
    return rows[start + 1:]


def table_facts(spark: SparkSession, name: str) -> TableFacts:
    """The facts of the existing table ``name`` (see ``spark.catalog.tableExists``).

    Raises:
        ColaOutputError: ``name`` is a view or a temporary view, which cannot be written.
    """
    table = spark.catalog.getTable(name)
    if table.isTemporary or str(table.tableType).upper() == "VIEW":
        raise ColaOutputError(f"output table {name} is a view; write to a table or a path")
    details = dict(reversed(_described(spark, f"DESCRIBE TABLE EXTENDED {name}")))
    listed = spark.catalog.listColumns(name)
    return TableFacts(
        name=name,
        managed=str(table.tableType).upper() == "MANAGED",
        provider=details.get("Provider", "").lower(),
        location=details.get("Location", ""),
        columns=tuple((column.name, column.dataType) for column in listed),
        partition_columns=tuple(column.name for column in listed if column.isPartition),
        bucketed="Num Buckets" in details or any(column.isBucket for column in listed),
    )


def table_parts(name: str) -> list[str]:
    """The parts of a (checked) table name, unquoted: ```a b`.t`` -> ``["a b", "t"]``."""
    return [token.text for token in tokenize(name, "table") if token.kind in ("word", "quoted")]


def _quoted(parts: list[str]) -> str:
    return ".".join(quote(part) for part in parts)


def sibling_table(name: str, prefix: str) -> str:
    """A fresh table name in ``name``'s database: ``db.`<prefix>_<hex>`` (the table's own name
    is left out: it may hold characters a new name may not)."""
    parts = table_parts(name)
    return _quoted([*parts[:-1], f"{prefix}_{uuid.uuid4().hex}"])


def rename_table(publication: Publication, spark: SparkSession, source: str, target: str, description: str) -> None:
    """``ALTER TABLE source RENAME TO target`` (a catalog operation; a managed table's folder
    moves too), recorded in ``publication`` as soon as it is done, then made readable: the
    partitions re-pointed (see :func:`_repoint_partitions`) and the table refreshed, so the
    session never reads ``target`` from a cached listing of the table that had the name."""
    old_location = _partitioned_location(spark, source)
    _alter_rename(spark, source, target)
    # Recorded before the clean-up below: if that fails, the rename is still undone.
    publication.done(description, partial(_rename, spark, target, source))
    _settle(spark, target, old_location)


def _rename(spark: SparkSession, source: str, target: str) -> None:
    old_location = _partitioned_location(spark, source)
    _alter_rename(spark, source, target)
    _settle(spark, target, old_location)


def _partitioned_location(spark: SparkSession, name: str) -> str | None:
    """The folder of a partitioned table (its partitions may need re-pointing after a rename)."""
    partitioned = any(column.isPartition for column in spark.catalog.listColumns(name))
    return _location(spark, name) if partitioned else None


def _alter_rename(spark: SparkSession, source: str, target: str) -> None:
    # RENAME TO takes the database and the table: a catalog part is refused there.
    try:
        spark.sql(f"ALTER TABLE {source} RENAME TO {_quoted(table_parts(target)[-2:])}")
    except Exception as error:  # pyspark's analysis or JVM errors, all reported the same way
        raise ColaOutputError(f"cannot rename table {source} to {target}: {first_line(error)}") from error


def _settle(spark: SparkSession, name: str, old_location: str | None) -> None:
    if old_location is not None:
        _repoint_partitions(spark, name, old_location)
    _refresh(spark, name)


def _location(spark: SparkSession, name: str, partition: str | None = None) -> str:
    """The table's (or the partition's) folder, as a URI (percent-encoded)."""
    where = f" PARTITION ({_partition_clause(partition)})" if partition else ""
    # With a partition, its own Location comes first, then the table's.
    return next(value for key, value in _described(spark, f"DESCRIBE TABLE EXTENDED {name}{where}")
                if key == "Location")


def _repoint_partitions(spark: SparkSession, name: str, old_location: str) -> None:
    """Point the partitions of a renamed managed table at its new folder.

    Spark's in-memory catalog moves the folder but leaves each partition's location at the
    old one, so the renamed table reads empty; a Hive metastore moves them itself, and then
    nothing is changed here.
    """
    from urllib.parse import unquote

    # DESCRIBE shows a location sometimes as a URI (percent-encoded), sometimes decoded;
    # compared decoded, and set as a path, which Spark encodes itself.
    old, new = unquote(old_location).rstrip("/"), unquote(_location(spark, name)).rstrip("/")
    for row in spark.sql(f"SHOW PARTITIONS {name}").collect():
        spec = str(row[0])
        stale = unquote(_location(spark, name, spec))
        # A partition in the table's own folder is set to its folder there, by name (SHOW
        # PARTITIONS gives the folder's escaped name): a catalog may have moved it, even
        # wrongly (encoded twice). A partition elsewhere was placed by hand, and is left.
        if stale.startswith((old + "/", new + "/")):
            moved = f"{new}/{spec}"
            spark.sql(f"ALTER TABLE {name} PARTITION ({_partition_clause(spec)}) SET LOCATION '{_literal(moved)}'")


def drop_table(spark: SparkSession, name: str) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {name}")


def publish_new_table(publication: Publication, spark: SparkSession, staged: str, target: str) -> None:
    """Rename the staged table ``staged`` to ``target``, which must not exist."""
    if spark.catalog.tableExists(target):
        raise ColaOutputError(f"output table {target} appeared while the split was written; nothing was published")
    rename_table(publication, spark, staged, target, f"created table {target}")


def publish_table_swap(publication: Publication, spark: SparkSession, staged: str, target: str) -> None:
    """Overwrite ``target`` with the staged table: the old one is renamed aside, then dropped at commit."""
    backup = sibling_table(target, "_cola_previous")
    rename_table(publication, spark, target, backup, f"moved table {target} aside")
    rename_table(publication, spark, staged, target, f"published table {target}")
    publication.after_commit(lambda: drop_table(spark, backup))


def publish_table_files(
    publication: Publication, spark: SparkSession, fs: Files, staged: str, facts: TableFacts
) -> None:
    """Append to a file-based table: its staged files are moved into its folder, then the
    table is refreshed (and, when partitioned, its new partitions registered)."""
    before = _partitions(spark, facts)
    added: list[str] = []
    # Recorded before the files move, so undone after they are back: a managed table drops a
    # partition's folder with it, and Spark's cached listing of the table must forget them.
    publication.done(f"refreshed {facts.name}", partial(_refresh, spark, facts.name))
    publication.done(f"registered the new partitions of {facts.name}", partial(_drop_partitions, spark, facts, added))
    publish_folder(publication, fs, staged, facts.location, "append")
    if facts.partition_columns:
        spark.sql(f"ALTER TABLE {facts.name} RECOVER PARTITIONS")
        added.extend(spec for spec in _partitions(spark, facts) if spec not in before)
    _refresh(spark, facts.name)


def _refresh(spark: SparkSession, name: str) -> None:
    spark.sql(f"REFRESH TABLE {name}")


def _partitions(spark: SparkSession, facts: TableFacts) -> list[str]:
    if not facts.partition_columns:
        return []
    return [str(row[0]) for row in spark.sql(f"SHOW PARTITIONS {facts.name}").collect()]


def _drop_partitions(spark: SparkSession, facts: TableFacts, specs: list[str]) -> None:
    for spec in specs:
        spark.sql(f"ALTER TABLE {facts.name} DROP IF EXISTS PARTITION ({_partition_clause(spec)})")


def _partition_clause(spec: str) -> str:
    """``a=1/b=x y`` (as SHOW PARTITIONS gives it, values escaped as in a folder name) as the
    SQL ``a = '1', b = 'x y'``; the values come from the data, so they are quoted as literals."""
    from urllib.parse import unquote

    pairs = [part.split("=", 1) for part in spec.split("/")]
    return ", ".join(f"{quote(unquote(name))} = '{_literal(unquote(value))}'" for name, value in pairs)


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")

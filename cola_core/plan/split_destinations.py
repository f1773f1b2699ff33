"""The destinations of ``staged_split``: how each output is published, and publishing both.

Each output is resolved and refused before any job (a mode, format, table or column set a
split cannot publish all or nothing), given its route (a rename of its staged folder, or a
copy of its staged rows into its own format, partitioning or table), staged, then published
with the other one by ``cola_core.storage.publish``, every step undone when one fails.

Apart from ``staging_write`` (the one write of the rows, which this module reads back) and
``staged_split`` (the order of the steps): this module knows the outputs, not the rules.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cola_core.common.columns import quote
from cola_core.common.spark_errors import first_line, is_lasting_storage_error
from cola_core.errors import ColaOutputError
from cola_core.plan.staging_write import INVALID, VALID, Flagged, Staging, read_staged
from cola_core.storage.catalog import (
    TableFacts,
    drop_table,
    publish_new_table,
    publish_table_files,
    publish_table_swap,
    sibling_table,
    table_facts,
    table_parts,
)
from cola_core.storage.publish import Files, Publication, publish_folder
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "Destination",
    "SideColumns",
    "choose_route",
    "clean_up",
    "publish_both",
    "refuse_csv_arrays",
    "refuse_same_target",
    "refuse_unwritable_columns",
    "resolve",
    "stage",
]

_LOG = logging.getLogger(__name__)
# Formats whose files a table's folder can receive directly: self-describing, so the files
# need none of the table's storage options (a csv table's header or separator).
_FILE_TABLE_PROVIDERS = ("parquet", "orc")


@dataclass
class Destination:
    """One output of the split, and how it is published."""

    side: str
    spec: OutputSpec
    # "folder": a path renamed from staging; "copy": a path written from the staged rows
    # first; "new-table", "swap-table", "append-table" (see cola_core.storage.publish).
    how: str = "folder"
    location: str | None = None
    facts: TableFacts | None = None
    staged: str | None = None  # the folder or table to publish from
    leftovers: list[str] = field(default_factory=list)  # staging folders to delete at the end
    leftover_tables: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.side} output {self.spec.target}"


@dataclass(frozen=True)
class SideColumns:
    """The columns of each output, as :meth:`Cola.split` gives them (the valid side with the
    annotate column too, when ``annotate_valid``); the staging write holds the invalid side's.

    Attributes:
        arrays: per side, its ``array<string>`` columns (which a csv file cannot hold).
        types: every column's Spark type, as the catalog writes it (``int``, ``array<string>``).
    """

    valid: tuple[str, ...]
    invalid: tuple[str, ...]
    arrays: dict[str, tuple[str, ...]]
    types: dict[str, str]

    @classmethod
    def of(cls, df: DataFrame, annotate: str | None, has_warn_rules: bool, annotate_valid: bool) -> SideColumns:
        codes = (annotate,) if annotate else ()
        warnings = (f"{annotate}_warnings",) if annotate and has_warn_rules else ()
        valid_added = (*codes, *warnings) if annotate_valid else warnings
        return cls(
            valid=(*df.columns, *valid_added),
            invalid=(*df.columns, *codes, *warnings),
            arrays={VALID: valid_added, INVALID: (*codes, *warnings)},
            types={
                **{field.name: field.dataType.simpleString() for field in df.schema.fields},
                **dict.fromkeys((*codes, *warnings), "array<string>"),
            },
        )

    def of_side(self, side: str) -> tuple[str, ...]:
        return self.valid if side == VALID else self.invalid


def _with_path(spec: OutputSpec, path: str) -> OutputSpec:
    return OutputSpec(path=path, format=spec.format, mode="errorifexists", partition_by=spec.partition_by,
                      options=spec.options)


def resolve(spark: SparkSession, fs: Files, destination: Destination) -> None:
    """Refuse, before any job, a destination that cannot be published, and say how it will be."""
    spec = destination.spec
    if spec.mode == "ignore":
        raise ColaOutputError(
            f"mode 'ignore' cannot be used for the {destination.label}: a split publishes both outputs or "
            "neither; use append, overwrite or errorifexists"
        )
    if spec.format == "delta" and spec.path is not None:
        raise ColaOutputError(
            f"the {destination.label} is a delta output; a split publishes files by renaming them, which a "
            "Delta table's log would not record: write parquet or orc paths, or tables"
        )
    if spec.mode == "overwrite" and _dynamic_overwrite(spark, spec):
        raise ColaOutputError(
            f"the {destination.label} is overwritten in dynamic partition mode "
            "(spark.sql.sources.partitionOverwriteMode=dynamic), which a split cannot publish at once; "
            "use the static mode, or append"
        )
    if spec.path is not None:
        destination.location = fs.qualified(spec.path)
        if spec.mode in ("error", "errorifexists") and fs.exists(destination.location):
            raise _exists(destination)
        return
    assert spec.table is not None, "parse_output gives a path or a table"
    try:
        exists = spark.catalog.tableExists(spec.table)
    except Exception as error:  # a name Spark's parser refuses, or a catalog it cannot reach
        raise ColaOutputError(f"cannot look up the {destination.label}: {first_line(error)}") from error
    if not exists:
        destination.how = "new-table"
        return
    if spec.mode in ("error", "errorifexists"):
        raise _exists(destination)
    facts = destination.facts = table_facts(spark, spec.table)
    if facts.bucketed:
        raise ColaOutputError(
            f"the {destination.label} is bucketed; a split cannot write its files in the table's buckets"
        )
    if spec.mode == "overwrite":
        if not facts.managed:
            raise ColaOutputError(
                f"the {destination.label} is an external table; a split overwrites only managed tables "
                "(an external table's files are not Spark's to replace); write to its path instead"
            )
        destination.how = "swap-table"
    else:
        if facts.provider not in _FILE_TABLE_PROVIDERS or not facts.location:
            raise ColaOutputError(
                f"the {destination.label} is a {facts.provider or 'non-file'} table; a split appends to file-based "
                f"tables ({', '.join(_FILE_TABLE_PROVIDERS)}) only, whose new files it can publish at once"
            )
        destination.how = "append-table"
        destination.location = facts.location


def _dynamic_overwrite(spark: SparkSession, spec: OutputSpec) -> bool:
    mode = spec.options.get("partitionOverwriteMode") or spark.conf.get(
        "spark.sql.sources.partitionOverwriteMode", "static"
    )
    return str(mode).lower() == "dynamic"


def _exists(destination: Destination) -> ColaOutputError:
    return ColaOutputError(
        f"the {destination.label} already exists and its mode is {destination.spec.mode!r}; "
        "set \"mode\" to \"overwrite\" or \"append\", or choose another target"
    )


def refuse_same_target(spark: SparkSession, valid: Destination, invalid: Destination) -> None:
    if valid.spec.table is not None and invalid.spec.table is not None:
        if _table_identity(spark, valid.spec.table) == _table_identity(spark, invalid.spec.table):
            raise ColaOutputError(
                f"the valid and invalid outputs are the same table, {valid.spec.table} and {invalid.spec.table}"
            )
        return
    if valid.location is None or invalid.location is None:
        return
    first, second = valid.location.rstrip("/") + "/", invalid.location.rstrip("/") + "/"
    if first.startswith(second) or second.startswith(first):
        raise ColaOutputError(
            f"the valid output {valid.spec.target} and the invalid output {invalid.spec.target} overlap; "
            "give them separate folders"
        )


def _table_identity(spark: SparkSession, name: str) -> tuple[str, ...]:
    """``(catalog, database, table)`` of a table name, lower case: ``t``, ``default.t`` and
    ``spark_catalog.default.`t``` are one table."""
    parts = [part.lower() for part in table_parts(name)]
    current = [spark.catalog.currentCatalog().lower(), spark.catalog.currentDatabase().lower()]
    return (*current[: 3 - len(parts)], *parts) if len(parts) <= 3 else tuple(parts)


def choose_route(fs: Files, destination: Destination, staging: Staging, columns: SideColumns) -> None:
    """A path output is published by renaming its staged folder when that folder is already
    what it must hold; otherwise its rows are copied from staging first."""
    if destination.how != "folder":
        return
    spec, layout = destination.spec, staging.layout
    same_layout = (spec.format, dict(spec.options), spec.partition_by) == (
        layout.format, dict(layout.options), layout.partition_by,
    )
    same_columns = columns.of_side(destination.side) == columns.invalid
    assert destination.location is not None
    if not (same_layout and same_columns and fs.same_file_system(destination.location, staging.folder)):
        destination.how = "copy"


def refuse_unwritable_columns(columns: SideColumns, destinations: list[Destination], staging: Staging) -> None:
    """Refuse, before any job, a CSV output of the codes arrays, or rows a table cannot take."""
    refuse_csv_arrays(columns.arrays[INVALID], staging.layout.format)
    for destination in destinations:
        facts = destination.facts
        output_format = facts.provider if facts is not None else destination.spec.format
        arrays = columns.arrays[destination.side]
        refuse_csv_arrays(arrays, output_format)
        if destination.how != "append-table":
            continue
        assert facts is not None
        names = columns.of_side(destination.side)
        if {name.lower() for name, _ in facts.columns} != {name.lower() for name in names}:
            raise ColaOutputError(
                f"the {destination.label} has the columns {', '.join(n for n, _ in facts.columns)}, "
                f"but the split writes {', '.join(names)} to it"
            )
        written = {name.lower(): data_type for name, data_type in columns.types.items()}
        for name, data_type in facts.columns:
            if written.get(name.lower(), data_type) != data_type:
                raise ColaOutputError(
                    f"the {destination.label}'s column {name} is {data_type}, but the split writes "
                    f"{written[name.lower()]} to it; cast the column first"
                )


def refuse_csv_arrays(arrays: Sequence[str], output_format: str | None) -> None:
    """Refuse, before any job, a csv output of rows with array columns (the codes)."""
    if arrays and output_format == "csv":
        raise ColaOutputError(
            f"a csv output cannot hold the array column {arrays[0]!r}; write parquet, orc or json, or leave out "
            "annotate"
        )


def stage(
    spark: SparkSession,
    fs: Files,
    destination: Destination,
    staging: Staging,
    flagged: Flagged,
    columns: SideColumns,
) -> None:
    """Make what ``destination`` is published from: its staged folder, or a copy of its rows
    in its own format, columns and partitioning (a folder, or a table under a fresh name)."""
    from pyspark.sql import functions as F

    side, spec = destination.side, destination.spec
    if destination.how == "folder":
        folder = staging.side(fs, side)
        if fs.exists(folder):
            destination.staged = folder
        elif spec.mode != "append" or not fs.exists(destination.location or ""):
            # No row had this outcome, so the write made no folder: an empty output is made,
            # with the schema where the format keeps one. Appending no rows publishes nothing.
            empty = read_staged(spark, fs, staging, flagged, columns.of_side(side), side)
            write_output(empty, _with_path(staging.layout, folder))
            destination.staged = folder
        return
    rows = read_staged(spark, fs, staging, flagged, columns.of_side(side), side)
    if destination.how == "copy":
        assert destination.location is not None
        destination.staged = fs.sibling(destination.location, "_cola_staging")
        destination.leftovers.append(destination.staged)
        write_output(rows, _with_path(spec, destination.staged))
    elif destination.how == "append-table":
        facts = destination.facts
        assert facts is not None
        by_name = {name.lower(): name for name in rows.columns}
        ordered = [F.col(quote(by_name[name.lower()])).cast(data_type).alias(name) for name, data_type in facts.columns]
        destination.staged = fs.sibling(facts.location, "_cola_staging")
        destination.leftovers.append(destination.staged)
        table_files = OutputSpec(path=destination.staged, format=facts.provider, partition_by=facts.partition_columns,
                                 options=spec.options)
        write_output(rows.select(*ordered), table_files)
    else:
        assert spec.table is not None
        destination.staged = sibling_table(spec.table, "_cola_staging")
        destination.leftover_tables.append(destination.staged)
        kept = destination.facts
        table_format = spec.format or (kept.provider if kept is not None else None)
        partition_by = spec.partition_by or (kept.partition_columns if kept is not None else ())
        write_output(rows, OutputSpec(table=destination.staged, format=table_format, partition_by=partition_by,
                                      options=spec.options))


def publish_both(spark: SparkSession, fs: Files, destinations: list[Destination]) -> None:
    """Publish both destinations, or undo what was done and raise."""
    publication = Publication()
    for destination in destinations:
        staged = destination.staged
        if staged is None:
            continue  # no rows to append
        try:
            if destination.how in ("folder", "copy"):
                assert destination.location is not None
                publish_folder(publication, fs, staged, destination.location, destination.spec.mode)
            elif destination.how == "append-table":
                assert destination.facts is not None
                publish_table_files(publication, spark, fs, staged, destination.facts)
            elif destination.how == "swap-table":
                assert destination.spec.table is not None
                publish_table_swap(publication, spark, staged, destination.spec.table)
            else:
                assert destination.spec.table is not None
                publish_new_table(publication, spark, staged, destination.spec.table)
        except Exception as error:  # Hadoop's and Spark's errors too: every failure is undone
            problems = publication.rollback()
            if problems or isinstance(error, ColaOutputError) or is_lasting_storage_error(error):
                undone = (
                    "nothing was published" if not problems
                    else f"undoing the other steps failed too ({'; '.join(problems)})"
                )
                message = f"cannot publish the {destination.label}: {first_line(error)}; {undone}"
                raise ColaOutputError(message) from error
            raise  # a passing failure (a timeout, a lost connection): undone, and the job may retry
    for problem in publication.commit():
        _LOG.warning("the split is published, but a backup could not be removed: %s", problem)


def clean_up(spark: SparkSession, fs: Files, staging: str, destinations: list[Destination]) -> None:
    """Remove the staging folders and tables (a published folder has been moved out already)."""
    for location in [staging, *(f for d in destinations for f in d.leftovers)]:
        try:
            fs.delete(location)
        except Exception as error:  # a leftover hidden folder is untidy, never read
            _LOG.warning("could not remove the staging folder %s: %s", location, first_line(error))
    for table in (t for d in destinations for t in d.leftover_tables):
        try:
            drop_table(spark, table)
        except Exception as error:
            _LOG.warning("could not drop the staging table %s: %s", table, first_line(error))

"""``split_write``: both outputs of a split from one evaluation of the input, published together.

The design, measured against caching and checkpointing in ``benchmarks/SPLIT_NOTES.md``:

1. **One write.** Every row, with the codes it breaks and its outcome (valid or invalid), is
   written once to a staging folder beside the destinations, partitioned by outcome. The
   block's plain aggregates and the two row counts are observed on that same write
   (``DataFrame.observe``), so the input is evaluated once: every row lands in exactly one
   output even when the input is not deterministic, and the counts are those of the rows
   written. So are the rows carrying each rejection code (a row breaking two rules counts
   under both), counted on the codes column the write stores. Distinct counts cannot be
   observed (Spark refuses DISTINCT in observed metrics), but a ``unique`` rule's is taken on
   the window its predicate computes anyway (the first row of each key is marked, and the
   marks counted); each other distinct column set costs its own pass, as in ``run``.
2. **Publish.** Each outcome's folder is moved into its destination (``cola_core.storage.publish``;
   a table's by the catalog, ``cola_core.storage.catalog``):
   a rename for a path output with the staging write's layout; otherwise its rows are first
   copied from staging (a deterministic read) into that destination's format, partitioning
   or table. If any step fails, the steps done are undone and nothing new is left at either
   destination.

The outputs have the schemas of :meth:`Cola.split`'s: valid the input's columns (then
``<annotate>_warnings`` when there are warning rules), invalid the input's columns, then the
annotate column, then the warnings. One write has one schema, the invalid side's, so with
``annotate`` the valid rows are copied once without the codes column (NULL on them) before
they are published; ``annotate_valid=True`` keeps that column in the valid output instead,
and spares the copy. ``benchmarks/SPLIT_NOTES.md`` has the measurements behind this.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.common.columns import column_of, quote, scope_column, shared_columns
from cola_core.common.formatting import render_code
from cola_core.common.spark_errors import first_line, is_evaluation_failure, is_lasting_storage_error
from cola_core.errors import ColaError, ColaOutputError
from cola_core.language.result import CheckResult
from cola_core.plan.planner import (
    BlockPlan,
    DistinctSet,
    checked_block,
    distinct_key,
    measure_block,
    plan_block,
    prepare_all,
)
from cola_core.plan.split import check_split_options, flag_rows
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
from cola_core.storage.publish import Files, Publication, file_system, publish_folder
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec, parse_output

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["SplitOutcome", "StagedSplit", "staged_split"]

_LOG = logging.getLogger(__name__)
VALID, INVALID = "valid", "invalid"
# Formats whose files a table's folder can receive directly: self-describing, so the files
# need none of the table's storage options (a csv table's header or separator).
_FILE_TABLE_PROVIDERS = ("parquet", "orc")


@dataclass(frozen=True)
class SplitOutcome:
    """What ``split_write`` measured and published.

    Attributes:
        results: one result per rule, in order, as ``Cola().run`` gives them.
        valid_count: the rows published to the valid output.
        invalid_count: the rows published to the invalid output.
        rejections: per rejection code, the invalid rows carrying it (in rule order, then
            ``quarantine_key(...)``; codes no row carries are left out). A row breaking two
            rules counts under both, so the sum is at least ``invalid_count``; a ``unique``
            rule's code counts every row of a duplicated key, not its ``failed_count``.
    """

    results: list[CheckResult]
    valid_count: int
    invalid_count: int
    rejections: dict[str, int] = field(default_factory=dict)


@dataclass
class _Destination:
    """One output of the split, and how it is published."""

    side: str
    spec: OutputSpec
    # "folder": a path renamed from staging; "copy": a path written from the staged rows
    # first; "new-table", "swap-table", "append-table" (see cola_core.storage.catalog).
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
class StagedSplit:
    """A split written to staging and measured, with nothing published yet.

    Attributes:
        results: what the staging write measured, one result per rule, in order.
        publish: publish both outputs together, and return the outcome with the results it is
            given (``results``, or those the caller made of them before publishing).
    """

    results: list[CheckResult]
    publish: Callable[[list[CheckResult]], SplitOutcome]


@contextmanager
def staged_split(
    df: DataFrame,
    checks: Sequence[BaseCheck],
    valid: Any,
    invalid: Any,
    *,
    annotate: str | None = None,
    quarantine_key: Sequence[str] | None = None,
    annotate_valid: bool = False,
) -> Iterator[StagedSplit]:
    """Measure ``checks`` on ``df`` and write its valid and invalid rows to staging, in one pass;
    the caller publishes them (``StagedSplit.publish``) inside the ``with`` block, after what
    must be done while the source is still as it was read (samples, a sql rule's own output):
    an output may overwrite it. Leaving the block cleans the staging up, published or not.

    Args:
        valid: where the rows that break no row-level rule go: an output config or a path.
        invalid: where the other rows go.
        annotate: the ``array<string>`` column of the codes each invalid row broke.
        quarantine_key: columns naming an entity whose rows are rejected together.
        annotate_valid: with ``annotate``, write its column (NULL) to the valid output as
            well, so that the valid rows are published as written, without a copy.

    Raises:
        ColaOutputError: a malformed or unwritable output, or a write or publish that failed;
            then nothing new is left at either destination.
        ColaRuleError: a rule Spark cannot run on ``df`` (before any job).
        ColaError: a row rule Spark cannot evaluate on the data, so no row can be placed.
    """
    destinations = [_Destination(VALID, parse_output(valid)), _Destination(INVALID, parse_output(invalid))]
    spark = df.sparkSession
    fs = file_system(spark)
    checks = checked_block(df, checks)
    row_checks = [check for check in checks if check.is_row_level]
    has_warn_rules = any(check.severity_level == "warn" for check in row_checks)
    check_split_options(df, annotate, quarantine_key, has_warn_rules)
    if not isinstance(annotate_valid, bool):
        raise ColaError(f"annotate_valid must be true or false, got {annotate_valid!r}")
    columns = _SideColumns.of(df, annotate, has_warn_rules, annotate_valid)
    for destination in destinations:
        _resolve(spark, fs, destination)
    _refuse_same_target(spark, *destinations)

    prepared = prepare_all(df, checks)
    plan = plan_block(df, checks, prepared)
    staging = _Staging.beside(spark, fs, destinations, renamed_first=columns.valid != columns.invalid)
    _refuse_unwritable_columns(columns, destinations, staging)
    try:
        written = _write_staging(fs, df, prepared, row_checks, plan, staging, annotate, quarantine_key)
        flagged = written.flagged
        for destination in destinations:
            _choose_route(fs, destination, staging, columns)
        results = measure_block(df, checks, prepared, plan, observed=written.observed,
                                distinct_counted=written.distinct)

        def publish(finished: list[CheckResult]) -> SplitOutcome:
            for destination in destinations:
                try:
                    _stage(spark, fs, destination, staging, flagged, columns)
                except ColaOutputError as error:
                    reason = first_line(error.__cause__) if error.__cause__ is not None else str(error)
                    message = f"cannot write the {destination.label}: {reason}; nothing was published"
                    raise ColaOutputError(message) from error
            _publish(spark, fs, destinations)
            return SplitOutcome(finished, written.counts[VALID], written.counts[INVALID], written.rejections)

        # A _RowRulesFailed raised while publishing comes back here, to the handler below.
        yield StagedSplit(results, publish)
    except _RowRulesFailed as failure:
        results = measure_block(df, checks, prepared, plan)
        unmeasured = [r.message for r in results if r.evaluation_failed]
        problem = "; ".join(unmeasured) if unmeasured else failure.reason
        raise ColaError(f"the split cannot be written, as a row rule fails on the data: {problem}") from None
    finally:
        _clean_up(spark, fs, staging.folder, destinations)


class _RowRulesFailed(Exception):
    """The staging write failed on the values of the data, even without observed aggregates."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Staging:
    """The staging write: where it goes, its layout, and the column naming its outcome folders.

    Attributes:
        folder: a fresh hidden folder beside a destination with a folder.
        layout: the format, options and partitioning of a path output (so that it is
            published by a rename), parquet when both outputs are tables.
        outcome: the column naming the outcome folders (``valid``/``invalid``).
    """

    folder: str
    layout: OutputSpec
    outcome: str

    @classmethod
    def beside(
        cls, spark: SparkSession, fs: Files, destinations: list[_Destination], *, renamed_first: bool
    ) -> _Staging:
        """Beside, and in the layout of, the path output that can be renamed: the invalid one
        when the valid rows are copied anyway (``renamed_first``), else the first path."""
        ordered = [destinations[1], destinations[0]] if renamed_first else destinations
        anchor = next((d for d in ordered if d.location is not None and d.spec.path is not None), None)
        if anchor is not None:
            assert anchor.location is not None
            folder = fs.sibling(anchor.location, "_cola_staging")
            # Read back for a copy, a csv or json file would not give the rows it was given
            # (a newline inside a value, microseconds, binary): the staging write is then parquet.
            lossless = anchor.spec.format in ("parquet", "orc")
            layout = anchor.spec if lossless else OutputSpec(path=folder, partition_by=anchor.spec.partition_by)
        else:
            table_folder = next((d.location for d in destinations if d.location is not None), None)
            if table_folder is not None:
                folder = fs.sibling(table_folder, "_cola_staging")
            else:
                warehouse = spark.conf.get("spark.sql.warehouse.dir", "spark-warehouse") or "spark-warehouse"
                folder = fs.child(fs.qualified(warehouse), f"_cola_staging_{uuid.uuid4().hex}")
            layout = OutputSpec(path=folder)
        return cls(folder, layout, f"__cola_outcome_{uuid.uuid4().hex}")

    def write_spec(self) -> OutputSpec:
        return OutputSpec(path=self.folder, format=self.layout.format,
                          partition_by=(self.outcome, *self.layout.partition_by), options=self.layout.options)

    def side(self, fs: Files, side: str) -> str:
        return fs.child(self.folder, f"{self.outcome}={side}")


@dataclass(frozen=True)
class _SideColumns:
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
    def of(cls, df: DataFrame, annotate: str | None, has_warn_rules: bool, annotate_valid: bool) -> _SideColumns:
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


@dataclass(frozen=True)
class _Written:
    """What the staging write measured, and what it holds.

    Attributes:
        observed: the block's aggregates, or ``None`` when they were left to a scan of their own.
        distinct: the distinct counts taken on the write's windows.
        counts: the rows written per outcome (``valid``, ``invalid``).
        rejections: the rows written per rejection code, codes no row carries left out.
        flagged: what the write holds.
    """

    observed: list[Any] | None
    distinct: dict[DistinctSet, int]
    counts: dict[str, int]
    rejections: dict[str, int]
    flagged: _Flagged


def _write_staging(
    fs: Files,
    df: DataFrame,
    prepared: DataFrame,
    row_checks: Sequence[BaseCheck],
    plan: BlockPlan,
    staging: _Staging,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
) -> _Written:
    """The one write of every row, and what it measured.

    The aggregates ride on the write when Spark can observe them all; a plan it refuses to
    observe, or a value on which an aggregate fails, leaves them to ``measure_block``'s own
    scan (which measures each rule apart when one fails on the data). The rows per outcome and
    per code are observed on every attempt: plain counts of the codes column, which Spark
    observes whenever it can write the rows at all.
    """
    aggregates = plan.aggregates
    windowed = _windowed_sets(row_checks, plan)
    for observe_aggregates in ([True, False] if aggregates else [False]):
        try:
            flagged = _flagged(df, prepared, row_checks, staging, annotate, quarantine_key, windowed,
                               aggregates if observe_aggregates else ())
        except Exception as error:  # Spark refused to observe an aggregate (analysis: no job ran)
            if not observe_aggregates:
                raise
            _LOG.info("the block's aggregates get a scan of their own: %s", first_line(error))
            continue
        try:
            write_output(flagged.rows, staging.write_spec())
        except Exception as error:
            fs.delete(staging.folder)
            # write_output turns a refusal of the target into a ColaOutputError; what the rows'
            # evaluation raised (a value Spark fails on, a rule that exhausts the memory) is
            # Spark's own error.
            cause = (error.__cause__ or error) if isinstance(error, ColaOutputError) else error
            if not is_evaluation_failure(cause):
                if not isinstance(error, ColaOutputError):
                    raise
                raise ColaOutputError(
                    f"cannot write the split to its staging folder {staging.folder}: {first_line(cause)}; "
                    "nothing was published"
                ) from error
            if observe_aggregates:
                continue
            raise _RowRulesFailed(first_line(cause)) from error
        values = flagged.observation.get
        observed = [values[f"a{n}"] for n in range(len(aggregates))] if observe_aggregates else None
        distinct = {distinct_set: int(values[f"d{n}"]) for n, (distinct_set, _) in enumerate(windowed)}
        counted = ((code, int(values[f"r{n}"])) for n, code in enumerate(flagged.codes))
        return _Written(
            observed, distinct, {VALID: int(values[VALID]), INVALID: int(values[INVALID])},
            {code: rows for code, rows in counted if rows}, flagged,
        )
    raise AssertionError("the last attempt returns or raises")


def _windowed_sets(row_checks: Sequence[BaseCheck], plan: BlockPlan) -> list[tuple[DistinctSet, tuple[str, ...]]]:
    """The block's distinct sets that a blocking row rule partitions a window by anyway
    (``unique``): each with the window's columns, in the rule's order."""
    needed = set(plan.distinct_sets)
    found: dict[DistinctSet, tuple[str, ...]] = {}
    for check in row_checks:
        keys = check.window_keys()
        if keys is None or check.severity_level == "warn":
            continue
        distinct_set = distinct_key(keys, check.where)
        if distinct_set in needed:
            found.setdefault(distinct_set, keys)
    return list(found.items())


def _first_row_marks(
    df: DataFrame, scanned: DataFrame, windowed: list[tuple[DistinctSet, tuple[str, ...]]]
) -> tuple[DataFrame, list[Column]]:
    """``scanned`` with a row id, and for each windowed set a boolean column marking the first
    row of each key (the least row id in the rule's scope).

    The marks are computed in the split's own projection, with the same window as the rule's
    predicate, so Spark evaluates both in one Window operator on one shuffle: the count of
    marked rows is the set's distinct count, with no pass of its own.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not windowed:
        return scanned, []
    row_id = f"__cola_row_{uuid.uuid4().hex}"
    marked = scanned.withColumn(row_id, F.monotonically_increasing_id())
    marks = []
    for number, ((_, where), keys) in enumerate(windowed):
        scope = scope_column(where)
        in_scope = F.col(row_id) if scope is None else F.when(scope, F.col(row_id))
        first = F.min(in_scope).over(Window.partitionBy(*(column_of(df, key) for key in keys))) == F.col(row_id)
        marks.append(first.alias(f"__cola_first_{number}_{row_id}"))
    return marked, marks


@dataclass(frozen=True)
class _Flagged:
    """The rows of the staging write: the invalid side's columns, then the outcome.

    Attributes:
        rows: the rows to write.
        observation: what the write measures, in one observation: the block's aggregates
            (``a0``...), the distinct counts of the first-row marks (``d0``...), the rows
            per outcome (``valid``, ``invalid``), and the rows carrying each of ``codes``
            (``r0``...).
        read_schema: the schema of an outcome's folder read back (all but the outcome).
        codes: every rejection code a row can carry, each once, in rule order.
    """

    rows: DataFrame
    observation: Any
    read_schema: StructType
    codes: tuple[str, ...]


def _flagged(
    df: DataFrame,
    prepared: DataFrame,
    row_checks: Sequence[BaseCheck],
    staging: _Staging,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
    windowed: list[tuple[DistinctSet, tuple[str, ...]]],
    aggregates: Sequence[Column],
) -> _Flagged:
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    scanned, marks = _first_row_marks(df, prepared, windowed)
    # The checks' helper columns ride along to the one observation, which the aggregates read.
    own = set(df.columns)
    helpers = [F.col(quote(name)) for name in prepared.columns if name not in own]
    flagged = flag_rows(df, scanned, row_checks, annotate, quarantine_key, riders=[*helpers, *marks])
    mark_names = flagged.rows.columns[len(flagged.rows.columns) - len(marks):]
    rejected = F.size(F.col(flagged.codes)) > 0
    codes = _possible_codes(prepared, row_checks, quarantine_key)
    observation = Observation(f"cola_split_{uuid.uuid4().hex}")
    measured = flagged.rows.observe(
        observation,
        *(aggregate.alias(f"a{number}") for number, aggregate in enumerate(aggregates)),
        *(F.count(F.when(F.col(name), 1)).alias(f"d{number}") for number, name in enumerate(mark_names)),
        F.count(F.when(~rejected, 1)).alias(VALID),
        F.count(F.when(rejected, 1)).alias(INVALID),
        # Counted on the array the write stores, so each code's count is that of the rows
        # published with it, whatever put it there (a rule, a spread over quarantine_key).
        *(F.count(F.when(F.array_contains(F.col(flagged.codes), code), 1)).alias(f"r{number}")
          for number, code in enumerate(codes)),
    )
    # NULL on valid rows: nothing to store, and nothing to read for a valid output that keeps it.
    stored_codes = [F.when(rejected, F.col(flagged.codes)).alias(annotate)] if annotate else []
    warnings = [F.col(flagged.warnings).alias(f"{annotate}_warnings")] if flagged.warnings else []
    rows = measured.select(
        *(F.col(quote(name)) for name in flagged.columns), *stored_codes, *warnings,
        F.when(rejected, F.lit(INVALID)).otherwise(F.lit(VALID)).alias(staging.outcome),
    )
    read_schema = StructType([field for field in rows.schema.fields if field.name != staging.outcome])
    return _Flagged(rows=rows, observation=observation, read_schema=read_schema, codes=codes)


def _possible_codes(
    prepared: DataFrame, row_checks: Sequence[BaseCheck], quarantine_key: Sequence[str] | None
) -> tuple[str, ...]:
    """Every code a row's blocking codes can hold, each once, in rule order: the codes the
    blocking rules' predicates name (as ``flag_rows`` builds them: one per column for a
    multi-column ``not_null`` or ``reference_match``), then the ``quarantine_key`` one.

    Warning rules are left out: their codes never reject a row."""
    blocking = [check for check in row_checks if check.severity_level != "warn"]
    # Only the codes are read; the predicates are built again, shared as flag_rows shares them.
    with shared_columns():
        codes = dict.fromkeys(code for check in blocking for code, _ in check.violations(prepared))
    if quarantine_key:
        codes[render_code("quarantine_key", *quarantine_key)] = None
    return tuple(codes)


def _with_path(spec: OutputSpec, path: str) -> OutputSpec:
    return OutputSpec(path=path, format=spec.format, mode="errorifexists", partition_by=spec.partition_by,
                      options=spec.options)


def _resolve(spark: SparkSession, fs: Files, destination: _Destination) -> None:
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


def _exists(destination: _Destination) -> ColaOutputError:
    return ColaOutputError(
        f"the {destination.label} already exists and its mode is {destination.spec.mode!r}; "
        "set \"mode\" to \"overwrite\" or \"append\", or choose another target"
    )


def _refuse_same_target(spark: SparkSession, valid: _Destination, invalid: _Destination) -> None:
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


def _choose_route(fs: Files, destination: _Destination, staging: _Staging, columns: _SideColumns) -> None:
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


def _refuse_unwritable_columns(columns: _SideColumns, destinations: list[_Destination], staging: _Staging) -> None:
    """Refuse, before any job, a CSV output of the codes arrays, or rows a table cannot take."""
    if columns.arrays[INVALID] and staging.layout.format == "csv":
        raise _csv_error(columns.arrays[INVALID][0])
    for destination in destinations:
        facts = destination.facts
        output_format = facts.provider if facts is not None else destination.spec.format
        arrays = columns.arrays[destination.side]
        if arrays and output_format == "csv":
            raise _csv_error(arrays[0])
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


def _csv_error(column: str) -> ColaOutputError:
    return ColaOutputError(
        f"a csv output cannot hold the array column {column!r}; write parquet, orc or json, or leave out annotate"
    )


def _stage(
    spark: SparkSession,
    fs: Files,
    destination: _Destination,
    staging: _Staging,
    flagged: _Flagged,
    columns: _SideColumns,
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
            empty = _read_staged(spark, fs, staging, flagged, columns.of_side(side), side)
            write_output(empty, _with_path(staging.layout, folder))
            destination.staged = folder
        return
    rows = _read_staged(spark, fs, staging, flagged, columns.of_side(side), side)
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


def _read_staged(
    spark: SparkSession, fs: Files, staging: _Staging, flagged: _Flagged, columns: Sequence[str], side: str
) -> DataFrame:
    """One side's rows, read back from staging with that side's columns: a plain read of files
    already written, so the same rows whatever the input does meanwhile."""
    folder = staging.side(fs, side)
    if fs.exists(folder):
        reader = spark.read.format(staging.layout.format or "parquet").options(**staging.layout.options)
        rows = reader.schema(flagged.read_schema).load(folder)
    else:
        rows = spark.createDataFrame([], flagged.read_schema)
    return rows.select(*(quote(name) for name in columns))


def _publish(spark: SparkSession, fs: Files, destinations: list[_Destination]) -> None:
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


def _clean_up(spark: SparkSession, fs: Files, staging: str, destinations: list[_Destination]) -> None:
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

"""The staging write of ``staged_split``: every row of the input once, measured as it is written.

One write holds every row with the codes it breaks and its outcome, partitioned by outcome
(``valid``/``invalid``) in a hidden folder beside the destinations. The block's plain
aggregates, the rows per outcome, the rows per rejection code and the distinct counts a
``unique`` rule's window gives are observed on that write, so the input is evaluated once;
each side's rows are then read back from the files (``read_staged``), never from the input.

Apart from ``split_destinations`` (where each output goes and how it is published from these
rows) and ``staged_split`` (the order of the steps): this module knows the rows and the
measurements, not the destinations' modes, formats or tables.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cola_core.checks.base import BaseCheck
from cola_core.common.columns import column_of, quote, scope_column
from cola_core.common.spark_errors import first_line, is_evaluation_failure
from cola_core.errors import ColaOutputError
from cola_core.plan.planner import BlockPlan, DistinctSet, distinct_key
from cola_core.plan.split import FlaggedRows, flag_rows
from cola_core.storage.publish import Files
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = [
    "INVALID",
    "VALID",
    "Flagged",
    "Located",
    "RowRulesFailed",
    "Staging",
    "Written",
    "evaluate_once",
    "read_staged",
    "write_staging",
]

_LOG = logging.getLogger(__name__)
# The outcomes, which name the sides of the split: the staging write's partition values, and the
# keys of its rows per outcome.
VALID, INVALID = "valid", "invalid"


class Located(Protocol):
    """An output the staging can be placed beside (a split's destination)."""

    @property
    def spec(self) -> OutputSpec: ...

    @property
    def location(self) -> str | None:
        """Its qualified folder: a path output's, or that of the table it appends to; ``None``
        for a table it creates or replaces."""


class RowRulesFailed(Exception):
    """The staging write failed on the values of the data, even without observed aggregates."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Staging:
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
        cls, spark: SparkSession, fs: Files, destinations: Sequence[Located], *, renamed_first: bool
    ) -> Staging:
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
class Written:
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
    flagged: Flagged


def write_staging(
    fs: Files,
    df: DataFrame,
    prepared: DataFrame,
    checks: Sequence[BaseCheck],
    plan: BlockPlan,
    staging: Staging,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
) -> Written:
    """The one write of every row to the staging folder, and what it measured
    (:func:`evaluate_once`, whose rows are kept as that write)."""

    def keep(rows: DataFrame) -> None:
        try:
            write_output(rows, staging.write_spec())
        except Exception:
            fs.delete(staging.folder)
            raise

    return evaluate_once(df, prepared, checks, plan, staging.outcome, annotate, quarantine_key, keep,
                         f"write the split to its staging folder {staging.folder}")


def evaluate_once(
    df: DataFrame,
    prepared: DataFrame,
    checks: Sequence[BaseCheck],
    plan: BlockPlan,
    outcome: str,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
    keep: Callable[[DataFrame], None],
    doing: str,
) -> Written:
    """Every row once, with its codes and outcome, given to ``keep`` (a write, or a pin in
    the executors), and what that one evaluation measured.

    The aggregates ride on it when Spark can observe them all; a plan it refuses to
    observe, or a value on which an aggregate fails, leaves them to ``measure_block``'s own
    scan (which measures each rule apart when one fails on the data). The rows per outcome and
    per code are observed on every attempt: plain counts of the codes column, which Spark
    observes whenever it can evaluate the rows at all. An aggregate that counts the rows
    carrying one code (a row rule's offending rows) is read off that code's count, rather than
    evaluating the rule's predicate a second time. ``keep`` leaves nothing behind when it
    fails; ``doing`` says what it does, for the error.

    Args:
        checks: the block's checks (``plan``'s), in order; its row checks split the rows.
    """
    aggregates = plan.aggregates
    row_checks = [check for check in checks if check.is_row_level]
    windowed = _windowed_sets(row_checks, plan)
    for observe_aggregates in ([True, False] if aggregates else [False]):
        try:
            flagged = _flagged(df, prepared, row_checks, outcome, annotate, quarantine_key, windowed,
                               (checks, plan) if observe_aggregates else None)
        except Exception as error:  # Spark refused to observe an aggregate (analysis: no job ran)
            if not observe_aggregates:
                raise
            _LOG.info("the block's aggregates get a scan of their own: %s", first_line(error))
            continue
        try:
            keep(flagged.rows)
        except Exception as error:
            # write_output turns a refusal of the target into a ColaOutputError; what the rows'
            # evaluation raised (a value Spark fails on, a rule that exhausts the memory) is
            # Spark's own error.
            cause = (error.__cause__ or error) if isinstance(error, ColaOutputError) else error
            if not is_evaluation_failure(cause):
                if not isinstance(error, ColaOutputError):
                    raise
                raise ColaOutputError(f"cannot {doing}: {first_line(cause)}; nothing was published") from error
            if observe_aggregates:
                continue
            raise RowRulesFailed(first_line(cause)) from error
        values = flagged.observation.get
        observed = None
        if observe_aggregates:
            from_codes = flagged.aggregates_from_codes
            observed = [values[f"r{from_codes[n]}"] if n in from_codes else values[f"a{n}"]
                        for n in range(len(aggregates))]
        counts = {VALID: int(values[VALID]), INVALID: int(values[INVALID])}
        distinct = {distinct_set: count for n, (distinct_set, _) in enumerate(windowed)
                    if (count := _distinct_of_shares(values[f"d{n}"], sum(counts.values()))) is not None}
        counted = ((code, int(values[f"r{n}"])) for n, code in enumerate(flagged.codes))
        return Written(observed, distinct, counts, {code: rows for code, rows in counted if rows}, flagged)
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


# What each key of a windowed set shares out between its rows in scope (see _key_shares): the
# count is exact while a set has at most this many rows in scope, and the sum of the shares
# (at most rows x SHARE) cannot then overflow a long.
SHARE = 1 << 31


def _key_shares(df: DataFrame, windowed: list[tuple[DistinctSet, tuple[str, ...]]]) -> list[Column]:
    """For each windowed set, a long column: each row in scope holds ``SHARE // c``, where c is
    the rows in scope with its key (NULL outside the scope).

    A key's c rows then hold ``SHARE - SHARE % c`` between them, which is more than
    ``SHARE - c``: the sum over the rows, ``total``, is ``keys x SHARE`` less at most ``rows -
    keys``, so while ``rows <= SHARE`` the number of keys is ``ceil(total / SHARE)``, exactly
    (:func:`_distinct_of_shares`). The count per key is the window the rule's predicate already
    computes (same keys, same scope), so Spark evaluates both in one Window operator on one
    shuffle, and the distinct count takes no pass of its own nor a row id through the shuffle.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    shares = []
    whole = F.lit(SHARE)
    for number, ((_, where), keys) in enumerate(windowed):
        scope = scope_column(where)
        one = F.lit(1)
        rows_of_key = F.count(one if scope is None else F.when(scope, one)).over(
            Window.partitionBy(*(column_of(df, key) for key in keys)))
        # Never 0 as a divisor (a row out of scope whose key has no row in it), even where
        # Spark evaluates the share before it drops it.
        divisor = F.greatest(rows_of_key, one)
        # (SHARE - SHARE % c) / c is a whole number below 2^31, which a double divides exactly.
        share = ((whole - F.pmod(whole, divisor)) / divisor).cast("long")
        name = f"__cola_share_{number}_{uuid.uuid4().hex}"
        shares.append((share if scope is None else F.when(scope, share)).alias(name))
    return shares


def _distinct_of_shares(total: int | None, rows: int) -> int | None:
    """The number of keys whose shares (:func:`_key_shares`) sum to ``total`` over at most
    ``rows`` rows, or None when it cannot be told exactly (more rows than ``SHARE``): the set
    is then counted apart. Up to ``SHARE`` rows the sum cannot overflow, so a NULL sum means
    that no row was in scope."""
    if rows > SHARE:
        return None
    return 0 if total is None else -(-int(total) // SHARE)


@dataclass(frozen=True)
class Flagged:
    """The rows of the staging write: the invalid side's columns, then the outcome.

    Attributes:
        rows: the rows to write.
        observation: what the write measures, in one observation: the block's aggregates
            (``a0``...), the sums of the key shares (``d0``...), the rows
            per outcome (``valid``, ``invalid``), and the rows carrying each of ``codes``
            (``r0``...).
        read_schema: the schema of an outcome's folder read back (all but the outcome).
        codes: every rejection code a row can carry, each once, in rule order.
        aggregates_from_codes: the block's aggregates read off a code's count instead of
            observed: position in the plan's aggregates -> index in ``codes``.
    """

    rows: DataFrame
    observation: Any
    read_schema: StructType
    codes: tuple[str, ...]
    aggregates_from_codes: Mapping[int, int]


def _flagged(
    df: DataFrame,
    prepared: DataFrame,
    row_checks: Sequence[BaseCheck],
    outcome: str,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
    windowed: list[tuple[DistinctSet, tuple[str, ...]]],
    block: tuple[Sequence[BaseCheck], BlockPlan] | None,
) -> Flagged:
    """The rows to keep and their observation, whose aggregates are those of ``block`` (its
    checks and their plan), or none."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    shares = _key_shares(df, windowed)
    # The checks' helper columns ride along to the one observation, which the aggregates read.
    own = set(df.columns)
    helpers = [F.col(quote(name)) for name in prepared.columns if name not in own]
    flagged = flag_rows(df, prepared, row_checks, annotate, quarantine_key, riders=[*helpers, *shares])
    share_names = flagged.rows.columns[len(flagged.rows.columns) - len(shares):]
    rejected = F.size(F.col(flagged.codes)) > 0
    codes = flagged.possible_codes
    aggregates = [] if block is None else block[1].aggregates
    from_codes = {} if block is None else _aggregates_from_codes(*block, flagged)
    observation = Observation(f"cola_split_{uuid.uuid4().hex}")
    measured = flagged.rows.observe(
        observation,
        *(aggregate.alias(f"a{number}") for number, aggregate in enumerate(aggregates) if number not in from_codes),
        *(F.try_sum(F.col(name)).alias(f"d{number}") for number, name in enumerate(share_names)),
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
        F.when(rejected, F.lit(INVALID)).otherwise(F.lit(VALID)).alias(outcome),
    )
    read_schema = StructType([field for field in rows.schema.fields if field.name != outcome])
    return Flagged(rows=rows, observation=observation, read_schema=read_schema, codes=codes,
                   aggregates_from_codes=from_codes)


def _aggregates_from_codes(checks: Sequence[BaseCheck], plan: BlockPlan, flagged: FlaggedRows) -> dict[int, int]:
    """The aggregates that count exactly the rows carrying one code (``BaseCheck.counted_codes``):
    position in ``plan.aggregates`` -> index in ``flagged.possible_codes``.

    A code counts a check's rows only when no other check's predicates put it on a row: not a
    code two rules declare alike, nor the one ``quarantine_key`` spreads over a key's rows.
    """
    carriers = Counter(code for _, codes in flagged.codes_of_checks for code in set(codes))
    possible = flagged.possible_codes
    index_of = {id(check): index for index, check in enumerate(checks)}
    from_codes: dict[int, int] = {}
    for check, codes in flagged.codes_of_checks:
        index = index_of.get(id(check))
        positions = plan.positions.get(index) if index is not None else None
        if positions is None:
            continue
        # A shorter list of counted codes leaves the check's last aggregates observed.
        for position, code in zip(positions, check.counted_codes(codes), strict=False):
            if code is not None and code in codes and carriers[code] == 1 and code != flagged.spread_code:
                from_codes[position] = possible.index(code)
    return from_codes


def read_staged(
    spark: SparkSession, fs: Files, staging: Staging, flagged: Flagged, columns: Sequence[str], side: str
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

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
2. **Publish.** Each outcome's folder is moved into its destination (``cola_core.storage.publish``):
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

This module orders the steps; ``staging_write`` makes the one write and what it measures,
``split_destinations`` resolves, stages and publishes the two outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.common.spark_errors import first_line
from cola_core.errors import ColaError, ColaOutputError
from cola_core.language.result import CheckResult
from cola_core.plan.planner import BlockPlan, measure_block, plan_block, prepare_all
from cola_core.plan.preflight import checked_block
from cola_core.plan.split import check_split_options
from cola_core.plan.split_destinations import (
    Destination,
    SideColumns,
    choose_route,
    clean_up,
    publish_both,
    refuse_same_target,
    refuse_unwritable_columns,
    resolve,
    stage,
)
from cola_core.plan.staging_write import INVALID, VALID, RowRulesFailed, Staging, write_staging
from cola_core.storage.publish import file_system
from cola_core.storage.specs import parse_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["SplitOutcome", "StagedSplit", "checked_split_block", "row_rules_failed", "staged_split"]


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
    destinations = [Destination(VALID, parse_output(valid)), Destination(INVALID, parse_output(invalid))]
    spark = df.sparkSession
    fs = file_system(spark)
    checks, columns = checked_split_block(df, checks, annotate, quarantine_key, annotate_valid)
    for destination in destinations:
        resolve(spark, fs, destination)
    refuse_same_target(spark, *destinations)

    prepared = prepare_all(df, checks)
    plan = plan_block(df, checks, prepared)
    staging = Staging.beside(spark, fs, destinations, renamed_first=columns.valid != columns.invalid)
    refuse_unwritable_columns(columns, destinations, staging)
    try:
        written = write_staging(fs, df, prepared, checks, plan, staging, annotate, quarantine_key)
        flagged = written.flagged
        for destination in destinations:
            choose_route(fs, destination, staging, columns)
        results = measure_block(df, checks, prepared, plan, observed=written.observed,
                                distinct_counted=written.distinct)

        def publish(finished: list[CheckResult]) -> SplitOutcome:
            for destination in destinations:
                try:
                    stage(spark, fs, destination, staging, flagged, columns)
                except ColaOutputError as error:
                    reason = first_line(error.__cause__) if error.__cause__ is not None else str(error)
                    message = f"cannot write the {destination.label}: {reason}; nothing was published"
                    raise ColaOutputError(message) from error
            publish_both(spark, fs, destinations)
            return SplitOutcome(finished, written.counts[VALID], written.counts[INVALID], written.rejections)

        # A RowRulesFailed raised while publishing comes back here, to the handler below.
        yield StagedSplit(results, publish)
    except RowRulesFailed as failure:
        raise row_rules_failed(df, checks, prepared, plan, failure) from None
    finally:
        clean_up(spark, fs, staging.folder, destinations)


def checked_split_block(
    df: DataFrame,
    checks: Sequence[BaseCheck],
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
    annotate_valid: bool,
) -> tuple[list[BaseCheck], SideColumns]:
    """The block checked for a split, before any job: its checks (bound) and the columns of
    each output.

    Raises:
        ColaRuleError: a rule Spark cannot run on ``df``.
        ColaError: split options that do not fit ``df`` (``check_split_options``), or an
            ``annotate_valid`` that is not a bool.
    """
    checked = checked_block(df, checks)
    row_checks = [check for check in checked if check.is_row_level]
    has_warn_rules = any(check.severity_level == "warn" for check in row_checks)
    check_split_options(df, annotate, quarantine_key, has_warn_rules)
    if not isinstance(annotate_valid, bool):
        raise ColaError(f"annotate_valid must be true or false, got {annotate_valid!r}")
    return checked, SideColumns.of(df, annotate, has_warn_rules, annotate_valid)


def row_rules_failed(
    df: DataFrame, checks: Sequence[BaseCheck], prepared: DataFrame, plan: BlockPlan, failure: RowRulesFailed
) -> ColaError:
    """The error of a split whose rows Spark could not evaluate: each rule measured apart
    names the ones that fail on the data (or, if none does alone, Spark's own reason)."""
    results = measure_block(df, checks, prepared, plan)
    unmeasured = [r.message for r in results if r.evaluation_failed]
    problem = "; ".join(unmeasured) if unmeasured else failure.reason
    return ColaError(f"the split cannot be written, as a row rule fails on the data: {problem}")

"""A split whose one evaluation is kept in the executors, each side then written where it is told.

``staged_split`` keeps its one evaluation as files (every row written once, partitioned by
outcome) so that it can publish both outputs by renames. A caller that publishes the outputs
itself from folders of its own (a streaming split's ledger, ``cola_core.job.stream``) needs
neither the renames nor that write: here the rows, their codes and their outcome are
evaluated once and pinned in the executors (Spark's ``localCheckpoint``, memory then disk),
measured as they are pinned (the same observation as the staging write's), and each side is
written from the pinned rows straight to its own output, in its own columns. With
``annotate`` this spares the copy of the valid rows that a single staging write needs (one
write has one schema, the invalid side's); ``benchmarks/stream.py`` measures it.

Pinned rows are never computed again: if their blocks are lost (an executor gone) a write
fails with ``CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND`` (:class:`PinnedRowsLost`) rather than reading
the input a second time, so every row still lands in exactly one output or the split fails.
The blocks are released when the split ends.

It needs a classic session: over Spark Connect, a ``localCheckpoint`` is a command whose
reply carries no observed metrics, so the measurements could not ride on the pin (a
streaming split over Connect stages its batches as files, with ``staged_split``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.common.columns import quote
from cola_core.common.sessions import is_classic
from cola_core.common.spark_errors import first_line
from cola_core.errors import ColaError, ColaOutputError
from cola_core.language.result import CheckResult
from cola_core.plan.planner import measure_block, plan_block, prepare_all
from cola_core.plan.split_destinations import refuse_csv_arrays
from cola_core.plan.staged_split import SplitOutcome, StagedSplit, checked_split_block, row_rules_failed
from cola_core.plan.staging_write import INVALID, VALID, RowRulesFailed, evaluate_once
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import parse_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["PinnedRowsLost", "pinned_split"]

_LOG = logging.getLogger(__name__)
# The condition Spark raises when a pinned (locally checkpointed) block is gone.
_LOST_BLOCK = "CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND"


class PinnedRowsLost(ColaOutputError):
    """The pinned rows were lost before both sides were written (an executor gone): the
    split is to be run again from its input, which nothing of it has been published to."""


@contextmanager
def pinned_split(
    df: DataFrame,
    checks: Sequence[BaseCheck],
    valid: Any,
    invalid: Any,
    *,
    annotate: str | None = None,
    quarantine_key: Sequence[str] | None = None,
    annotate_valid: bool = False,
) -> Iterator[StagedSplit]:
    """Measure ``checks`` on ``df`` and pin its rows; ``StagedSplit.publish`` then writes each
    side to its output (``valid``, ``invalid``: outputs the caller owns and publishes, such
    as fresh folders). The outputs, columns and codes are ``staged_split``'s.

    Raises:
        ColaRuleError: a rule Spark cannot run on ``df`` (before any job).
        ColaError: a row rule Spark cannot evaluate on the data, so no row can be placed.
        ColaOutputError: a side that could not be written (what was written of it is the
            caller's to remove); :class:`PinnedRowsLost` when the pinned rows were lost.
    """
    if not is_classic(df):
        raise ColaError("a pinned split needs a classic Spark session: over Spark Connect, use staged_split")
    outputs = {VALID: parse_output(valid), INVALID: parse_output(invalid)}
    checks, columns = checked_split_block(df, checks, annotate, quarantine_key, annotate_valid)
    for side, spec in outputs.items():
        refuse_csv_arrays(columns.arrays[side], spec.format)
    prepared = prepare_all(df, checks)
    plan = plan_block(df, checks, prepared)
    outcome = f"__cola_outcome_{uuid.uuid4().hex}"
    pins: list[DataFrame] = []
    try:
        written = evaluate_once(df, prepared, checks, plan, outcome, annotate, quarantine_key,
                                lambda rows: pins.append(rows.localCheckpoint(eager=True)),
                                "evaluate the split's rows")
        pinned = pins[-1]
        results = measure_block(df, checks, prepared, plan, observed=written.observed,
                                distinct_counted=written.distinct)

        def publish(finished: list[CheckResult]) -> SplitOutcome:
            from pyspark.sql import functions as F

            for side, spec in outputs.items():
                rows = pinned.where(F.col(outcome) == side).select(*(quote(name) for name in columns.of_side(side)))
                try:
                    write_output(rows, spec)
                except Exception as error:
                    reason = first_line(error.__cause__ or error)
                    if _LOST_BLOCK in str(error) or _LOST_BLOCK in str(error.__cause__ or ""):
                        raise PinnedRowsLost(f"the split's rows were lost before the {side} side was written: "
                                             f"{reason}") from error
                    raise ColaOutputError(f"cannot write the {side} output {spec.target}: {reason}") from error
            return SplitOutcome(finished, written.counts[VALID], written.counts[INVALID], written.rejections)

        yield StagedSplit(results, publish)
    except RowRulesFailed as failure:
        raise row_rules_failed(df, checks, prepared, plan, failure) from None
    finally:
        for pin in pins:
            _release(pin)


def _release(pinned: DataFrame) -> None:
    """Free the pinned blocks now rather than when the JVM collects the DataFrame: a stream
    pins a batch at a time, and would otherwise keep every earlier batch on the executors'
    disks until then."""
    try:
        rdd_id = pinned._jdf.queryExecution().analyzed().rdd().id()
        # The context's own call, not RDD.unpersist, which warns on every locally checkpointed
        # RDD that its lineage cannot be recomputed (it need not be: the split is over).
        pinned.sparkSession.sparkContext._jsc.sc().unpersistRDD(rdd_id, False)
    except Exception as error:  # a plan of another shape: the JVM's collector frees it later
        _LOG.debug("the pinned rows were left to Spark to free: %s", first_line(error))

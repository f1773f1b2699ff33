"""Streaming splits: each micro-batch of a Structured Streaming query split and published once.

Every micro-batch is split as ``split_write`` splits a DataFrame (the same rules, codes and
columns), and its rows are published to the two destinations exactly once, even when the
query is killed half-way and restarted on its checkpoint, which runs the unfinished batch
again with the same rows. Structured Streaming guarantees the same batch id and rows for a
batch it runs again; this module makes its publication idempotent with a ledger kept in the
query's checkpoint folder (``<checkpoint>/_cola``):

1. a batch whose ``done/<batch id>.json`` record exists was published already (the query
   stopped before Spark recorded the batch as committed): it is not published again;
2. otherwise, the files an earlier attempt may have moved in (``pending/<batch id>.json``
   lists them, written before the first move) are deleted, so nothing of a half-published
   attempt stays;
3. the batch is split into staging folders under the ledger: its rows evaluated once and
   pinned in the executors (``plan.pinned_split``), each side written from them in its
   destination's format and columns (split again once if the pinned rows were lost, an
   executor gone); the history rows are written beside them, the list of files about to be
   moved is written to ``pending/<batch id>.json``, and each file is moved into its
   destination (the valid side, the invalid side, the history store); a failure moves back
   what was moved;
4. ``done/<batch id>.json`` records the batch (counts and results), then the pending list
   and the staging folders are removed. A run with a key (``split_stream``'s ``run_key``) also
   lists the batch in ``runs/<hash of the key>/``, so that a rerun reports it again.

The ledger's records (``cola_core.job.ledger``) are each written whole or not at all. A batch
record says which block of rules judged it: a run's answer combines its batches' results rule
by rule, so a rerun of a run under a changed block is refused (its earlier batches were judged
by the other block and cannot be judged again: their rows are published), and a batch another
run published is reported by that run only, unless the same block judged it.

A batch is therefore published completely once, or, after a crash, its partial files are
removed before it runs again; between a crash and the restart a reader may see the files of
the interrupted batch (a folder of files has no atomic multi-file append). Destinations are
paths (partitioned or not); a table, whose catalog cannot take a batch's files as one step,
is refused, as is a history store that is a table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import posixpath
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.common.sessions import is_classic
from cola_core.errors import ColaError, ColaOutputError
from cola_core.guards.sqlguard import allowing_outside_access, outside_access_allowed
from cola_core.history.append import history_frame
from cola_core.history.store import RunInfo, check_history_store
from cola_core.job.blocks import run_split, with_history_baselines
from cola_core.job.ledger import Ledger
from cola_core.job.stream_records import BATCH_LINES, NOTHING_NEW, BatchRecord, StreamSummary, block_digest
from cola_core.plan.pinned_split import PinnedRowsLost
from cola_core.plan.staged_split import SplitOutcome
from cola_core.storage.publish import Files, file_system
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec, parse_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.query import StreamingQuery

__all__ = ["BATCH_LINES", "NOTHING_NEW", "BatchRecord", "StreamSummary", "split_batch", "split_stream"]

_LOG = logging.getLogger(__name__)
LEDGER = "_cola"
# Triggers that process what is there and stop: split_stream waits for them and sums up.
FINITE_TRIGGERS = ("availableNow", "once")
# The metadata key Spark sets on the event-time column of a stream with a watermark.
WATERMARK_KEY = "spark.watermarkDelayMs"

def _path_output(value: Any, label: str) -> OutputSpec:
    try:
        spec = parse_output(value)
    except ColaError as error:
        raise ColaOutputError(f"{label}: {error}") from error
    if spec.path is None:
        raise ColaOutputError(
            f"{label}: a streaming split writes to paths; a table's catalog cannot take a batch's files exactly "
            "once (write to the table's path, or split each batch with split_write)"
        )
    if spec.mode not in ("append", "errorifexists"):
        raise ColaOutputError(f"{label}: a streaming split appends each batch; mode {spec.mode!r} is not allowed")
    return spec


def split_batch(
    batch: DataFrame,
    batch_id: int,
    checks: list[BaseCheck],
    valid: OutputSpec,
    invalid: OutputSpec,
    ledger_root: str,
    *,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
    history: OutputSpec | None,
    run_info: RunInfo | None,
    annotate_valid: bool = False,
    samples: int = 0,
    run_key: str | None = None,
) -> BatchRecord:
    """Split one micro-batch and publish it exactly once (see the module's docstring)."""
    spark = batch.sparkSession
    fs = file_system(spark)
    ledger = Ledger(fs, ledger_root)
    earlier = ledger.done(batch_id)
    if earlier is not None:
        # Published before the query could record it: never twice. Recorded as this run's
        # own, when an attempt of this run published it and stopped before saying so.
        if run_key is not None and earlier.run_key == run_key:
            if not earlier.judged_by(checks):
                raise _changed_block(run_key, [batch_id])
            ledger.add_to_run(run_key, batch_id)
        return earlier
    ledger.undo_pending(batch_id)
    staging = ledger.staging(batch_id)
    if fs.exists(staging):
        fs.delete(staging)
    # Each batch is a run of its own, validated when it ran; its id says which batch it was.
    info = None if run_info is None else dataclasses.replace(
        run_info, run_id=f"{run_info.run_id}-batch-{batch_id}", run_kind="split",
        validated_at=dt.datetime.now(dt.timezone.utc),
    )
    checks = with_history_baselines(batch, checks, history, info)
    staged = {side: dataclasses.replace(spec, path=fs.child(staging, side), mode="errorifexists")
              for side, spec in (("valid", valid), ("invalid", invalid))}
    outcome = _split_into(staging, batch, batch_id, checks, staged, fs, annotate=annotate,
                          quarantine_key=quarantine_key, annotate_valid=annotate_valid, samples=samples)
    targets = {"valid": valid.path, "invalid": invalid.path}
    if history is not None and info is not None:
        assert history.path is not None
        write_output(history_frame(spark, outcome.results, info).coalesce(1),
                     dataclasses.replace(history, path=fs.child(staging, "history"), mode="errorifexists"))
        targets["history"] = history.path
    moves = [
        (fs.child(folder, relative), fs.child(str(target), relative))
        for folder, target in ((fs.child(staging, side), target) for side, target in targets.items())
        if fs.exists(folder)
        for relative in fs.data_files(folder)
    ]
    ledger.write("pending", batch_id, [target for _, target in moves])
    moved: list[tuple[str, str]] = []
    try:
        # Each destination folder (a partition's) made once, before the files move into it.
        for folder in dict.fromkeys(posixpath.dirname(target) for _, target in moves):
            fs.make_folders(folder)
        for source, target in moves:
            fs.rename(source, target)
            moved.append((source, target))
    except Exception as error:
        for source, target in reversed(moved):
            fs.rename(target, source)
        fs.delete(ledger.record("pending", batch_id))
        raise ColaOutputError(
            f"batch {batch_id}: cannot publish: {error}; nothing of the batch was published"
        ) from error
    record = BatchRecord(batch_id, outcome.valid_count, outcome.invalid_count, outcome.results, run_key,
                         block_digest(checks))
    ledger.write("done", batch_id, record.to_dict())
    if run_key is not None:
        ledger.add_to_run(run_key, batch_id)
    fs.delete(ledger.record("pending", batch_id))
    fs.delete(staging)
    return record


def _split_into(
    staging: str, batch: DataFrame, batch_id: int, checks: list[BaseCheck], staged: dict[str, OutputSpec], fs: Files,
    **options: Any,
) -> SplitOutcome:
    """Split the batch into its staging folders, from rows pinned in the executors; run again
    once if they were lost before both sides were written (an executor gone): a micro-batch
    reads the same rows again, and nothing of the first attempt is kept. Over Spark Connect,
    whose pin reports no measurements, the batch is staged as files (``staged_split``)."""
    if not is_classic(batch):
        return run_split(batch, checks, staged["valid"], staged["invalid"], **options)
    for attempt in (1, 2):
        try:
            return run_split(batch, checks, staged["valid"], staged["invalid"], pinned=True, **options)
        except PinnedRowsLost as lost:
            if fs.exists(staging):
                fs.delete(staging)
            if attempt == 2:
                raise ColaOutputError(f"batch {batch_id}: {lost}; nothing of the batch was published") from lost
            _LOG.warning("batch %s: %s; splitting it again", batch_id, lost)
    raise AssertionError("the second attempt returns or raises")


def split_stream(
    stream: DataFrame,
    checks: list[BaseCheck],
    valid: Any,
    invalid: Any,
    *,
    checkpoint: str,
    trigger: str | Mapping[str, Any] | None = "availableNow",
    annotate: str | None = None,
    quarantine_key: Sequence[str] | None = None,
    history: OutputSpec | None = None,
    run_info: RunInfo | None = None,
    query_name: str | None = None,
    annotate_valid: bool = False,
    samples: int = 0,
    run_key: str | None = None,
) -> StreamingQuery | StreamSummary:
    """Run the streaming query whose every micro-batch is split by :func:`split_batch`.

    Args:
        run_key: what makes a run the same run again (from Airflow: the task and its data's
            date). The batches published under it are recorded in the ledger, and the summary
            of a finite run holds them all: a rerun, which finds their files split already,
            gives the answer its first attempt gave (and splits what arrived since).

    Returns:
        For ``availableNow`` and ``once``: the :class:`StreamSummary` of the batches run,
        once the query has stopped. Otherwise the running ``StreamingQuery``.

    Raises:
        ColaOutputError: a destination or the history store is not a path, or a batch could
            not be published (the query stops; a restart on the checkpoint runs it again).
    """
    if not stream.isStreaming:
        raise ColaError("split_stream needs a streaming DataFrame (spark.readStream...); use split_write for a batch")
    _refuse_keys_across_batches(stream, checks, quarantine_key)
    valid_spec, invalid_spec = _path_output(valid, "valid"), _path_output(invalid, "invalid")
    if history is not None:
        if history.path is None:
            raise ColaOutputError("history: a streaming split appends each batch's run exactly once to a path store, "
                                  "not to a table")
        check_history_store(stream.sparkSession, history)
    fs = file_system(stream.sparkSession)
    ledger_root = fs.child(checkpoint, LEDGER)
    ledger = Ledger(fs, ledger_root)
    earlier = [] if run_key is None else _published_by(ledger, run_key, checks)
    records: list[BatchRecord] = []
    failures: list[ColaError] = []
    # Spark calls each_batch in a thread of its own (or, over Connect, in a worker of the
    # server): the caller's SQL scope is carried in, not inherited.
    outside_access = outside_access_allowed()

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        try:
            with allowing_outside_access(outside_access):
                records.append(split_batch(
                    batch, batch_id, checks, valid_spec, invalid_spec, ledger_root, annotate=annotate,
                    quarantine_key=quarantine_key, history=history, run_info=run_info,
                    annotate_valid=annotate_valid, samples=samples, run_key=run_key,
                ))
        except ColaError as error:
            failures.append(error)  # raised again as it is once the query has stopped
            raise

    writer = stream.writeStream.foreachBatch(each_batch).option("checkpointLocation", checkpoint)
    if query_name:
        writer = writer.queryName(query_name)
    writer = _with_trigger(writer, trigger)
    query = _start(writer, checkpoint)
    if trigger not in FINITE_TRIGGERS:
        running: StreamingQuery = query
        return running
    try:
        query.awaitTermination()
    except Exception as error:
        # Spark wraps the batch's error in pages of both stacks: the error itself says it all.
        if failures:
            raise failures[-1] from None
        if _checkpoint_taken(error):
            raise _held_elsewhere(checkpoint, "each batch this run split is published once") from error
        raise ColaOutputError(f"the streaming split stopped: {str(error).splitlines()[0]}") from error
    if not records:
        # Over Spark Connect each batch runs in a Python worker of the server, whose list this
        # is not: the batches are read back from the ledger, by the ids the query reported.
        ran = sorted({int(progress.batchId) for progress in query.recentProgress if progress.numInputRows})
        records.extend(record for record in (ledger.done(batch_id) for batch_id in ran) if record is not None)
    if run_key is not None:
        # An earlier attempt of this run published these: its answer is the run's answer too.
        seen = {record.batch_id for record in records}
        records.extend(record for record in earlier if record.batch_id not in seen)
    # A batch another run published and stopped before Spark recorded it, judged by another
    # block: its results are that run's (and in the history), not this block's.
    elsewhere = sorted(record.batch_id for record in records if not record.judged_by(checks))
    if elsewhere:
        _LOG.warning("batches %s were published by an earlier run under other rules: they are not judged again, and "
                     "this run's results leave them out", elsewhere)
    judged = [record for record in records if record.judged_by(checks)]
    return StreamSummary(sorted(judged, key=lambda record: record.batch_id), str(query.runId))


def _published_by(ledger: Ledger, run_key: str, checks: Sequence[BaseCheck]) -> list[BatchRecord]:
    """What earlier attempts of the run published, read before the query starts: under another
    block of rules, the run is refused before it publishes anything."""
    earlier = [record for record in map(ledger.done, ledger.batches_of(run_key)) if record is not None]
    changed = [record.batch_id for record in earlier if not record.judged_by(checks)]
    if changed:
        raise _changed_block(run_key, changed)
    return earlier


def _start(writer: Any, checkpoint: str) -> StreamingQuery:
    try:
        query: StreamingQuery = writer.start()
    except Exception as error:
        if _checkpoint_taken(error):
            raise _held_elsewhere(checkpoint, "nothing was split") from error
        raise
    return query


def _changed_block(run_key: str, batch_ids: Sequence[int]) -> ColaError:
    listed = ", ".join(map(str, sorted(batch_ids)))
    return ColaError(
        f"the run {run_key} split batch{'es' if len(batch_ids) > 1 else ''} {listed} under other rules than these "
        "(the rules changed since): a run's answer combines its batches' results rule by rule, and their rows are "
        "published, so they cannot be judged again. Rerun it with the rules it was split with, or split with "
        "the new rules as a new run (the next data date)"
    )


# What Spark says when two queries write one checkpoint (its offsets, commits or metadata).
_CONCURRENT = ("ConcurrentModificationException", "Multiple streaming queries are concurrently using")


def _checkpoint_taken(error: BaseException) -> bool:
    """Whether Spark refused the query because another one uses its checkpoint."""
    text = f"{error} {error.__cause__ or ''}"
    return any(sign in text for sign in _CONCURRENT)


def _held_elsewhere(checkpoint: str, published: str) -> ColaOutputError:
    return ColaOutputError(
        f"another run holds the checkpoint {checkpoint}: a streaming query on it was started at the same time (an "
        f"earlier attempt still running?), and only one may use a checkpoint; {published}. Wait for the other run "
        "to end (or stop it), then run again: it splits what is left"
    )


def _refuse_keys_across_batches(stream: DataFrame, checks: Sequence[BaseCheck], key: Sequence[str] | None) -> None:
    """Refuse rules that compare rows with each other on a stream with a watermark.

    Each batch is split alone: ``unique`` and the duplicate and distinct counts compare the
    rows of one batch, and a quarantine key rejects the rows of one batch. A watermark says
    that rows are to be matched across batches, within its delay, which needs key state
    Cola does not keep: refused, rather than judged per batch as if it had been honoured.
    """
    watermarked = [field.name for field in stream.schema.fields if WATERMARK_KEY in (field.metadata or {})]
    if not watermarked:
        return
    keyed = [check.code for check in checks if check.compares_rows] + (["quarantine_key"] * bool(key))
    if keyed:
        raise ColaError(
            f"the stream has a watermark on {', '.join(watermarked)}, which asks for keys to be matched across "
            f"batches, but Cola splits each batch alone and keeps no key state: {', '.join(map(str, keyed))} would "
            "only compare the rows of one batch. Drop duplicates upstream (dropDuplicatesWithinWatermark), or "
            "check the whole table with a batch run"
        )


def _with_trigger(writer: Any, trigger: str | Mapping[str, Any] | None) -> Any:
    if trigger is None:
        return writer
    if trigger == "availableNow":
        return writer.trigger(availableNow=True)
    if trigger == "once":
        return writer.trigger(once=True)
    if isinstance(trigger, Mapping):
        return writer.trigger(**dict(trigger))
    return writer.trigger(processingTime=str(trigger))



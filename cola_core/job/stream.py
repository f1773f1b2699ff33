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
   lists the batch in ``runs/<hash of the key>.json``, so that a rerun reports it again.

A batch is therefore published completely once, or, after a crash, its partial files are
removed before it runs again; between a crash and the restart a reader may see the files of
the interrupted batch (a folder of files has no atomic multi-file append). Destinations are
paths (partitioned or not); a table, whose catalog cannot take a batch's files as one step,
is refused, as is a history store that is a table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from cola_core.checks.base import BaseCheck
from cola_core.common.sessions import is_classic
from cola_core.errors import ColaError, ColaOutputError
from cola_core.guards.sqlguard import allowing_outside_access, outside_access_allowed
from cola_core.history.append import history_frame
from cola_core.history.store import RunInfo, check_history_store
from cola_core.job.blocks import run_split, with_history_baselines
from cola_core.language.result import SEVERITIES, CheckResult, Severity, worst_severity
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
# The batch lines a summary lists (the latest ones): an XCom stays small however many batches
# a run had; the history holds every batch's results.
BATCH_LINES = 100
# Triggers that process what is there and stop: split_stream waits for them and sums up.
FINITE_TRIGGERS = ("availableNow", "once")
# The metadata key Spark sets on the event-time column of a stream with a watermark.
WATERMARK_KEY = "spark.watermarkDelayMs"
# Rule types that compare a row with the other rows of what they judge (a batch, in a stream).
ROWS_ACROSS_BATCH = ("unique", "duplicate_count", "duplicate_percent", "distinct_count")
# Each rule's message when a finite run found no new file, so ran no batch.
NOTHING_NEW = "no batch ran: no new rows since the last run, so nothing was judged"


@dataclass(frozen=True)
class BatchRecord:
    """One micro-batch as it was published.

    Attributes:
        batch_id: the streaming query's batch id.
        valid_count: rows published to the valid output.
        invalid_count: rows published to the invalid output.
        results: the block's results on the batch, one per rule.
        run_key: the run that published it (``split_stream``'s ``run_key``), if it had one.
    """

    batch_id: int
    valid_count: int
    invalid_count: int
    results: list[CheckResult]
    run_key: str | None = None

    @property
    def severity(self) -> str:
        return worst_severity(self.results)

    def to_dict(self) -> dict[str, Any]:
        data = {"batch_id": self.batch_id, "valid_count": self.valid_count, "invalid_count": self.invalid_count,
                "results": [result.to_dict() for result in self.results]}
        return {**data, "run_key": self.run_key} if self.run_key is not None else data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchRecord:
        return cls(int(data["batch_id"]), int(data["valid_count"]), int(data["invalid_count"]),
                   [CheckResult.from_dict(item) for item in data["results"]], data.get("run_key"))


@dataclass(frozen=True)
class StreamSummary:
    """What a finite streaming split (``availableNow`` or ``once``) published, batch by batch.

    Attributes:
        batches: the batches run, in order.
        run_id: the streaming query's run id, the job group of its batches' Spark jobs.
    """

    batches: list[BatchRecord] = field(default_factory=list)
    run_id: str | None = None

    @property
    def valid_count(self) -> int:
        return sum(batch.valid_count for batch in self.batches)

    @property
    def invalid_count(self) -> int:
        return sum(batch.invalid_count for batch in self.batches)

    @property
    def severity(self) -> str:
        return worst_severity([result for batch in self.batches for result in batch.results])

    def to_dict(self) -> dict[str, Any]:
        """Counts, the worst severity and the batches (:meth:`batch_lines`)."""
        return {
            "severity": self.severity,
            "passed": self.severity != "fail",
            "valid_count": self.valid_count,
            "invalid_count": self.invalid_count,
            **self.batch_lines(),
        }

    def batch_lines(self) -> dict[str, Any]:
        """``{"batch_count", "batches"}``: how many batches ran, and one line per batch (its id,
        worst severity and counts) for the last :data:`BATCH_LINES` of them."""
        return {
            "batch_count": len(self.batches),
            "batches": [
                {"batch_id": batch.batch_id, "severity": batch.severity, "valid_count": batch.valid_count,
                 "invalid_count": batch.invalid_count}
                for batch in self.batches[-BATCH_LINES:]
            ],
        }

    def combined_results(self, checks: Sequence[BaseCheck]) -> list[CheckResult]:
        """One result per rule for the whole run, so that a task branches, logs and alerts on
        a stream as on a batch split: each rule's worst result over the batches (the latest
        batch among equals), its message saying which batch it is. With no batch (no new
        file), each rule passes, saying that nothing was judged.
        """
        if not self.batches:
            return [check.finish(CheckResult(check.rule_type, True, NOTHING_NEW, rows_checked=0)) for check in checks]
        count = len(self.batches)
        combined = []
        for index in range(len(checks)):
            batch = max(self.batches, key=lambda batch: (_rank(batch.results[index]), batch.batch_id))
            result = batch.results[index]
            where = f"in batch {batch.batch_id}" + (f" (the worst of {count} batches)" if count > 1 else "")
            combined.append(dataclasses.replace(result, message=f"{where}: {result.message}"))
        return combined


def _rank(result: CheckResult) -> int:
    return SEVERITIES.index(cast(Severity, result.severity))  # set on every result (its __post_init__)


@dataclass(frozen=True)
class _Ledger:
    fs: Files
    root: str

    def record(self, kind: str, batch_id: int) -> str:
        return self.fs.child(self.fs.child(self.root, kind), f"{batch_id}.json")

    def staging(self, batch_id: int) -> str:
        return self.fs.child(self.fs.child(self.root, "staging"), str(batch_id))

    def done(self, batch_id: int) -> BatchRecord | None:
        location = self.record("done", batch_id)
        if not self.fs.exists(location):
            return None
        return BatchRecord.from_dict(json.loads(self.fs.read_text(location)))

    def write(self, kind: str, batch_id: int, data: Any) -> None:
        self.fs.write_text(self.record(kind, batch_id), json.dumps(data))

    def run_file(self, run_key: str) -> str:
        name = hashlib.sha256(run_key.encode()).hexdigest()[:32]
        return self.fs.child(self.fs.child(self.root, "runs"), f"{name}.json")

    def batches_of(self, run_key: str) -> list[int]:
        """The ids of the batches the run with this key published, in order."""
        location = self.run_file(run_key)
        return [int(i) for i in json.loads(self.fs.read_text(location))] if self.fs.exists(location) else []

    def add_to_run(self, run_key: str, batch_id: int) -> None:
        published = self.batches_of(run_key)
        if batch_id not in published:
            self.fs.write_text(self.run_file(run_key), json.dumps(sorted([*published, batch_id])))

    def undo_pending(self, batch_id: int) -> None:
        """Delete what an interrupted attempt at the batch may have moved in."""
        location = self.record("pending", batch_id)
        if not self.fs.exists(location):
            return
        for moved in json.loads(self.fs.read_text(location)):
            if self.fs.exists(moved):
                self.fs.delete(moved)
        self.fs.delete(location)


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
    ledger = _Ledger(fs, ledger_root)
    earlier = ledger.done(batch_id)
    if earlier is not None:
        # Published before the query could record it: never twice. Recorded as this run's
        # own, when an attempt of this run published it and stopped before saying so.
        if run_key is not None and earlier.run_key == run_key:
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
    record = BatchRecord(batch_id, outcome.valid_count, outcome.invalid_count, outcome.results, run_key)
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
    query = writer.start()
    if trigger not in FINITE_TRIGGERS:
        running: StreamingQuery = query
        return running
    try:
        query.awaitTermination()
    except Exception as error:
        # Spark wraps the batch's error in pages of both stacks: the error itself says it all.
        if failures:
            raise failures[-1] from None
        raise ColaOutputError(f"the streaming split stopped: {str(error).splitlines()[0]}") from error
    ledger = _Ledger(fs, ledger_root)
    if not records:
        # Over Spark Connect each batch runs in a Python worker of the server, whose list this
        # is not: the batches are read back from the ledger, by the ids the query reported.
        ran = sorted({int(progress.batchId) for progress in query.recentProgress if progress.numInputRows})
        records.extend(record for record in (ledger.done(batch_id) for batch_id in ran) if record is not None)
    if run_key is not None:
        # An earlier attempt of this run published these: its answer is the run's answer too.
        seen = {record.batch_id for record in records}
        earlier = (ledger.done(batch_id) for batch_id in ledger.batches_of(run_key) if batch_id not in seen)
        records.extend(record for record in earlier if record is not None)
    return StreamSummary(sorted(records, key=lambda record: record.batch_id), str(query.runId))


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
    keyed = [check.code for check in checks if check.rule_type in ROWS_ACROSS_BATCH] + (["quarantine_key"] * bool(key))
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



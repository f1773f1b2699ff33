"""What a run cost Spark: its jobs, their stages, the rows and bytes they read, and the time.

Measured from Spark's own bookkeeping, never estimated: the jobs are those started under a
job group while the run lasts (:func:`measuring_cost`), their stages and input metrics come
from the application's status store, the same numbers the Spark UI shows. A user who has set
a job group of their own keeps it; the run's jobs are then the ones the group gained.

Over Spark Connect the client sees no SparkContext, so only the time is known; the other
fields are None (say so rather than guess).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from cola_core.common.formatting import plural
from cola_core.common.sessions import is_classic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["CostMeter", "SparkCost", "input_metrics", "measuring_cost"]

_GROUP = "spark.jobGroup.id"
_GROUP_PROPERTIES = (_GROUP, "spark.job.description", "spark.job.interruptOnCancel")
# How long to wait for Spark's listener bus to deliver the run's last events to the status
# store; it is behind by milliseconds, and a count read before it catches up would be short.
_DRAIN_MS = 10_000


@dataclass(frozen=True)
class SparkCost:
    """The price of a run.

    Attributes:
        seconds: wall time, from reading the source to the last write.
        jobs: Spark jobs started; None over Spark Connect.
        stages: stages that ran (a stage Spark skipped, its shuffle output reused, is not
            counted); None over Spark Connect.
        rows_read: rows read from files, tables and cached blocks by those stages; None over
            Spark Connect.
        bytes_read: bytes those reads took in; None over Spark Connect.
    """

    seconds: float
    jobs: int | None = None
    stages: int | None = None
    rows_read: int | None = None
    bytes_read: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: ``{"seconds", "jobs", "stages", "rows_read", "bytes_read"}``."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> SparkCost:
        """The cost :meth:`to_dict` gave, checked: a results file is read back by another
        process, and a wrong shape must be named, never carried on.

        Raises:
            ValueError: not an object of exactly these keys; ``seconds`` not a number of at
                least 0; a count neither null nor a whole number of at least 0.
        """
        if not isinstance(data, dict):
            raise ValueError(f"the cost must be an object, got {type(data).__name__}")
        keys = [field.name for field in fields(cls)]
        if set(data) != set(keys):
            missing, unknown = sorted(set(keys) - set(data)), sorted(set(data) - set(keys))
            said = [f"lacks {', '.join(missing)}"] * bool(missing)
            said += [f"has unknown {', '.join(unknown)}"] * bool(unknown)
            raise ValueError(f"the cost {' and '.join(said)}")
        seconds = data["seconds"]
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
            raise ValueError(f"the cost's seconds must be a number of at least 0, got {seconds!r}")
        for key in keys[1:]:
            value = data[key]
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"the cost's {key} must be null or a whole number of at least 0, got {value!r}")
        return cls(float(seconds), data["jobs"], data["stages"], data["rows_read"], data["bytes_read"])

    def describe(self) -> str:
        """``2 Spark jobs, 3 stages, 5,000 rows (120.3 KB) read, 1.4 s``; the time alone
        when Spark's bookkeeping could not be read."""
        took = f"{self.seconds:.1f} s"
        if self.jobs is None or self.stages is None or self.rows_read is None or self.bytes_read is None:
            return f"{took} (no Spark job metrics over Spark Connect)"
        rows = f"{self.rows_read:,} {'row' if self.rows_read == 1 else 'rows'}"
        read = f"{rows} ({_size(self.bytes_read)}) read"
        return f"{plural(self.jobs, 'Spark job')}, {plural(self.stages, 'stage')}, {read}, {took}"


def _size(count: int) -> str:
    size = float(count)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


class CostMeter:
    """Holds the cost once the ``measuring_cost`` block has ended."""

    def __init__(self) -> None:
        self.cost: SparkCost | None = None
        self._groups: list[str] = []

    def include_group(self, group: str) -> None:
        """Count the jobs of this job group too: a streaming query runs its batches' jobs in
        a group of its own (its run id), whatever group the block set."""
        self._groups.append(group)


@contextlib.contextmanager
def measuring_cost(spark: SparkSession) -> Iterator[CostMeter]:
    """Measure what the block costs ``spark`` (see the module docstring); the meter's
    ``cost`` is set when the block ends, also when it raises."""
    meter = CostMeter()
    context = spark.sparkContext if is_classic(spark) else None
    started = time.perf_counter()
    if context is None:
        try:
            yield meter
        finally:
            meter.cost = SparkCost(round(time.perf_counter() - started, 3))
        return
    theirs = context.getLocalProperty(_GROUP)
    group = theirs or f"cola-{uuid.uuid4().hex}"
    if theirs:
        _drained(context)  # the group's earlier jobs, all known, are not the run's
    before = set(context.statusTracker().getJobIdsForGroup(group)) if theirs else set()
    if not theirs:
        context.setJobGroup(group, "cola: measuring a rule block")
    try:
        yield meter
    finally:
        seconds = round(time.perf_counter() - started, 3)
        # The status tracker learns of a job from the listener bus, which may be behind.
        _drained(context)
        tracker = context.statusTracker()
        jobs = sorted((set(tracker.getJobIdsForGroup(group)) - before).union(
            *(tracker.getJobIdsForGroup(other) for other in meter._groups)
        ))
        if not theirs:
            for key in _GROUP_PROPERTIES:
                context.setLocalProperty(key, None)  # type: ignore[arg-type]  # None removes it, whatever the stub says
        stages, rows, size = input_metrics(context, jobs)
        meter.cost = SparkCost(seconds, len(jobs), stages, rows, size)


def _drained(context: Any) -> None:
    """Wait (at most ``_DRAIN_MS``) until the listener bus has delivered every event posted so
    far to the status store; still behind after that, what is there is counted."""
    with contextlib.suppress(Exception):
        context._jsc.sc().listenerBus().waitUntilEmpty(_DRAIN_MS)


def input_metrics(context: Any, jobs: Iterable[int]) -> tuple[int, int, int]:
    """(stages that ran, rows read, bytes read) of ``jobs``, from the status store: each
    stage's input metrics, from files, tables and cached blocks. Over a parquet source, a
    read of the whole source adds its row count once."""
    _drained(context)
    store = context._jsc.sc().statusStore()
    # stageData(id, details, taskStatus, withSummaries, unsortedQuantiles): the last three
    # are Scala defaults, which Py4J cannot leave out.
    defaults = [getattr(store, f"stageData$default${n}")() for n in (3, 4, 5)]
    stage_ids: set[int] = set()
    for job in jobs:
        info = context.statusTracker().getJobInfo(job)
        stage_ids.update(info.stageIds if info else ())
    ran = rows = size = 0
    for stage in sorted(stage_ids):
        try:
            attempts = store.stageData(stage, False, *defaults)
        except Exception:  # a stage never submitted may have no data
            continue
        iterator = attempts.iterator()
        counted = False
        while iterator.hasNext():
            attempt = iterator.next()
            if attempt.status().toString() == "SKIPPED":
                continue
            counted = True
            rows += attempt.inputRecords()
            size += attempt.inputBytes()
        ran += counted
    return ran, rows, size

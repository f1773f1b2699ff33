"""Measure the candidate designs for a one-pass ``split_write`` (issue 12); nothing here is the engine.

    .venv/bin/python -m benchmarks.split_designs --rows 2000000 --rounds 3

Every design writes both outputs of the split of the orders table (parquet, fresh temp folders
each run): ``valid`` with the input's columns, ``invalid`` with the array of rule codes
(``codes``) of the 8 row-level rules of ``BLOCK`` (``unique`` among them, so the codes need a
window over ``order_id``), and each also measures the 13 plain aggregates of the block
(``non_distinct_rules``; the distinct counts would cost every design the same extra pass).

- ``a-cola``: what people write with Cola today: ``Cola().run`` for the aggregates, then
  ``Cola().split`` and a write of each output;
- ``a-hand``: the same by hand: one ``df.agg``, then filter+write valid, filter+write invalid;
- ``b``: the best single-pass hand plan: the codes computed once, ONE write of the flagged rows
  partitioned by ``__outcome`` to a staging folder with the aggregates and the two counts
  observed on that write (``DataFrame.observe``), then a publish: the two partition folders are
  renamed into the destinations with the Hadoop FileSystem API (timed apart as ``publish``);
- ``b-concurrent``: ``b`` with ``spark.sql.maxConcurrentOutputFileWriters=2`` and planned
  writes off, so that the partitioned write need not sort each task's rows by ``__outcome``;
- ``c1-cache``: the flagged rows persisted (MEMORY_AND_DISK), two filtered writes (the
  aggregates observed on the first, before its filter), then unpersist;
- ``c2-local``: ``localCheckpoint(eager=True)`` of the flagged rows, then the two writes;
- ``c2-reliable``: ``checkpoint(eager=True)`` into a checkpoint folder, then the two writes;
- ``c3-staging``: the flagged rows written once, unpartitioned, to staging (aggregates
  observed there), then read back twice to write the two destinations.

First, once per design and untimed, a probe run on a non-deterministic input: a column
``coin`` = ``java_method('java.lang.Math', 'random') < 0.5`` (drawn anew at every evaluation),
and one more rule that rejects rows whose coin is true. That run gives the Spark jobs, the
input records per row (the stages' input metrics over the rows: file scans, but also reads of
cached and locally checkpointed blocks, which Spark counts as input too), the same plus the
staging read-backs of C3 (counted in a job group of their own),
and whether the split law holds: the two outputs are read back and every source row must be in
exactly one. Then a cache-eviction experiment: one block of the cached (or locally
checkpointed) flagged rows is removed between the two writes, as a lost executor would lose it.
Then the timed rounds on the plain input: one untimed warm-up round, then ``--rounds`` rounds,
the order of the designs reversed every other round.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchmarks.block import BLOCK, non_distinct_rules
from benchmarks.generate import write_orders
from benchmarks.plans import BLOCK_SPECS
from benchmarks.run import JvmClock
from benchmarks.session import benchmark_session, input_records
from cola_core import Cola
from cola_core.checks.conditions import NAMED_FORMATS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = ["main"]

CODES = "codes"
OUTCOME = "__outcome"
COIN = "coin"
# The source has no id column; these four together are unique (checked at start).
KEY = ("order_id", "created_at", "amount", "cpf")
COIN_RULE = {"type": "expression", "expression": f"NOT {COIN}", "name": "coin"}
CPF_PATTERN = "^[0-9]{11}$"
STATUSES = ("pending", "paid", "shipped", "cancelled")


@dataclass
class Context:
    spark: SparkSession
    df: DataFrame
    rows: int
    coin: bool  # the probe input: the coin column and its rule are in play
    root: str  # a fresh folder for this run's outputs
    checkpoint_dir: str
    measured: dict[str, Any] = field(default_factory=dict)
    window: bool = True  # the unique rule (a window, so a shuffle) is in the codes

    @property
    def valid(self) -> str:
        return os.path.join(self.root, "valid")

    @property
    def invalid(self) -> str:
        return os.path.join(self.root, "invalid")

    @property
    def staging(self) -> str:
        return os.path.join(self.root, "_staging")


# -- the hand-written pieces, equal to what Cola computes (checked in verify) -----------------


def hand_codes(coin: bool, window: bool = True) -> Column:
    """The codes column: Cola's codes of BLOCK's row-level rules, written by hand (without
    ``unique`` when not ``window``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    amount, cpf, email, status = F.col("amount"), F.col("cpf"), F.col("email"), F.col("status")
    duplicated = F.count(F.lit(1)).over(Window.partitionBy("order_id")) > 1
    pairs = [
        ("not_null(order_id)", F.col("order_id").isNull()),
        ("not_null(customer_id)", F.col("customer_id").isNull()),
        ("unique(order_id)", duplicated),
        ("range(amount,0,)", amount.isNotNull() & ~F.coalesce(amount >= 0, F.lit(False))),
        (f"regex(cpf,{CPF_PATTERN})", ~F.coalesce(cpf.rlike(CPF_PATTERN), F.lit(False))),
        ("missing_percent(cpf)", cpf.isNull()),
        ("invalid_percent(email)", email.isNotNull() & ~F.coalesce(email.rlike(NAMED_FORMATS["email"]), F.lit(False))),
        ("invalid_count(status)", status.isNotNull() & ~F.coalesce(status.isin(*STATUSES), F.lit(False))),
    ]
    if coin:
        pairs.append(("coin", F.col(COIN)))
    if not window:
        pairs = [pair for pair in pairs if pair[0] != "unique(order_id)"]
    return F.array_compact(F.array(*[F.when(predicate, F.lit(code)) for code, predicate in pairs]))


def hand_aggregates(coin: bool) -> list[Column]:
    from pyspark.sql import functions as F

    extra = [F.count(F.when(F.col(COIN), F.lit(1))).alias("coin_rows")] if coin else []
    return [*BLOCK_SPECS["15"].aggregates(), *extra]


def split_counts() -> list[Column]:
    from pyspark.sql import functions as F

    return [
        F.count(F.when(F.size(CODES) == 0, F.lit(1))).alias("valid_rows"),
        F.count(F.when(F.size(CODES) > 0, F.lit(1))).alias("invalid_rows"),
    ]


def flagged(ctx: Context) -> DataFrame:
    return ctx.df.select("*", hand_codes(ctx.coin, ctx.window).alias(CODES))


def is_valid() -> Column:
    from pyspark.sql import functions as F

    return F.size(CODES) == 0


def observe(df: DataFrame, ctx: Context) -> tuple[DataFrame, Any]:
    """``df`` with the aggregates and the two counts observed on it, and the Observation."""
    from pyspark.sql import Observation

    observation = Observation(f"split_{uuid.uuid4().hex}")
    return df.observe(observation, *hand_aggregates(ctx.coin), *split_counts()), observation


def write_two(source: DataFrame, ctx: Context, first: DataFrame | None = None) -> None:
    """Filter+write valid (from ``first`` when given: ``source`` with an observation), then invalid."""
    (first if first is not None else source).where(is_valid()).drop(CODES).write.parquet(ctx.valid)
    source.where(~is_valid()).write.parquet(ctx.invalid)


# -- the designs ------------------------------------------------------------------------------


def rules_for(ctx: Context) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(aggregate rules, split rules) for Cola."""
    extra = [COIN_RULE] if ctx.coin else []
    return [*non_distinct_rules(), *extra], [*BLOCK, *extra]


def design_a_cola(ctx: Context) -> None:
    cola = Cola()
    aggregate_rules, split_rules = rules_for(ctx)
    cola.run(ctx.df, aggregate_rules)
    split = cola.split(ctx.df, split_rules, annotate=CODES)
    split.valid.write.parquet(ctx.valid)
    split.invalid.write.parquet(ctx.invalid)


def design_a_hand(ctx: Context) -> None:
    ctx.df.agg(*hand_aggregates(ctx.coin)).first()
    write_two(flagged(ctx), ctx)


def publish(ctx: Context) -> None:
    """Rename the two outcome folders of the staging write into the destinations."""
    jvm = ctx.spark.sparkContext._jvm
    conf = ctx.spark.sparkContext._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path
    staging = path(ctx.staging)
    fs = staging.getFileSystem(conf)
    for outcome, target in (("valid", ctx.valid), ("invalid", ctx.invalid)):
        source, destination = path(f"{ctx.staging}/{OUTCOME}={outcome}"), path(target)
        if not fs.exists(source):
            fs.mkdirs(source)  # no rows of that outcome: publish an empty folder
        if not fs.rename(source, destination):
            raise RuntimeError(f"cannot rename {source} to {destination}")
        fs.create(path(f"{target}/_SUCCESS")).close()
    fs.delete(staging, True)


def design_b(ctx: Context) -> None:
    from pyspark.sql import functions as F

    rows = flagged(ctx).withColumn(OUTCOME, F.when(is_valid(), F.lit("valid")).otherwise(F.lit("invalid")))
    observed, observation = observe(rows, ctx)
    observed.write.partitionBy(OUTCOME).parquet(ctx.staging)
    ctx.measured["observed"] = observation.get
    started = time.perf_counter()
    publish(ctx)
    ctx.measured["publish"] = time.perf_counter() - started


def design_b_concurrent(ctx: Context) -> None:
    conf = ctx.spark.conf
    conf.set("spark.sql.maxConcurrentOutputFileWriters", "2")
    conf.set("spark.sql.optimizer.plannedWrite.enabled", "false")
    try:
        design_b(ctx)
    finally:
        conf.unset("spark.sql.maxConcurrentOutputFileWriters")
        conf.unset("spark.sql.optimizer.plannedWrite.enabled")


def design_c1_cache(ctx: Context, between: Callable[[], None] | None = None) -> None:
    from pyspark import StorageLevel

    cached = flagged(ctx).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        observed, observation = observe(cached, ctx)
        observed.where(is_valid()).drop(CODES).write.parquet(ctx.valid)
        ctx.measured["observed"] = observation.get
        if between is not None:
            between()
        cached.where(~is_valid()).write.parquet(ctx.invalid)
    finally:
        cached.unpersist(blocking=True)


def _checkpointed(ctx: Context, checkpoint: DataFrame, between: Callable[[], None] | None) -> None:
    observed, observation = observe(checkpoint, ctx)
    observed.where(is_valid()).drop(CODES).write.parquet(ctx.valid)
    ctx.measured["observed"] = observation.get
    if between is not None:
        between()
    checkpoint.where(~is_valid()).write.parquet(ctx.invalid)


def design_c2_local(ctx: Context, between: Callable[[], None] | None = None) -> None:
    checkpoint = flagged(ctx).localCheckpoint(eager=True)
    try:
        _checkpointed(ctx, checkpoint, between)
    finally:
        checkpoint.unpersist(blocking=True)


def design_c2_reliable(ctx: Context) -> None:
    _checkpointed(ctx, flagged(ctx).checkpoint(eager=True), None)


def design_c3_staging(ctx: Context) -> None:
    from pyspark.sql import functions as F

    observed, observation = observe(flagged(ctx).withColumn(OUTCOME, is_valid()), ctx)
    observed.write.parquet(ctx.staging)
    ctx.measured["observed"] = observation.get
    # The read-backs run in a job group of their own, so that the probe can tell the source's
    # reads from the staging folder's.
    inner = Group(ctx.spark)
    with inner:
        staged = ctx.spark.read.parquet(ctx.staging)
        staged.where(F.col(OUTCOME)).drop(CODES, OUTCOME).write.parquet(ctx.valid)
        staged.where(~F.col(OUTCOME)).drop(OUTCOME).write.parquet(ctx.invalid)
    ctx.measured["inner_jobs"] = len(inner.jobs())
    ctx.measured["inner_records"] = inner.input_records()
    shutil.rmtree(ctx.staging)


@dataclass
class Design:
    key: str
    label: str
    run: Callable[[Context], None]
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    publish_seconds: list[float] = field(default_factory=list)
    jobs: int = 0
    probe_jobs: int = 0
    source_reads: float = 0.0
    file_reads: float = 0.0
    law: str = ""


DESIGNS = [
    Design("a-cola", "(a) Cola `run` + lazy `split`, two writes", design_a_cola),
    Design("a-hand", "(a) by hand: `agg`, filter+write valid, filter+write invalid", design_a_hand),
    Design("b", "(b) one write partitioned by outcome + observe, then rename", design_b),
    Design("b-concurrent", "(b) same, concurrent writers, no planned sort", design_b_concurrent),
    Design("c1-cache", "C1 persist MEMORY_AND_DISK, two writes", design_c1_cache),
    Design("c2-local", "C2 localCheckpoint, two writes", design_c2_local),
    Design("c2-reliable", "C2 checkpoint (reliable), two writes", design_c2_reliable),
    Design("c3-staging", "C3 staging write, read back twice", design_c3_staging),
]


# -- measuring --------------------------------------------------------------------------------


class Group:
    """Tag the jobs run inside with a fresh job group; then count them and their input records."""

    def __init__(self, spark: SparkSession) -> None:
        self.context = spark.sparkContext
        self.name = f"split-designs-{uuid.uuid4().hex}"

    def __enter__(self) -> Group:
        self.context.setJobGroup(self.name, "split designs")
        return self

    def __exit__(self, *exc: object) -> None:
        self.context.setLocalProperty("spark.jobGroup.id", None)

    def jobs(self) -> list[int]:
        return list(self.context.statusTracker().getJobIdsForGroup(self.name))

    def input_records(self) -> int:
        """Rows read from files (the stages' input metrics) by the group's jobs."""
        return input_records(self.context, self.jobs())


def fresh_context(spark: SparkSession, df: DataFrame, rows: int, coin: bool, base: str, checkpoint_dir: str) -> Context:
    return Context(spark, df, rows, coin, tempfile.mkdtemp(prefix="run-", dir=base), checkpoint_dir)


def clean(ctx: Context) -> None:
    shutil.rmtree(ctx.root, ignore_errors=True)
    for name in os.listdir(ctx.checkpoint_dir):
        shutil.rmtree(os.path.join(ctx.checkpoint_dir, name), ignore_errors=True)


def split_law(ctx: Context) -> tuple[int, int, int, int]:
    """(valid rows, invalid rows, rows in both, source rows in neither), read back from the outputs."""
    valid = ctx.spark.read.parquet(ctx.valid).select(*KEY)
    invalid = ctx.spark.read.parquet(ctx.invalid).select(*KEY)
    both = valid.intersect(invalid).count()
    in_any = valid.union(invalid).distinct().count()
    return valid.count(), invalid.count(), both, ctx.rows - in_any


def law_text(valid: int, invalid: int, both: int, neither: int, rows: int) -> str:
    if both == 0 and neither == 0 and valid + invalid == rows:
        return f"holds ({valid:,} + {invalid:,})"
    return f"BROKEN: {both:,} rows in both, {neither:,} in neither ({valid:,} + {invalid:,})"


def coin_source(df: DataFrame) -> DataFrame:
    """``df`` plus a truly non-deterministic column ``coin``: ``Math.random() < 0.5``, drawn anew at
    every evaluation (``rand()`` would not do: its seed is fixed in the plan, so a re-read of the
    same DataFrame draws the same values). A Python UDF over this parquet scan crashes the Python
    worker in this environment, so the source reads are counted from the stages' input records."""
    from pyspark.sql import functions as F

    return df.withColumn(COIN, F.expr("java_method('java.lang.Math', 'random') < 0.5"))


def verify(spark: SparkSession, df: DataFrame, rows: int, base: str, checkpoint_dir: str) -> None:
    """The hand-written codes and aggregates are Cola's; the key is unique."""
    from pyspark.sql import functions as F

    distinct_keys = df.select(*KEY).distinct().count()
    if distinct_keys != rows:
        raise AssertionError(f"the key {KEY} has {distinct_keys} distinct values in {rows} rows")
    split = Cola().split(df, BLOCK, annotate=CODES)
    ctx = fresh_context(spark, df, rows, False, base, checkpoint_dir)
    mine = flagged(ctx).where(~is_valid())
    theirs = split.invalid.groupBy(CODES).count().collect()
    ours = mine.groupBy(CODES).count().collect()
    if sorted(map(tuple, theirs)) != sorted(map(tuple, ours)):
        raise AssertionError("the hand-written codes differ from Cola's split")
    mine_row = df.agg(*hand_aggregates(False), F.lit(0).alias("_")).first()
    results = Cola().run(df, non_distinct_rules())
    numbers = [r.failed_count if r.metric_value is None else r.metric_value for r in results]
    assert mine_row is not None and numbers[0] == mine_row["rows"], "row counts differ"
    clean(ctx)


def probe(spark: SparkSession, df: DataFrame, rows: int, designs: list[Design], base: str, checkpoint_dir: str) -> None:
    """Jobs, source evaluations, file rows read and the split law, on the non-deterministic input."""
    for design in designs:
        ctx = fresh_context(spark, coin_source(df), rows, True, base, checkpoint_dir)
        group = Group(spark)
        with group:
            design.run(ctx)
        design.probe_jobs = len(group.jobs()) + ctx.measured.get("inner_jobs", 0)
        design.source_reads = group.input_records() / rows
        design.file_reads = design.source_reads + ctx.measured.get("inner_records", 0) / rows
        design.law = law_text(*split_law(ctx), rows)
        observed = ctx.measured.get("observed")
        if observed is not None:
            total = observed["valid_rows"] + observed["invalid_rows"]
            design.law += f"; observed counts sum to {total:,}"
        print(f"probe {design.key}: {design.probe_jobs} jobs, {design.source_reads:.2f} source reads, "
              f"{design.law}", file=sys.stderr, flush=True)
        clean(ctx)


def remove_one_block(spark: SparkSession) -> str:
    """Drop every block of every persisted RDD from the block manager, as lost executors would."""
    jvm = spark.sparkContext._jvm
    manager = jvm.org.apache.spark.SparkEnv.get().blockManager()
    removed = []
    for rdd in spark.sparkContext._jsc.getPersistentRDDs().keySet().toArray():
        count = manager.removeRdd(int(rdd))
        removed.append(f"rdd_{int(rdd)} ({count} blocks)")
    return ", ".join(removed) or "none"


def eviction(spark: SparkSession, df: DataFrame, rows: int, base: str, checkpoint_dir: str) -> list[str]:
    """C1 and C2-local on the coin input, with the cached blocks lost between the two writes.

    With the ``unique`` rule the flagged rows sit above a shuffle, so a lost cached block is
    rebuilt from the shuffle files of the first job (which hold the coin values already drawn);
    without it (``no window``) the rebuild reads the source again. A lost executor loses its
    shuffle files too (unless an external shuffle service keeps them), so the second case is
    the one that shows what the guarantee rests on.
    """
    lines = []
    cases = [("c1-cache", design_c1_cache, True), ("c1-cache, no window", design_c1_cache, False),
             ("c2-local", design_c2_local, True)]
    for name, run, window in cases:
        ctx = fresh_context(spark, coin_source(df), rows, True, base, checkpoint_dir)
        ctx.window = window
        group = Group(spark)
        lost: list[str] = []
        try:
            with group:
                run(ctx, lambda lost=lost: lost.append(remove_one_block(spark)))
            verdict = law_text(*split_law(ctx), rows)
        except Exception as error:  # the failure is the finding
            text = str(error).strip().splitlines()
            verdict = "the second write FAILED: " + next((t for t in text if "not found" in t.lower()), text[0])[:200]
        lines.append(f"{name}, {', '.join(lost) or '?'} removed after the first write: "
                     f"{group.input_records() / rows:.2f} input records per row; {verdict}")
        print(lines[-1], file=sys.stderr, flush=True)
        clean(ctx)
    return lines


def time_rounds(spark: SparkSession, df: DataFrame, rows: int, designs: list[Design], rounds: int, base: str,
                checkpoint_dir: str, clock: JvmClock, record: bool) -> None:
    for number in range(rounds):
        started = time.perf_counter()
        order = designs if number % 2 == 0 else designs[::-1]
        for design in order:
            ctx = fresh_context(spark, df, rows, False, base, checkpoint_dir)
            gc.collect()
            group = Group(spark)
            cpu, wall = clock(), time.perf_counter()
            with group:
                design.run(ctx)
            seconds, cpu_seconds = time.perf_counter() - wall, clock() - cpu
            if record:
                design.seconds.append(seconds)
                design.cpu_seconds.append(cpu_seconds)
                design.jobs = len(group.jobs())
                if "publish" in ctx.measured:
                    design.publish_seconds.append(ctx.measured["publish"])
            clean(ctx)
        label = f"round {number + 1}/{rounds}" if record else "warm-up"
        print(f"{label}: {time.perf_counter() - started:.1f} s, load {os.getloadavg()[0]:.2f}", file=sys.stderr,
              flush=True)


def paired(mine: list[float], theirs: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def render(designs: list[Design]) -> str:
    by_key = {d.key: d for d in designs}
    best, people = by_key.get("b"), by_key.get("a-hand")
    columns = ("Design", "Median s", "Min s", "Max s", "Paired vs (b)", "Paired vs (a) hand", "CPU paired vs (b)",
               "Jobs", "Input records / rows", "With C3 read-backs", "Split law (non-deterministic input)")
    lines = ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * 9 + "---|"]
    for d in designs:
        def ratio(other: Design | None, cpu: bool = False, d: Design = d) -> str:
            if other is None:
                return "-"
            return f"{paired(d.cpu_seconds if cpu else d.seconds, other.cpu_seconds if cpu else other.seconds):.2f}x"

        lines.append(
            f"| {d.label} | {statistics.median(d.seconds):.2f} | {min(d.seconds):.2f} | {max(d.seconds):.2f} "
            f"| {ratio(best)} | {ratio(people)} | {ratio(best, cpu=True)} | {d.jobs} | {d.source_reads:.2f} "
            f"| {d.file_reads:.2f} | {d.law} |"
        )
    for d in designs:
        if d.publish_seconds:
            lines.append(f"\n{d.key}: publish (two renames + _SUCCESS + delete staging) median "
                         f"{statistics.median(d.publish_seconds) * 1000:.1f} ms, included in its time.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--only", default=None, help="comma-separated design keys")
    parser.add_argument("--no-probe", action="store_true", help="skip the non-deterministic probe runs")
    parser.add_argument("--raw", action="store_true", help="also print every timing")
    parser.add_argument("--eviction-only", action="store_true", help="only the cache-eviction experiment")
    args = parser.parse_args(argv)
    designs = [d for d in DESIGNS if not args.only or d.key in args.only.split(",")]

    spark = benchmark_session(cores=args.cores)
    df = spark.read.parquet(str(write_orders(spark, args.rows)))
    base = tempfile.mkdtemp(prefix="cola-split-designs-")
    checkpoint_dir = os.path.join(base, "_checkpoints")
    os.makedirs(checkpoint_dir)
    spark.sparkContext.setCheckpointDir(checkpoint_dir)
    clock = JvmClock(spark)
    load_before = os.getloadavg()
    if args.eviction_only:
        try:
            lines = eviction(spark, df, args.rows, base, checkpoint_dir)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        print("Cache eviction (the cached blocks lost between the two writes, coin input):\n")
        print("\n".join(f"- {line}" for line in lines))
        spark.stop()
        return
    try:
        verify(spark, df, args.rows, base, checkpoint_dir)
        print("verified: the hand-written codes and counts are Cola's", file=sys.stderr, flush=True)
        evictions: list[str] = []
        if not args.no_probe:
            probe(spark, df, args.rows, designs, base, checkpoint_dir)
            evictions = eviction(spark, df, args.rows, base, checkpoint_dir)
        time_rounds(spark, df, args.rows, designs, args.warmup, base, checkpoint_dir, clock, record=False)
        time_rounds(spark, df, args.rows, designs, args.rounds, base, checkpoint_dir, clock, record=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    load_after = os.getloadavg()
    print(
        f"{args.rows:,} rows of parquet, 8 row rules (annotate) + 13 plain aggregates, {args.rounds} rounds after "
        f"{args.warmup} warm-up, local[{args.cores}], Spark {spark.version}, AQE off, {dt.date.today().isoformat()}; "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after.\n"
    )
    print(render(designs))
    if evictions:
        print("\nCache eviction (the cached blocks lost between the two writes, coin input):\n")
        for line in evictions:
            print(f"- {line}")
    if args.raw:
        print()
        for d in designs:
            print(f"{d.key}: " + ", ".join(f"{s:.2f}" for s in d.seconds)
                  + " | cpu " + ", ".join(f"{s:.2f}" for s in d.cpu_seconds))
    spark.stop()


if __name__ == "__main__":
    main()

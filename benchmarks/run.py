"""Time Cola's single scan against the best hand-written plan and the one-action-per-check style.

    .venv/bin/python -m benchmarks.run --rows 2000000 --rounds 9

Generates the orders table once (``benchmarks/data``), checks that every plan measures the
same 15 numbers as Cola, counts the Spark jobs each plan starts, then times the plans in one
Spark session: one untimed warm-up round, then rounds in which every plan runs once, in a
new order each round, so that warm-up and other load on the machine fall on all of them
alike. Prints a markdown table.

Besides wall-clock seconds, the table shows the CPU seconds the Spark JVM spent on each run
(read from ``/proc``). On a shared machine wall time moves with everyone else's load; CPU
time mostly does not, so it is the steadier of the two when the figures are noisy.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import gc
import os
import random
import statistics
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from benchmarks.block import BLOCK
from benchmarks.generate import write_orders
from benchmarks.plans import (
    agg_plus_distinct,
    assert_same_numbers,
    cola_run,
    one_action_per_check,
    single_agg,
)
from benchmarks.session import benchmark_session
from cola_core import Cola

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from benchmarks.plans import Measures, Plan

__all__ = ["main"]

HAND_WRITTEN = ("b1", "b2")


@dataclass
class Variant:
    key: str
    label: str
    plan: Plan
    jobs: int = 0
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)


def variants() -> list[Variant]:
    return [
        Variant("a", "(a) Cola `run`, distinct `separate`", cola_run(Cola(distinct_strategy="separate"))),
        Variant("a-inline", "(a) Cola `run`, distinct `inline`", cola_run(Cola(distinct_strategy="inline"))),
        Variant("b1", "(b1) hand-written: one `df.agg`, distinct inside", single_agg),
        Variant("b2", "(b2) hand-written: `df.agg` + one distinct aggregation", agg_plus_distinct),
        Variant("c", "(c) one action per check", one_action_per_check(Cola())),
    ]


class JvmClock:
    """CPU seconds used so far by the local Spark JVM (user + system); NaN where /proc is missing."""

    def __init__(self, spark: SparkSession) -> None:
        pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
        self._stat = f"/proc/{pid}/stat"
        self._ticks = os.sysconf("SC_CLK_TCK")
        self.available = os.path.exists(self._stat)

    def __call__(self) -> float:
        if not self.available:
            return float("nan")
        with open(self._stat) as stat:
            # Fields after the parenthesised command name; utime and stime are the 14th and 15th.
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self._ticks


def count_jobs(spark: SparkSession, action: Callable[[], Measures]) -> tuple[int, Measures]:
    context = spark.sparkContext
    group = f"cola-benchmark-{uuid.uuid4().hex}"
    context.setJobGroup(group, "counted by the benchmark")
    try:
        measures = action()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    return len(context.statusTracker().getJobIdsForGroup(group)), measures


def verify(spark: SparkSession, df: DataFrame, plans: list[Variant]) -> None:
    """Every plan must measure what Cola measures; also records each plan's job count."""
    started = time.time()
    reference = cola_run(Cola())(df)
    for variant in plans:
        variant.jobs, measures = count_jobs(spark, functools.partial(variant.plan, df))
        assert_same_numbers(reference, measures, variant.label, freshness_slack=time.time() - started + 1)


def time_rounds(df: DataFrame, plans: list[Variant], rounds: int, clock: JvmClock) -> None:
    """Each round runs every plan once, in a fresh seeded order.

    A fixed rotation would always run a plan right after the same neighbour (the 17-job
    plan, say) and make it pay for that neighbour's garbage; a new order each round does not.
    The JVM is deliberately not asked for a full GC between runs: measured here, a run right
    after ``System.gc()`` took about 0.25 s longer at 2M rows, which distorts instead of levelling.
    """
    order = random.Random(len(plans) * 1000 + rounds)
    for _ in range(rounds):
        for variant in order.sample(plans, len(plans)):
            gc.collect()  # Python's garbage only; see above for the JVM's
            cpu, wall = clock(), time.perf_counter()
            variant.plan(df)
            variant.seconds.append(time.perf_counter() - wall)
            variant.cpu_seconds.append(clock() - cpu)


def _paired_ratio(variant: Variant, best: Variant, samples: str) -> float:
    """Median over rounds of this plan's time over the best plan's time in the same round.

    Plans of one round run close together, so a change in the machine's load between rounds
    cancels out of this ratio; the ratio of the two medians does not have that protection.
    """
    mine, theirs = getattr(variant, samples), getattr(best, samples)
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def render_table(plans: list[Variant]) -> str:
    by_key = {variant.key: variant for variant in plans}
    hand = [by_key[key] for key in HAND_WRITTEN if key in by_key]
    best = min(hand, key=lambda v: statistics.median(v.seconds)) if hand else None
    columns = (
        "Variant", "Median s", "Min s", "Max s", "Spark jobs", "Ratio to best hand-written",
        "Paired ratio", "Median CPU s", "CPU paired ratio",
    )
    lines = ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
    for variant in plans:
        median = statistics.median(variant.seconds)
        cpu = statistics.median(variant.cpu_seconds)
        if best:
            ratios = (
                f"{median / statistics.median(best.seconds):.2f}x",
                f"{_paired_ratio(variant, best, 'seconds'):.2f}x",
                f"{_paired_ratio(variant, best, 'cpu_seconds'):.2f}x",
            )
        else:
            ratios = ("-", "-", "-")
        lines.append(
            f"| {variant.label} | {median:.2f} | {min(variant.seconds):.2f} | {max(variant.seconds):.2f} "
            f"| {variant.jobs} | {ratios[0]} | {ratios[1]} | {cpu:.2f} | {ratios[2]} |"
        )
    if best:
        lines.append(f"\nBest hand-written plan (lower median wall time): {best.label}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time Cola's single scan against hand-written plans.")
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows in the orders table (default 2,000,000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per plan (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--cores", type=int, default=2, help="local Spark threads (default 2)")
    parser.add_argument("--shuffle-partitions", type=int, default=4, help="spark.sql.shuffle.partitions (default 4)")
    parser.add_argument("--adaptive", action="store_true", help="turn adaptive query execution on")
    parser.add_argument(
        "--only", default=None, help="comma-separated plans to run, from a, a-inline, b1, b2, c (default all)"
    )
    parser.add_argument("--raw", action="store_true", help="also print every timing")
    args = parser.parse_args(argv)

    spark = benchmark_session(cores=args.cores, adaptive=args.adaptive, shuffle_partitions=args.shuffle_partitions)
    path = write_orders(spark, args.rows)
    df = spark.read.parquet(str(path))
    plans = variants()
    if args.only:
        wanted = args.only.split(",")
        plans = [variant for variant in plans if variant.key in wanted]
    clock = JvmClock(spark)

    load_before = os.getloadavg()
    verify(spark, df, plans)
    time_rounds(df, plans, args.warmup, clock)
    for variant in plans:
        variant.seconds.clear()
        variant.cpu_seconds.clear()
    time_rounds(df, plans, args.rounds, clock)
    load_after = os.getloadavg()

    print(
        f"{args.rows:,} rows of parquet, {len(BLOCK)} rules, {args.rounds} rounds after {args.warmup} warm-up, "
        f"local[{args.cores}], Spark {spark.version}, AQE {'on' if args.adaptive else 'off'}, "
        f"{args.shuffle_partitions} shuffle partitions, {dt.date.today().isoformat()}; "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after.\n"
    )
    print(render_table(plans))
    if args.raw:
        print()
        for variant in plans:
            timings = ", ".join(f"{s:.2f}" for s in variant.seconds)
            cpu = ", ".join(f"{s:.2f}" for s in variant.cpu_seconds)
            print(f"- {variant.key}: wall [{timings}], cpu [{cpu}]")
    spark.stop()


if __name__ == "__main__":
    main()

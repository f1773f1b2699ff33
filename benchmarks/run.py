"""Time Cola's single scan against the best hand-written plan and the one-action-per-check style.

    .venv/bin/python -m benchmarks.run --rows 2000000 --rounds 9
    .venv/bin/python -m benchmarks.run --rows 1000 --rounds 40 --block both

Generates the orders table once (``benchmarks/data``), checks that every plan measures the
same numbers as Cola, counts the Spark jobs and the Py4J round trips each plan makes, then
times the plans in one Spark session: one untimed warm-up round, then rounds in which every
plan of every block runs once, in a new order each round, so that warm-up and other load on
the machine fall on all of them alike. Prints markdown tables: one per block, then Cola's
ratio to the best hand-written plan per block, and how each grows from 15 to 80 rules.

Besides wall-clock seconds, the tables show the CPU seconds the Spark JVM spent on each run
(read from ``/proc``) and the driver's Python CPU seconds. On a shared machine wall time
moves with everyone else's load; CPU time mostly does not, so it is the steadier of the two
when the figures are noisy. On a small table the driver's Python side (building Columns
through Py4J) is a large share of a run, and the JVM's CPU does not see it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import gc
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from benchmarks.generate import write_orders
from benchmarks.plans import (
    BLOCK_SPECS,
    BlockSpec,
    agg_plus_distinct,
    assert_same_numbers,
    cola_run,
    one_action_per_check,
    single_agg,
)
from benchmarks.py4j_calls import count_py4j_calls
from benchmarks.session import benchmark_session
from cola_core import Cola

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from benchmarks.plans import Measures, Plan

__all__ = ["main"]

HAND_WRITTEN = ("b1", "b2")
PLAN_KEYS = ("a", "a-inline", "b1", "b2", "c")
# The 80-rule block skips the slow plans unless --only names them: inline carries 80 rules'
# aggregates through three distinct groupings, and (c) is 80-odd scans.
DEFAULT_PLANS = {"15": PLAN_KEYS, "80": ("a", "b1", "b2")}


@dataclass
class Variant:
    block: str
    key: str
    label: str
    plan: Plan
    jobs: int = 0
    py4j_calls: int = 0
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    python_seconds: list[float] = field(default_factory=list)

    @property
    def rules(self) -> int:
        return len(BLOCK_SPECS[self.block].rules)


def variants(spec: BlockSpec) -> list[Variant]:
    rules = spec.rules
    return [
        Variant(
            spec.name, "a", "(a) Cola `run`, distinct `separate`", cola_run(Cola(distinct_strategy="separate"), rules)
        ),
        Variant(
            spec.name, "a-inline", "(a) Cola `run`, distinct `inline`",
            cola_run(Cola(distinct_strategy="inline"), rules),
        ),
        Variant(spec.name, "b1", "(b1) hand-written: one `df.agg`, distinct inside", single_agg(spec)),
        Variant(
            spec.name, "b2", "(b2) hand-written: `df.agg` + one distinct aggregation per set", agg_plus_distinct(spec)
        ),
        Variant(spec.name, "c", "(c) one action per check", one_action_per_check(Cola(), rules)),
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
    for name in dict.fromkeys(variant.block for variant in plans):
        spec = BLOCK_SPECS[name]
        started = time.time()
        reference = cola_run(Cola(), spec.rules)(df)
        for variant in (v for v in plans if v.block == name):
            variant.jobs, measures = count_jobs(spark, functools.partial(variant.plan, df))
            label = f"{variant.label} ({name} rules)"
            assert_same_numbers(spec, reference, measures, label, freshness_slack=time.time() - started + 1)


def time_rounds(
    df: DataFrame, plans: list[Variant], rounds: int, clock: JvmClock, seed: int, count_calls: bool = False
) -> None:
    """Each round runs every plan once, in a fresh seeded order.

    A fixed rotation would always run a plan right after the same neighbour (the 17-job
    plan, say) and make it pay for that neighbour's garbage; a new order each round does not.
    The JVM is deliberately not asked for a full GC between runs: measured here, a run right
    after ``System.gc()`` took about 0.25 s longer at 2M rows, which distorts instead of levelling.

    With ``count_calls``, the last round also counts each plan's Py4J round trips (a warm run;
    the counter costs about a microsecond per call, so this is done in the warm-up).
    """
    order = random.Random(seed)
    for number in range(rounds):
        started = time.perf_counter()
        for variant in order.sample(plans, len(plans)):
            gc.collect()  # Python's garbage only; see above for the JVM's
            counting = count_py4j_calls() if count_calls and number == rounds - 1 else contextlib.nullcontext()
            cpu, python, wall = clock(), time.process_time(), time.perf_counter()
            with counting as calls:
                variant.plan(df)
            if calls is not None:
                variant.py4j_calls = calls.total
            variant.seconds.append(time.perf_counter() - wall)
            variant.python_seconds.append(time.process_time() - python)
            variant.cpu_seconds.append(clock() - cpu)
        print(f"round {number + 1}/{rounds}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


def _paired(mine: list[float], theirs: list[float]) -> float:
    """Median over rounds of one plan's time over another's in the same round.

    Plans of one round run close together, so a change in the machine's load between rounds
    cancels out of this ratio; the ratio of the two medians does not have that protection.
    """
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def best_hand_written(plans: list[Variant], block: str) -> Variant | None:
    hand = [v for v in plans if v.block == block and v.key in HAND_WRITTEN]
    return min(hand, key=lambda v: statistics.median(v.seconds)) if hand else None


def _by_key(plans: list[Variant], block: str, key: str) -> Variant | None:
    return next((v for v in plans if v.block == block and v.key == key), None)


def render_table(plans: list[Variant], block: str) -> str:
    mine = [v for v in plans if v.block == block]
    best = best_hand_written(plans, block)
    columns = (
        "Variant", "Median s", "Min s", "Max s", "Spark jobs", "Py4J calls", "Py4J calls/rule",
        "Ratio to best hand-written", "Paired ratio", "Median CPU s", "CPU paired ratio", "Median Python CPU s",
    )
    lines = ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
    for variant in mine:
        median = statistics.median(variant.seconds)
        cpu = statistics.median(variant.cpu_seconds)
        if best:
            ratios = (
                f"{median / statistics.median(best.seconds):.2f}x",
                f"{_paired(variant.seconds, best.seconds):.2f}x",
                f"{_paired(variant.cpu_seconds, best.cpu_seconds):.2f}x",
            )
        else:
            ratios = ("-", "-", "-")
        lines.append(
            f"| {variant.label} | {median:.3f} | {min(variant.seconds):.3f} | {max(variant.seconds):.3f} "
            f"| {variant.jobs} | {variant.py4j_calls} | {variant.py4j_calls / variant.rules:.1f} "
            f"| {ratios[0]} | {ratios[1]} | {cpu:.2f} | {ratios[2]} | {statistics.median(variant.python_seconds):.3f} |"
        )
    if best:
        lines.append(f"\nBest hand-written plan (lower median wall time): {best.label}.")
    return "\n".join(lines)


def render_summary(plans: list[Variant], rows: int) -> str:
    """Cola (a) against the best hand-written plan per block, and the growth from 15 to 80 rules."""
    blocks = list(dict.fromkeys(v.block for v in plans))
    lines = [
        "| Rows | Rules | Cola median s | Best hand-written | its median s | Ratio of medians | Paired ratio "
        "| CPU paired ratio | Py4J calls/rule, Cola | Py4J calls/rule, hand |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for block in blocks:
        cola, best = _by_key(plans, block, "a"), best_hand_written(plans, block)
        if cola is None or best is None:
            continue
        lines.append(
            f"| {rows:,} | {block} | {statistics.median(cola.seconds):.3f} | ({best.key}) "
            f"| {statistics.median(best.seconds):.3f} "
            f"| {statistics.median(cola.seconds) / statistics.median(best.seconds):.2f}x "
            f"| {_paired(cola.seconds, best.seconds):.2f}x | {_paired(cola.cpu_seconds, best.cpu_seconds):.2f}x "
            f"| {cola.py4j_calls / cola.rules:.1f} | {best.py4j_calls / best.rules:.1f} |"
        )
    if {"15", "80"} <= set(blocks):
        lines += [
            "",
            "Growth from 15 to 80 rules (time of the 80-rule block over the 15-rule block's):",
            "",
            "| Plan | 15 rules median s | 80 rules median s | Ratio of medians | Paired (same round) | CPU paired |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        pairs = [("(a) Cola", _by_key(plans, "15", "a"), _by_key(plans, "80", "a"))]
        best15, best80 = best_hand_written(plans, "15"), best_hand_written(plans, "80")
        if best15 and best80:
            pairs.append((f"best hand-written ({best15.key} / {best80.key})", best15, best80))
        for label, small, large in pairs:
            if small is None or large is None:
                continue
            lines.append(
                f"| {label} | {statistics.median(small.seconds):.3f} | {statistics.median(large.seconds):.3f} "
                f"| {statistics.median(large.seconds) / statistics.median(small.seconds):.2f}x "
                f"| {_paired(large.seconds, small.seconds):.2f}x "
                f"| {_paired(large.cpu_seconds, small.cpu_seconds):.2f}x |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time Cola's single scan against hand-written plans.")
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows in the orders table (default 2,000,000)")
    parser.add_argument(
        "--block", choices=("15", "80", "both"), default="both", help="rule block(s) to time (default both)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per plan (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--cores", type=int, default=2, help="local Spark threads (default 2)")
    parser.add_argument("--shuffle-partitions", type=int, default=4, help="spark.sql.shuffle.partitions (default 4)")
    parser.add_argument("--adaptive", action="store_true", help="turn adaptive query execution on")
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated plans to run, from a, a-inline, b1, b2, c "
        "(default: all five for 15 rules; a, b1, b2 for 80 rules)",
    )
    parser.add_argument("--raw", action="store_true", help="also print every timing")
    args = parser.parse_args(argv)
    if args.only:
        unknown = set(args.only.split(",")) - set(PLAN_KEYS)
        if unknown:
            parser.error(f"unknown plan(s) {', '.join(sorted(unknown))}; choose from {', '.join(PLAN_KEYS)}")

    spark = benchmark_session(cores=args.cores, adaptive=args.adaptive, shuffle_partitions=args.shuffle_partitions)
    path = write_orders(spark, args.rows)
    df = spark.read.parquet(str(path))
    blocks = ("15", "80") if args.block == "both" else (args.block,)
    plans = []
    for block in blocks:
        wanted = args.only.split(",") if args.only else DEFAULT_PLANS[block]
        plans += [variant for variant in variants(BLOCK_SPECS[block]) if variant.key in wanted]
    clock = JvmClock(spark)

    load_before = os.getloadavg()
    verify(spark, df, plans)
    print("verified: every plan measures Cola's numbers", file=sys.stderr, flush=True)
    # Py4J calls are counted in the last warm-up round, or in the timed rounds' last without one.
    time_rounds(df, plans, args.warmup, clock, seed=len(plans) * 1000 + args.rounds + 1, count_calls=True)
    for variant in plans:
        variant.seconds.clear()
        variant.cpu_seconds.clear()
        variant.python_seconds.clear()
    time_rounds(df, plans, args.rounds, clock, seed=len(plans) * 1000 + args.rounds, count_calls=not args.warmup)
    load_after = os.getloadavg()

    rules = " and ".join(f"{len(BLOCK_SPECS[b].rules)}" for b in blocks)
    print(
        f"{args.rows:,} rows of parquet, {rules} rules, {args.rounds} rounds after {args.warmup} warm-up, "
        f"local[{args.cores}], Spark {spark.version}, AQE {'on' if args.adaptive else 'off'}, "
        f"{args.shuffle_partitions} shuffle partitions, {dt.date.today().isoformat()}; "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after.\n"
    )
    for block in blocks:
        print(f"### {len(BLOCK_SPECS[block].rules)} rules\n")
        print(render_table(plans, block))
        print()
    print(render_summary(plans, args.rows))
    if args.raw:
        print()
        for variant in plans:
            timings = ", ".join(f"{s:.3f}" for s in variant.seconds)
            cpu = ", ".join(f"{s:.2f}" for s in variant.cpu_seconds)
            python = ", ".join(f"{s:.3f}" for s in variant.python_seconds)
            print(f"- {variant.block}:{variant.key}: wall [{timings}], cpu [{cpu}], python cpu [{python}]")
    spark.stop()


if __name__ == "__main__":
    main()

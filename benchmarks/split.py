"""Time ``Cola().split_write`` against the hand-written split plans (issue 12).

    .venv/bin/python -m benchmarks.split --rows 2000000 --rounds 3 [--json PATH]

Every variant writes both outputs of the split of the orders table (parquet, fresh temp folders
each run), the invalid rows with the array of rule codes (``codes``), and measures the block's
plain aggregates. The rules are the row-level rules of ``BLOCK`` (8, ``unique(order_id)`` among
them, so the codes need a window over ``order_id``) and its 13 plain aggregates
(``non_distinct_rules``): 14 rules in all. The aggregate-only distinct count of the block
(``duplicate_count``) is left out, as in ``split_designs``: it would cost every variant the same
extra pass.

- ``cola``: ``Cola().split_write(df, rules, valid=..., invalid=..., annotate="codes")``;
- ``b-hand``: the best single-pass hand plan (``split_designs.design_b``): the codes computed
  once, ONE write partitioned by outcome to staging with the aggregates and the two counts
  observed, then the two partition folders renamed into the destinations;
- ``a-hand``: what people write (``split_designs.design_a_hand``): one ``df.agg``, then
  filter+write valid, filter+write invalid;
- ``cola-lazy``: today's path (``split_designs.design_a_cola``): ``Cola().run`` for the
  aggregates, then ``Cola().split`` and a write of each output.

While ``split_write`` is not in ``cola_core`` yet, ``cola`` is skipped and the others still run.
First, once and untimed, every variant runs and its outputs are read back: each must have the
row counts per side and the ``groupBy(codes).count()`` of the invalid side of ``b-hand``, and
``cola``'s ``valid_count``/``invalid_count`` must be the rows read back (and its results those
of ``Cola().run`` on the same rules). Then one untimed warm-up round and ``--rounds`` timed
rounds in one Spark session (AQE off), the order of the variants reversed every other round.
Each run is tagged with a job group: its Spark jobs, and its source reads (the stages' input
records over the rows, as in ``split_designs``), are those of the last round.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchmarks.block import BLOCK, non_distinct_rules
from benchmarks.generate import write_orders
from benchmarks.run import JvmClock
from benchmarks.session import benchmark_session
from benchmarks.split_designs import (
    CODES,
    Context,
    Group,
    clean,
    design_a_cola,
    design_a_hand,
    design_b,
    fresh_context,
    paired,
)
from cola_core import Cola

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["main"]

# The targets for split_write: paired time over (b)'s and over (a)'s.
TARGET_VS_B, TARGET_VS_A = 1.1, 0.8


def split_rules() -> list[dict[str, Any]]:
    """BLOCK's row-level rules and its plain aggregates, in BLOCK's order (14 rules)."""
    aggregates = non_distinct_rules()
    checks = Cola().parse(BLOCK)
    return [rule for rule, check in zip(BLOCK, checks, strict=True) if check.is_row_level or rule in aggregates]


def design_cola(ctx: Context) -> None:
    ctx.measured["split"] = Cola().split_write(
        ctx.df, split_rules(), valid=ctx.valid, invalid=ctx.invalid, annotate=CODES
    )


def design_cola_annotate_valid(ctx: Context) -> None:
    ctx.measured["split"] = Cola().split_write(
        ctx.df, split_rules(), valid=ctx.valid, invalid=ctx.invalid, annotate=CODES, annotate_valid=True
    )


@dataclass
class Variant:
    key: str
    label: str
    run: Callable[[Context], None]
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    jobs: int = 0
    source_reads: float = 0.0


VARIANTS = [
    Variant("cola", "`Cola().split_write` (valid keeps the input's schema: its rows copied once)", design_cola),
    Variant("cola-annotate-valid", "`Cola().split_write(annotate_valid=True)` (both renamed)",
            design_cola_annotate_valid),
    Variant("b-hand", "(b) by hand: one write partitioned by outcome + observe, rename", design_b),
    Variant("a-hand", "(a) by hand: `agg`, filter+write valid, filter+write invalid", design_a_hand),
    Variant("cola-lazy", "Cola `run` + lazy `split`, two writes (today)", design_a_cola),
]


# -- checking ---------------------------------------------------------------------------------


def read_back(ctx: Context) -> tuple[int, int, list[tuple[Any, ...]]]:
    """(valid rows, invalid rows, sorted rows of the invalid side's ``groupBy(codes).count()``)."""
    valid = ctx.spark.read.parquet(ctx.valid)
    invalid = ctx.spark.read.parquet(ctx.invalid)
    codes = sorted(tuple(row) for row in invalid.groupBy(CODES).count().collect())
    return valid.count(), invalid.count(), codes


def verify(spark: SparkSession, df: Any, rows: int, variants: list[Variant], base: str, checkpoint_dir: str) -> None:
    """Every variant writes (b)'s outputs; ``cola``'s counts and results are right."""
    expected = None
    for variant in sorted(variants, key=lambda v: v.key != "b-hand"):  # (b) first: the reference
        ctx = fresh_context(spark, df, rows, False, base, checkpoint_dir)
        variant.run(ctx)
        valid, invalid, codes = read_back(ctx)
        if valid + invalid != rows:
            raise AssertionError(f"{variant.key}: {valid:,} + {invalid:,} rows written, the input has {rows:,}")
        if expected is None:
            expected = (valid, invalid, codes)
        elif (valid, invalid, codes) != expected:
            raise AssertionError(f"{variant.key}: outputs differ from (b)'s: {valid:,} valid, {invalid:,} invalid "
                                 f"against {expected[0]:,} and {expected[1]:,}, or other codes")
        observed = ctx.measured.get("observed")
        if observed is not None and (observed["valid_rows"], observed["invalid_rows"]) != (valid, invalid):
            raise AssertionError(f"{variant.key}: the observed counts are not the rows written")
        split = ctx.measured.get("split")
        if split is not None:
            if (split.valid_count, split.invalid_count) != (valid, invalid):
                raise AssertionError(f"cola counted {split.valid_count:,} + {split.invalid_count:,} rows, "
                                     f"wrote {valid:,} + {invalid:,}")
            mine = [(r.rule_type, r.passed, r.failed_count) for r in split.results]
            theirs = [(r.rule_type, r.passed, r.failed_count) for r in Cola().run(df, split_rules())]
            if mine != theirs:
                raise AssertionError(f"split_write's results differ from run's:\n{mine}\n{theirs}")
        print(f"verified {variant.key}: {valid:,} valid + {invalid:,} invalid, {len(codes)} code sets",
              file=sys.stderr, flush=True)
        clean(ctx)


# -- timing -----------------------------------------------------------------------------------


def time_rounds(spark: SparkSession, df: Any, rows: int, variants: list[Variant], rounds: int, base: str,
                checkpoint_dir: str, clock: JvmClock, record: bool) -> None:
    for number in range(rounds):
        started = time.perf_counter()
        for variant in variants if number % 2 == 0 else variants[::-1]:
            ctx = fresh_context(spark, df, rows, False, base, checkpoint_dir)
            gc.collect()
            group = Group(spark)
            cpu, wall = clock(), time.perf_counter()
            with group:
                variant.run(ctx)
            seconds, cpu_seconds = time.perf_counter() - wall, clock() - cpu
            if record:
                variant.seconds.append(seconds)
                variant.cpu_seconds.append(cpu_seconds)
                variant.jobs = len(group.jobs())
                variant.source_reads = group.input_records() / rows
            clean(ctx)
        label = f"round {number + 1}/{rounds}" if record else "warm-up"
        print(f"{label}: {time.perf_counter() - started:.1f} s, load {os.getloadavg()[0]:.2f}", file=sys.stderr,
              flush=True)


# -- reporting --------------------------------------------------------------------------------


def figures(variants: list[Variant]) -> dict[str, dict[str, Any]]:
    by_key = {v.key: v for v in variants}
    b, a = by_key.get("b-hand"), by_key.get("a-hand")
    out = {}
    for v in variants:
        out[v.key] = {
            "label": v.label,
            "seconds": v.seconds,
            "cpu_seconds": v.cpu_seconds,
            "median_s": statistics.median(v.seconds),
            "min_s": min(v.seconds),
            "max_s": max(v.seconds),
            "paired_vs_b": paired(v.seconds, b.seconds) if b else None,
            "paired_vs_a": paired(v.seconds, a.seconds) if a else None,
            "cpu_paired_vs_b": paired(v.cpu_seconds, b.cpu_seconds) if b else None,
            "spark_jobs": v.jobs,
            "source_reads": v.source_reads,
        }
    return out


def render(numbers: dict[str, dict[str, Any]]) -> str:
    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}x"

    columns = ("Variant", "Median s", "Min s", "Max s", "Paired vs (b)", "Paired vs (a)", "CPU paired vs (b)",
               "Spark jobs", "Source reads (input records / rows)")
    lines = ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
    for n in numbers.values():
        lines.append(f"| {n['label']} | {n['median_s']:.2f} | {n['min_s']:.2f} | {n['max_s']:.2f} "
                     f"| {ratio(n['paired_vs_b'])} | {ratio(n['paired_vs_a'])} | {ratio(n['cpu_paired_vs_b'])} "
                     f"| {n['spark_jobs']} | {n['source_reads']:.2f} |")
    return "\n".join(lines)


def verdict(numbers: dict[str, dict[str, Any]]) -> str:
    lines = []
    for key in ("cola", "cola-annotate-valid"):
        cola = numbers.get(key)
        if cola is None:
            lines.append(f"Verdict ({key}): none, not measured (not available yet, or left out by --only).")
            continue
        if cola["paired_vs_b"] is None or cola["paired_vs_a"] is None:
            lines.append(f"Verdict ({key}): none, it needs the b-hand and a-hand baselines in the same run.")
            continue
        vs_b, vs_a = cola["paired_vs_b"], cola["paired_vs_a"]
        meets = vs_b <= TARGET_VS_B and vs_a <= TARGET_VS_A
        lines.append(
            f"Verdict ({key}): {'MEETS' if meets else 'MISSES'} the issue's targets: {vs_b:.2f}x of (b) "
            f"(target <= {TARGET_VS_B}x, {'met' if vs_b <= TARGET_VS_B else 'missed'}) and {vs_a:.2f}x of (a) "
            f"(target <= {TARGET_VS_A}x, {'met' if vs_a <= TARGET_VS_A else 'missed'}), paired medians."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--only", default=None,
                        help="comma-separated variant keys: cola,cola-annotate-valid,b-hand,a-hand,cola-lazy")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the figures to PATH")
    args = parser.parse_args(argv)
    variants = [v for v in VARIANTS if not args.only or v.key in args.only.split(",")]
    available = hasattr(Cola, "split_write")
    if not available:
        print("split_write not available yet", file=sys.stderr, flush=True)
        variants = [v for v in variants if v.key not in ("cola", "cola-annotate-valid")]

    spark = benchmark_session(cores=args.cores)
    df = spark.read.parquet(str(write_orders(spark, args.rows)))
    base = tempfile.mkdtemp(prefix="cola-split-")
    checkpoint_dir = os.path.join(base, "_checkpoints")  # unused here; split_designs' clean() expects it
    os.makedirs(checkpoint_dir)
    clock = JvmClock(spark)
    load_before = os.getloadavg()
    try:
        verify(spark, df, args.rows, variants, base, checkpoint_dir)
        time_rounds(spark, df, args.rows, variants, args.warmup, base, checkpoint_dir, clock, record=False)
        time_rounds(spark, df, args.rows, variants, args.rounds, base, checkpoint_dir, clock, record=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    load_after = os.getloadavg()

    numbers = figures(variants)
    header = (f"{args.rows:,} rows of parquet, {len(split_rules())} rules (8 row-level, annotate; 13 plain "
              f"aggregates; duplicate_count left out), {args.rounds} rounds after {args.warmup} warm-up, "
              f"local[{args.cores}], Spark {spark.version}, AQE off, {dt.date.today().isoformat()}; "
              f"split_write {'available' if available else 'NOT available'}; "
              f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after.")
    print(header + "\n")
    print(render(numbers) + "\n")
    print(verdict(numbers))
    print("\nRaw wall seconds per round: " + "; ".join(
        f"{key} " + ", ".join(f"{s:.2f}" for s in n["seconds"]) for key, n in numbers.items()))
    if args.json:
        meta = {"rows": args.rows, "rounds": args.rounds, "warmup": args.warmup, "cores": args.cores,
                "spark": spark.version, "date": dt.date.today().isoformat(), "split_write_available": available,
                "rules": len(split_rules()), "load_before": load_before, "load_after": load_after,
                "targets": {"vs_b": TARGET_VS_B, "vs_a": TARGET_VS_A}, "verdict": verdict(numbers)}
        with open(args.json, "w") as out:
            json.dump({"meta": meta, "variants": numbers}, out, indent=2)
    spark.stop()


if __name__ == "__main__":
    main()

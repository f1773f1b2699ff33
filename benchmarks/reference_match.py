"""Time ``reference_match`` against a hand-written comparison with the reference (issue 13).

    .venv/bin/python -m benchmarks.reference_match --rows 2000000 --rounds 3

The data is the orders table; the reference is a copy of it with one row in a thousand
missing, one in a hundred with its amount 0.005 or 0.02 off and one in a hundred with another
status, written to parquet once. Two sizes of reference: ``large`` (the whole copy, so Spark
sort-merge joins it) and ``small`` (its first 100,000 rows, broadcast).

- ``cola``: ``Cola().run(orders, [reference_match on order_id, comparing amount (within 0.01),
  status and email])``;
- ``hand``: what people write: one left join with the reference's columns renamed, and one
  ``agg`` counting each column's mismatches (``<=>``, the tolerance by ``abs(a - b) <= 0.01``)
  and the missing keys. It has no guard against duplicate reference keys, which would
  duplicate rows;
- ``hand-guarded``: the same, with the guard Cola has: the reference reduced to one row per
  key by a window (its row count and ``row_number() = 1``), so a duplicate key is seen and
  never joined twice.

First, untimed, both variants must count the same mismatches per column and the same missing
keys. Then a warm-up round and ``--rounds`` timed rounds, the order of the variants reversed
every other round; a paired ratio is the median of cola / the other within each round.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.generate import orders_path, write_orders
from benchmarks.session import benchmark_session
from cola_core import Cola

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["main"]

COMPARED = ("amount", "status", "email")
SMALL_REFERENCE = 100_000


def write_reference(spark: SparkSession, rows: int) -> Path:
    """The orders, one row per id: 0.1% of rows missing, 1% of amounts 0.005 or 0.02 off, 1% of statuses changed."""
    from pyspark.sql import functions as F

    path = orders_path(rows).with_name(f"reference_{rows}.parquet")
    if not (path / "_SUCCESS").exists():
        # The orders repeat one id in 40,000; a reference holds each key once.
        orders = spark.read.parquet(str(orders_path(rows))).dropDuplicates(["order_id"])
        bucket = F.col("order_id") % 1000
        changed = orders.where(bucket != 999).select(
            "order_id",
            # 0.005 off (within the rule's 0.01) or 0.02 off (beyond it), never at the boundary,
            # where the hand plan's plain double comparison and Cola's would disagree on rounding.
            F.when(bucket < 10, F.col("amount") + F.when(bucket % 2 == 0, 0.005).otherwise(0.02))
            .otherwise(F.col("amount")).alias("amount"),
            F.when((bucket >= 10) & (bucket < 20), F.lit("changed")).otherwise(F.col("status")).alias("status"),
            "email",
        )
        changed.write.mode("overwrite").parquet(str(path))
    return path


def rule(reference: dict[str, Any]) -> dict[str, Any]:
    return {"type": "reference_match", "reference": reference, "keys": ["order_id"], "columns": list(COMPARED),
            "absolute_difference": {"amount": 0.01}}


def cola_counts(orders: DataFrame, reference: dict[str, Any]) -> tuple[int, ...]:
    (result,) = Cola().run(orders, [rule(reference)])
    return (result.failed_count,)


def hand_counts(orders: DataFrame, reference: DataFrame) -> tuple[int, ...]:
    from pyspark.sql import functions as F

    theirs = reference.select(F.col("order_id").alias("r_id"), *[F.col(c).alias(f"r_{c}") for c in COMPARED])
    joined = orders.join(theirs, orders.order_id == theirs.r_id, "left")
    found = F.col("r_id").isNotNull()
    differs = {c: found & ~F.col(c).eqNullSafe(F.col(f"r_{c}")) for c in COMPARED}
    within = F.coalesce(F.abs(F.col("amount") - F.col("r_amount")) <= 0.01, F.lit(False))
    differs["amount"] = differs["amount"] & ~within
    missing = F.col("order_id").isNotNull() & ~found
    offending = missing
    for condition in differs.values():
        offending = offending | condition
    row = joined.agg(F.count(F.when(offending, 1))).first()
    return (int(row[0]),)


def guarded(reference: DataFrame) -> DataFrame:
    """One row per key of ``reference``, with the number of its rows that hold the key."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_key = Window.partitionBy("order_id").orderBy("order_id")
    whole_key = per_key.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    counted = reference.select("*", F.count(F.lit(1)).over(whole_key).alias("rows"),
                               F.row_number().over(per_key).alias("rank"))
    return counted.where("rank = 1").drop("rank")


def timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    spark = benchmark_session()
    orders = spark.read.parquet(str(write_orders(spark, args.rows)))
    reference_path = write_reference(spark, args.rows)
    spark.read.parquet(str(reference_path)).where(f"order_id < {SMALL_REFERENCE}").createOrReplaceTempView("small_ref")
    spark.read.parquet(str(reference_path)).createOrReplaceTempView("large_ref")
    for size in ("small", "large"):
        view = f"{size}_ref"
        variants: dict[str, Callable[[], Any]] = {
            "cola": lambda view=view: cola_counts(orders, {"table": view}),
            "hand": lambda view=view: hand_counts(orders, spark.table(view)),
            "hand-guarded": lambda view=view: hand_counts(orders, guarded(spark.table(view))),
        }
        counted = {name: variant() for name, variant in variants.items()}
        assert counted["cola"] == counted["hand"] == counted["hand-guarded"], counted
        for variant in variants.values():
            variant()  # warm-up
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for round_number in range(args.rounds):
            order = list(variants) if round_number % 2 == 0 else list(reversed(variants))
            for name in order:
                seconds[name].append(timed(variants[name]))
        ratios = []
        for other in ("hand", "hand-guarded"):
            paired = statistics.median(c / h for c, h in zip(seconds["cola"], seconds[other], strict=True))
            ratios.append(f"paired cola/{other} {paired:.2f}x")
        print(f"{size} reference: offending rows {counted['cola'][0]}; "
              + ", ".join(f"{name} median {statistics.median(s):.2f} s" for name, s in seconds.items())
              + "; " + ", ".join(ratios))
    spark.stop()


if __name__ == "__main__":
    main()

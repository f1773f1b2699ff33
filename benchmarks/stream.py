"""Time ``Cola().split_stream`` against a hand-written ``foreachBatch`` split (issue 31).

    .venv/bin/python -m benchmarks.stream --rows 2000000 --files 4 --rounds 3

The orders table (``benchmarks.generate``) is copied into a landing folder as ``--files``
parquet files, read as a stream with ``maxFilesPerTrigger=1`` (one file per micro-batch) and
run with ``availableNow`` into fresh folders each round:

- ``cola``: ``Cola().split_stream(stream, rules, valid=, invalid=, checkpoint=, annotate="codes")``:
  each batch evaluated once and pinned (``plan.pinned_split``), each side written from the
  pinned rows to the ledger's staging, and published exactly once through the ledger;
- ``cola-av``: the same with ``annotate_valid=True``: the valid rows keep the (NULL) codes
  column (a copy of them was spared so before batches were pinned; now it costs the same);
- ``hand``: ``foreachBatch`` whose function splits the batch with ``Cola().split(batch, rules,
  annotate="codes")`` and writes the two sides with plain ``write.mode("append")`` calls: the
  same rows and codes, with no exactly-once (a crash half-way leaves a half-written batch that
  the restart writes again).

The rules are ``benchmarks.block.BLOCK``'s row rules. First, untimed, both variants run once and
their outputs are compared (rows per side). Then ``--rounds`` timed rounds in one session (AQE
off), the order reversed every other round. The figure is the median; the target is
``cola`` at most 1.15x ``hand``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.block import BLOCK
from benchmarks.generate import write_orders
from benchmarks.session import benchmark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ROW_TYPES = {"not_null", "unique", "range", "regex", "expression", "castable"}


def row_rules() -> list[dict[str, Any]]:
    return [rule for rule in BLOCK if rule["type"] in ROW_TYPES]


def landing(spark: SparkSession, rows: int, files: int, folder: Path) -> Any:
    """The table as ``files`` parquet files, oldest first, and its schema."""
    table = spark.read.parquet(str(write_orders(spark, rows)))
    table.repartition(files).write.mode("overwrite").parquet(str(folder))
    for number, path in enumerate(sorted(folder.glob("part-*"))):
        stamp = 1_700_000_000 + number  # a file source takes files oldest first
        os.utime(path, (stamp, stamp))
    return table.schema


def stream(spark: SparkSession, folder: Path, schema: Any) -> DataFrame:
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(folder))


def run_cola(spark: SparkSession, folder: Path, schema: Any, out: Path) -> tuple[int, int]:
    from cola_core import Cola

    summary = Cola().split_stream(stream(spark, folder, schema), row_rules(), valid=str(out / "valid"),
                                  invalid=str(out / "invalid"), checkpoint=str(out / "checkpoint"), annotate="codes")
    return summary.valid_count, summary.invalid_count


def run_cola_annotate_valid(spark: SparkSession, folder: Path, schema: Any, out: Path) -> tuple[int, int]:
    """As ``run_cola``, with the codes column (NULL) kept in the valid output
    (``annotate_valid``), so the valid side's schema differs from ``hand``'s."""
    from cola_core import Cola

    summary = Cola().split_stream(stream(spark, folder, schema), row_rules(), valid=str(out / "valid"),
                                  invalid=str(out / "invalid"), checkpoint=str(out / "checkpoint"), annotate="codes",
                                  annotate_valid=True)
    return summary.valid_count, summary.invalid_count


def run_hand(spark: SparkSession, folder: Path, schema: Any, out: Path) -> tuple[int, int]:
    from cola_core import Cola

    rules = row_rules()

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        split = Cola().split(batch, rules, annotate="codes")
        split.valid.write.mode("append").parquet(str(out / "valid"))
        split.invalid.write.mode("append").parquet(str(out / "invalid"))

    query = (stream(spark, folder, schema).writeStream.foreachBatch(each_batch)
             .option("checkpointLocation", str(out / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    return spark.read.parquet(str(out / "valid")).count(), spark.read.parquet(str(out / "invalid")).count()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    spark = benchmark_session(lean=True)
    work = Path(tempfile.mkdtemp(prefix="cola-stream-bench-"))
    schema = landing(spark, args.rows, args.files, work / "landing")
    variants = {"cola": run_cola, "cola-av": run_cola_annotate_valid, "hand": run_hand}
    counts = {name: run(spark, work / "landing", schema, work / f"check-{name}") for name, run in variants.items()}
    if not counts["cola"] == counts["cola-av"] == counts["hand"]:
        raise SystemExit(f"the variants disagree: {counts}")
    print(f"{args.rows:,} rows in {args.files} files; valid, invalid = {counts['cola']}")
    times: dict[str, list[float]] = {name: [] for name in variants}
    for number in range(args.rounds):
        order = list(variants) if number % 2 == 0 else list(reversed(variants))
        for name in order:
            out = work / f"round-{number}-{name}"
            started = time.perf_counter()
            variants[name](spark, work / "landing", schema, out)
            times[name].append(time.perf_counter() - started)
            shutil.rmtree(out, ignore_errors=True)
    cola, hand = statistics.median(times["cola"]), statistics.median(times["hand"])
    for name in variants:
        each = ", ".join(f"{seconds:.1f}" for seconds in times[name])
        print(f"{name:<7} median {statistics.median(times[name]):7.1f} s  ({each})")
    print(f"cola / hand = {cola / hand:.2f}x (target <= 1.15x)")
    print(f"cola-av / hand = {statistics.median(times['cola-av']) / hand:.2f}x (the valid side keeps the codes column)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

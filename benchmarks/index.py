"""Time the Airflow plugin's ``/cola/`` index of a history store with many runs (issue 24).

    .venv/bin/python -m benchmarks.index --runs 1000 --rules 20 --rounds 5

The store is a parquet folder as Cola's runs leave it: one part file per run (each run
appends its rows in one file), ``--rules`` rows each, over ``--runs`` daily data intervals,
written by Spark (INT96 timestamps, ``_SUCCESS`` and ``.crc`` files beside the parts).

- ``light``: what the API server does for a store on a local path: ``plugin._store_index``
  reads it with pyarrow and renders the page. Each round is a fresh Python process, as an API
  server worker's first view is (pyarrow imported on the way); the time is that of the call,
  and the process then asserts that no JVM was started (no Py4J gateway, no SparkContext, no
  SparkSession);
- ``spark``: the index the same store gave before, built with Spark in a fresh process
  (``local[1]``, the session the plugin started), JVM start included: what a first view cost.

The pages of both must be the same, byte for byte. The light page must render in under
``--budget`` seconds (median of the rounds): the benchmark fails otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["main"]

_LIGHT = """
import json, sys, time
from airflow_provider_cola import plugin
started = time.perf_counter()
page = plugin._store_index(sys.argv[1], 0)
seconds = time.perf_counter() - started
from pyspark import SparkContext
from pyspark.sql import SparkSession
assert SparkContext._gateway is None and SparkContext._active_spark_context is None, "a JVM was started"
assert SparkSession.getActiveSession() is None, "a Spark session was started"
open(sys.argv[2], "w").write(page)
print(json.dumps({"seconds": seconds}))
"""

_SPARK = """
import json, sys, time
started = time.perf_counter()
from cola_core.history.summaries import index_rows
from cola_core.report.index_page import render_index
from cola_core.storage.session import spark_session
spark, _ = spark_session("local[1]", [("spark.ui.enabled", "false")], app_name="cola-plugin")
page = render_index(index_rows(spark, sys.argv[1], runs=20))
seconds = time.perf_counter() - started
open(sys.argv[2], "w").write(page)
print(json.dumps({"seconds": seconds}))
"""


def write_store(folder: Path, runs: int, rules: int) -> None:
    """A history store of ``runs`` runs of ``rules`` results each, one part file per run."""
    from pyspark.sql import functions as F

    from benchmarks.session import benchmark_session
    from cola_core.history.store import HISTORY_COLUMNS

    spark = benchmark_session()
    start = F.lit("2024-01-01").cast("timestamp")
    rows = (
        spark.range(runs).withColumnRenamed("id", "run_no")
        .crossJoin(spark.range(rules).withColumnRenamed("id", "rule_no"))
        .select(
            F.format_string("run-%05d", "run_no").alias("run_id"), F.lit("bench").alias("pipeline"),
            F.lit("shop.orders").alias("dataset"), F.format_string("rule-%03d", "rule_no").alias("rule_id"),
            F.format_string("avg(c%d)", "rule_no").alias("code"), F.lit("avg").alias("rule_type"),
            F.lit(None).cast("string").alias("check_name"), F.lit(None).cast("string").alias("dimension"),
            F.when((F.col("run_no") + F.col("rule_no")) % 7 == 0, "fail").otherwise("pass").alias("severity"),
            ((F.col("run_no") + F.col("rule_no")) % 7 != 0).alias("passed"),
            F.lit(0).cast("bigint").alias("failed_count"),
            (F.col("run_no") * 1.5 + F.col("rule_no")).alias("metric_value"),
            F.lit(None).cast("double").alias("baseline"),
            F.lit(1000).cast("bigint").alias("rows_checked"),
            (start + F.make_interval(days=F.col("run_no").cast("int"), hours=F.lit(6))).alias("validated_at"),
            F.lit("bench_dag").alias("dag_id"), F.lit("check").alias("task_id"),
            F.format_string("scheduled__%05d", "run_no").alias("airflow_run_id"), F.lit(False).alias("excluded"),
            (start + F.make_interval(days=F.col("run_no").cast("int"))).alias("data_date"),
            (start + F.make_interval(days=F.col("run_no").cast("int"))).alias("data_interval_start"),
            (start + F.make_interval(days=(F.col("run_no") + 1).cast("int"))).alias("data_interval_end"),
            (start + F.make_interval(days=F.col("run_no").cast("int"))).alias("logical_date"),
            F.lit(None).cast("int").alias("map_index"), F.lit("check").alias("run_kind"),
        )
        .select(*HISTORY_COLUMNS)
    )
    # One file per run, as each run's append leaves one.
    rows.orderBy("run_id", "rule_id").coalesce(1).write.option("maxRecordsPerFile", rules).parquet(str(folder))
    spark.stop()


def _timed(script: str, store: Path, page: Path, home: Path) -> float:
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(store), str(page)], capture_output=True, text=True, env=env, timeout=900
    )
    if done.returncode != 0:
        raise SystemExit(f"the index failed:\n{done.stderr[-3000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rules", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=2.0, help="the most seconds the light index may take")
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark baseline (a JVM start)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cola-index-bench-") as work:
        root = Path(work)
        store = root / "history"
        write_store(store, args.runs, args.rules)
        parts = [p for p in store.iterdir() if p.name.startswith("part-")]
        print(f"store: {args.runs} runs x {args.rules} rules, {len(parts)} part files")
        light = [_timed(_LIGHT, store, root / "light.html", root / "airflow") for _ in range(args.rounds)]
        median = statistics.median(light)
        print(f"light (pyarrow, no JVM): median {median:.3f} s, min {min(light):.3f}, max {max(light):.3f} "
              f"over {args.rounds} fresh processes")
        if not args.no_spark:
            spark_seconds = _timed(_SPARK, store, root / "spark.html", root / "airflow")
            print(f"spark (local[1], JVM start included): {spark_seconds:.3f} s")
            if (root / "spark.html").read_text() != (root / "light.html").read_text():
                raise SystemExit("the light index and Spark's differ")
            print("the two pages are the same")
        if median >= args.budget:
            raise SystemExit(f"the light index took {median:.3f} s (median), over the budget of {args.budget} s")


if __name__ == "__main__":
    main()

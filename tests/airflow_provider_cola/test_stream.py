"""Streaming splits from Airflow (``dags/cola_test_stream.py``): two DAG runs with a file landing
between them, then the first run again. Each run splits only the new files, one batch each,
through spark-submit and in the task's process alike; its XCom sums the batches up and the
task branches on it; a rerun gives the answer its first attempt gave."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

FILES = [
    [(1, 10.0, "BR"), (2, -5.0, "BR")],  # batch 0: a negative amount
    [(3, 1.0, "PT"), (4, 2.0, "PT")],  # batch 1: clean
    [(5, 3.0, "BR")],  # lands before the second run: batch 2, clean
]


def _land(folder: Path, number: int) -> None:
    lines = [json.dumps(dict(zip(("order_id", "amount", "country"), row, strict=True))) for row in FILES[number]]
    path = folder / f"orders-{number}.json"
    path.write_text("\n".join(lines) + "\n")
    # A file source takes the oldest files first: a second apart, they are batches in order.
    os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))


def _batches(*lines: tuple[int, str, int, int]) -> dict:
    return {"batch_count": len(lines), "batches": [
        {"batch_id": batch_id, "severity": severity, "valid_count": valid, "invalid_count": invalid}
        for batch_id, severity, valid, invalid in lines
    ]}


def test_each_run_splits_only_the_files_that_landed_since_the_last_and_branches_on_them(run_dag, tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    _land(landing, 0)
    _land(landing, 1)
    conf = {"landing": str(landing), "out": str(tmp_path / "out")}

    first = run_dag("cola_test_stream", "2024-01-02", conf)
    assert first.states == {"split_landing": "success", "review": "success", "load": "skipped",
                            "split_frame": "success"}
    for task in ("split_landing", "split_frame"):
        summary = first.xcom[task]
        assert (summary["severity"], summary["valid_count"], summary["invalid_count"], summary["stream"]) == (
            "fail", 3, 1, _batches((0, "fail", 1, 1), (1, "pass", 2, 0)),
        )
        assert [(r["code"], r["severity"], r["message"]) for r in summary["results"]] == [
            ("not_null(order_id)", "pass", "in batch 1 (the worst of 2 batches): not_null(order_id): no NULL values"),
            ("range(amount,0,)", "fail",
             "in batch 0 (the worst of 2 batches): range(amount,0,): 1 value out of range (>= 0)"),
            ("row_count", "pass", "in batch 1 (the worst of 2 batches): row_count = 2 is within bounds (min 1)"),
        ]
    # The log shows the results table, and no Java stack trace for a failed rule.
    assert "in batch 0 (the worst of 2 batches): range(amount,0,)" in first.log
    assert "at org.apache.spark" not in first.log

    _land(landing, 2)
    second = run_dag("cola_test_stream", "2024-01-03", conf)
    assert second.states == {"split_landing": "success", "review": "skipped", "load": "success",
                             "split_frame": "success"}
    for task in ("split_landing", "split_frame"):
        summary = second.xcom[task]
        assert (summary["severity"], summary["valid_count"], summary["invalid_count"], summary["stream"]) == (
            "pass", 1, 0, _batches((2, "pass", 1, 0)),
        )

    # The first DAG run cleared and run again: its files were split already, and it gives the
    # answer its first attempt gave, so it branches the same way.
    rerun = run_dag("cola_test_stream", "2024-01-02", conf)
    assert rerun.states == first.states
    assert rerun.xcom == first.xcom

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    for side in ("operator", "decorator"):
        valid = sorted(row.order_id for row in spark.read.parquet(str(tmp_path / "out" / side / "valid")).collect())
        invalid = spark.read.parquet(str(tmp_path / "out" / side / "invalid")).collect()
        assert (valid, [row.order_id for row in invalid]) == ([1, 3, 4, 5], [2])
    # The operator's history: one run per batch, each keyed by its DAG run's data interval.
    history = spark.read.parquet(str(tmp_path / "out" / "history")).collect()
    runs = sorted({(row.run_id.rsplit("-batch-", 1)[1], str(row.data_date)[:10], row.dag_id) for row in history})
    assert runs == [("0", "2024-01-02", "cola_test_stream"), ("1", "2024-01-02", "cola_test_stream"),
                    ("2", "2024-01-03", "cola_test_stream")]

"""The history store from Airflow: a check (spark-submit) and a decorated split (in the task's
process) share one rules file and one store, while the logical dates run out of order and
again, as a backfill and a rerun do. Every baseline, summary and index entry goes by the
data's date, and each data interval counts once, by its latest attempt."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

UTC = dt.timezone.utc
# The sample days' average order amount.
AVERAGE = {1: 243.74833333333333, 2: 93.83125, 3: 70.08333333333333}
BOUNDS = "must_be (change between -50% and 50%)"


def _day(day: int) -> dt.datetime:
    return dt.datetime(2024, 1, day, tzinfo=UTC)


def _index(store: Path) -> list[tuple]:
    """The index as the Airflow plugin reads it (no JVM): per rule, its newest data date, its
    verdict and its trend of (data date, value, severity)."""
    from airflow_provider_cola._light_index import read_local_index

    return [
        (entry["rule_id"], entry["data_date"], entry["severity"], entry["trend"], entry["current"])
        for entry in read_local_index(store, "parquet", 20)
    ]


def test_a_backfill_and_a_rerun_compare_with_the_data_interval_before_theirs(run_dag, tmp_path):
    store = tmp_path / "history"
    conf = {"history": str(store), "out": str(tmp_path / "out")}

    def run(day: int) -> dict[str, list[tuple]]:
        outcome = run_dag("cola_test_history", f"2024-01-0{day}", conf)
        assert outcome.states == {"check_orders": "success", "split_orders": "success"}
        return {task: [(r["severity"], r["message"], r.get("baseline")) for r in summary["results"]]
                for task, summary in outcome.xcom.items()}

    def both(*results: tuple) -> dict[str, list[tuple]]:
        return {"check_orders": list(results), "split_orders": list(results)}

    no_null = ("pass", "not_null(order_id): no NULL values", None)
    one_null = ("fail", "not_null(order_id): 1 NULL value (order_id: 1)", None)

    assert run(1) == both(
        ("pass", f"avg(amount) = 243.7483: no baseline yet, so {BOUNDS} passes", None), no_null,
    )
    # Day 3 before day 2: day 1 is the interval before it.
    assert run(3) == both(
        ("fail", f"avg(amount) = 70.0833, change -71.2477% from baseline 243.7483 violates {BOUNDS}", AVERAGE[1]),
        one_null,
    )
    # Day 2 backfilled after day 3: compared with day 1, never with day 3 (which ran before it).
    day_2 = both(
        ("fail", f"avg(amount) = 93.8312, change -61.5049% from baseline 243.7483 violates {BOUNDS}", AVERAGE[1]),
        no_null,
    )
    assert run(2) == day_2
    # Day 2 cleared and rerun: the same answer; its own first attempt is never its baseline.
    assert run(2) == day_2
    # The index, as the plugin draws it: day 3 is the newest data, however late day 2 ran.
    after_the_rerun = [
        ("not_null:25e1c5105f3d", _day(3), "fail",
         [(_day(1), None, "pass"), (_day(2), None, "pass"), (_day(3), None, "fail")], True),
        ("orders.avg_amount", _day(3), "fail",
         [(_day(1), AVERAGE[1], "pass"), (_day(2), AVERAGE[2], "fail"), (_day(3), AVERAGE[3], "fail")], True),
    ]
    assert _index(store) == after_the_rerun

    from pyspark.sql import SparkSession

    from cola_core.history.summaries import daily_summary, index_rows, rule_trend

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        rows = spark.read.parquet(str(store)).collect()
        spark_index = [(e["rule_id"], e["data_date"], e["severity"], e["trend"], e["current"])
                       for e in index_rows(spark, str(store))]
        daily = [tuple(row) for row in daily_summary(spark, str(store)).collect()]
        trend = [(row.data_date, row.results, row.failed, row.last_metric)
                 for row in rule_trend(spark, str(store), "orders.avg_amount", days=None).collect()]
    finally:
        spark.stop()
    assert spark_index == after_the_rerun  # Spark's index is the plugin's
    assert len(rows) == 16  # 4 runs x 2 tasks x 2 rules
    # Each row says which data it checked, which DAG run and task checked it, and which kind of run it was.
    # A run triggered by hand (as dag.test does) on a data-interval timetable checks the interval
    # that ends at its logical date: the data date is the logical date, the day {{ ds }} reads.
    assert sorted({(r.data_date, r.logical_date, r.data_interval_start, r.data_interval_end, r.map_index)
                   for r in rows}) == [
        (dt.datetime(2024, 1, day), dt.datetime(2024, 1, day), dt.datetime(2024, 1, day) - dt.timedelta(days=1),
         dt.datetime(2024, 1, day), None)
        for day in (1, 2, 3)
    ]
    assert sorted({(r.dataset, r.dag_id, r.task_id, r.run_kind) for r in rows}) == [
        ("shop.orders", "cola_test_history", "check_orders", "check"),
        ("shop.orders", "cola_test_history", "split_orders", "split"),
    ]
    assert len({r.airflow_run_id for r in rows}) == 4
    # Per data date, each interval counted once (its latest check and its latest split): day 2
    # ran twice, and counts two results per rule, not four.
    assert daily == [
        (dt.date(2024, 1, 3), "shop.orders", 2, 4, 0, 0, 4, 0.0),
        (dt.date(2024, 1, 2), "shop.orders", 2, 4, 2, 0, 2, 50.0),
        (dt.date(2024, 1, 1), "shop.orders", 2, 4, 4, 0, 0, 100.0),
    ]
    assert trend == [
        (dt.date(2024, 1, 1), 2, 0, AVERAGE[1]), (dt.date(2024, 1, 2), 2, 2, AVERAGE[2]),
        (dt.date(2024, 1, 3), 2, 2, AVERAGE[3]),
    ]
    # The split's outputs of the rerun day replaced the earlier attempt's (mode overwrite).
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["2024-01-01", "2024-01-02", "2024-01-03"]

"""The history store from Airflow: three days of the sample data through a check operator and
a decorated check, both appending to one store; the third day's change rule fails on its drop
in volume."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.spark]


def test_three_days_of_history_and_a_change_rule_that_fails_on_a_drop(run_dag, tmp_path):
    from pyspark.sql import SparkSession

    store = str(tmp_path / "history")
    outcomes = [run_dag("cola_test_history", day, {"history": store}) for day in ("2024-01-01", "2024-01-02",
                                                                                    "2024-01-03")]
    for outcome in outcomes:
        assert outcome.states == {"check_volume": "success", "decorated_volume": "success"}
    volume = [outcome.xcom["check_volume"]["results"][0] for outcome in outcomes]
    assert [(r["severity"], r["message"], r.get("baseline")) for r in volume] == [
        ("pass", "row_count = 6: no baseline yet, so must_be (change between -20% and 50%) passes", None),
        ("pass", "row_count = 8, change +33.3333% from baseline 6 meets must_be (change between -20% and 50%)",
         6.0),
        ("fail", "row_count = 6, change -25% from baseline 8 violates must_be (change between -20% and 50%)", 8.0),
    ]
    assert [r["rule_id"] for r in volume] == ["orders.volume"] * 3
    # The decorated task keeps its own history, under its own dataset name.
    decorated = outcomes[2].xcom["decorated_volume"]["results"][0]
    assert (decorated["severity"], decorated["baseline"]) == ("fail", 8.0)

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        rows = spark.read.parquet(store).collect()
    finally:
        spark.stop()
    assert len(rows) == 12  # 2 tasks x 2 rules x 3 days
    assert sorted({(r.dataset, r.dag_id, r.task_id) for r in rows}) == [
        ("cola_test_history.decorated_volume", "cola_test_history", "decorated_volume"),
        ("shop.orders", "cola_test_history", "check_volume"),
    ]
    assert len({r.airflow_run_id for r in rows}) == 3
    assert len({r.run_id for r in rows}) == 6

"""The producer of the consumer DAG's asset (cola_test_assets_consumer.py): a decorated check
whose outlet event carries the Cola summary; run by test_assets.py on the three sample days
(2024-01-01 passes, 2024-01-02 warns, 2024-01-03 fails)."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, Asset, task

ORDERS_DATA = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
RULES = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
    {"type": "missing_count", "column": "email", "must_be": "< 5", "warn": "= 0"},
    {"type": "row_count", "min": 1, "id": "orders.volume"},
]
ORDERS = Asset(name="cola_test_orders", uri="file:///cola-test/orders")

with DAG(
    dag_id="cola_test_assets_producer",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):

    # Succeeds on every day, so a failing day emits an event too: its extra says "fail".
    @task.cola_check(rules=RULES, on_failure="warn", outlets=[ORDERS], conf=FAST)
    def checked_orders(spark, ds=None):
        return spark.read.json(str(ORDERS_DATA / ds))

    checked_orders()

"""A decorated check killed while its HTML report is built (the test kills it, with a history
store whose rows cannot be read, so that the page's query fails for real): the task must stop,
not take that failure for a page that merely could not be written. Run by test_decorator.py."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
RULES = [
    {"type": "not_null", "columns": ["order_id"], "id": "orders.keys"},
    {"type": "row_count", "min": 1, "id": "orders.volume"},
]

with DAG(
    dag_id="cola_test_report_killed",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"out": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):

    @cola_check(rules=RULES, history="{{ params.out }}/history", html_report="{{ params.out }}/killed.html",
                on_failure="warn", conf=FAST)
    def killed_orders(spark=None, ds=None):
        return spark.read.json(f"{ORDERS}/{ds}")

    killed_orders()

"""The HTML report of check operators run over Spark Connect, where the worker builds the page:
one with a history (so with trends), one whose history store's rows cannot be read (its page
cannot be built: a warning), and one killed while its page is built (the test kills it: the
task must stop, not warn). Run by test_report_plugin.py with a spark_connect connection as
``spark_local``; the history stores are made by the test."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
RULES = [
    {"type": "not_null", "columns": ["order_id"], "id": "orders.keys"},
    {"type": "unique", "columns": ["order_id"], "id": "orders.unique"},
    {"type": "row_count", "min": 1, "id": "orders.volume"},
]

with DAG(
    dag_id="cola_test_report_connect",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"out": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    # One after the other: each run appends to a history store, and the kill of the last must
    # not reach the others.
    ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_local",
        rules=RULES,
        source={"path": str(ORDERS) + "/{{ ds }}", "format": "json"},
        history="{{ params.out }}/history",
        dataset="shop.orders",
        html_report="{{ params.out }}/{{ ti.task_id }}.html",
        on_failure="warn",
    ) >> ColaCheckOperator(
        task_id="unreadable_history",
        conn_id="spark_local",
        rules=RULES,
        source={"path": str(ORDERS) + "/{{ ds }}", "format": "json"},
        history="{{ params.out }}/{{ ti.task_id }}/history",
        dataset="shop.orders",
        html_report="{{ params.out }}/{{ ti.task_id }}.html",
        on_failure="warn",
    ) >> ColaCheckOperator(
        task_id="killed",
        conn_id="spark_local",
        rules=RULES,
        source={"path": str(ORDERS) + "/{{ ds }}", "format": "json"},
        history="{{ params.out }}/{{ ti.task_id }}/history",
        dataset="shop.orders",
        html_report="{{ params.out }}/{{ ti.task_id }}.html",
        on_failure="warn",
    )

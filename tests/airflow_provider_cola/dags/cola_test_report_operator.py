"""The HTML report from Airflow: a check operator whose Spark driver writes the page (with a
history, so with trends); run by test_report_plugin.py."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
RULES = [
    {"type": "not_null", "columns": ["order_id"], "id": "orders.keys"},
    {"type": "unique", "columns": ["order_id"], "id": "orders.unique"},
    {"type": "row_count", "min": 1, "id": "orders.volume"},
]

with DAG(
    dag_id="cola_test_report_operator",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"out": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_local",
        rules=RULES,
        source={"path": str(ORDERS) + "/{{ ds }}", "format": "json"},
        history="{{ params.out }}/history",
        dataset="shop.orders",
        html_report="{{ params.out }}/{{ ti.task_id }}.html",
        on_failure="warn",
        conf=FAST,
    )


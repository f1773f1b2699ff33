"""The HTML report from Airflow: a decorated check writes a page (with a history, so with trends),
pushes its path and gets the "Cola report" link; a check operator without html_report writes
none. Run by test_report_plugin.py (cola_test_report_operator has the operator writing one).

Every run writes the same page (no run id in its path), so that the tests see a later run's page
refused as an earlier run's report."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
RULES = [
    {"type": "not_null", "columns": ["order_id"], "id": "orders.keys"},
    {"type": "unique", "columns": ["order_id"], "id": "orders.unique"},
    {"type": "row_count", "min": 1, "id": "orders.volume"},
]

with DAG(
    dag_id="cola_test_report",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"out": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    ColaCheckOperator(
        task_id="check_without_report",
        conn_id="spark_local",
        rules=RULES[2:],
        source={"path": str(ORDERS) + "/{{ ds }}", "format": "json"},
        conf=FAST,
    )

    @cola_check(rules=RULES, history="{{ params.out }}/history", html_report="{{ params.out }}/decorated.html",
                on_failure="warn", conf=FAST)
    def decorated_orders(spark=None, ds=None):
        return spark.read.json(f"{ORDERS}/{ds}")

    decorated_orders()

"""The HTML report of a mapped task: one decorated check expanded over two days, each instance
writing its own page (named by its map index) and getting its own "Cola report" link. Run by
test_report_plugin.py."""

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
    dag_id="cola_test_report_mapped",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"out": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):

    @cola_check(rules=RULES, html_report="{{ params.out }}/day_{{ ti.map_index }}.html", on_failure="warn",
                conf=FAST)
    def orders_of(day, spark=None):
        return spark.read.json(f"{ORDERS}/{day}")

    orders_of.expand(day=["2024-01-02", "2024-01-03"])

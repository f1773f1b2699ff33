"""OpenLineage facets end to end: a check, a split and a failing decorated check on the third
sample day (6 orders: a NULL order_id, order 3003 twice, an amount of -15, country "in");
run by test_lineage.py, which reads the events the OpenLineage file transport wrote."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator, ColaSplitOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
CHECKS = [
    {"type": "row_count", "min": 1},
    {"type": "not_null", "columns": ["order_id", "email"], "name": "keys present"},
    {"type": "unique", "columns": ["order_id"], "severity": "warn"},
    {"type": "max", "column": "amount", "must_be": "<= 1000"},
    {"type": "sum", "column": "amount", "must_be": "> 0", "where": "amount > 0"},
]
SPLIT = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
]

with DAG(
    dag_id="cola_test_lineage",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"output_dir": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_local",
        rules=CHECKS,
        source={"path": f"{ORDERS}/{{{{ ds }}}}", "format": "json"},
        on_failure="warn",
        conf=FAST,
    )

    ColaSplitOperator(
        task_id="split_orders",
        conn_id="spark_local",
        rules=SPLIT,
        source={"path": f"{ORDERS}/{{{{ ds }}}}", "format": "json"},
        valid_output={"path": "{{ params.output_dir }}/valid", "mode": "overwrite"},
        invalid_output="{{ params.output_dir }}/invalid",
        on_failure="warn",
        conf=FAST,
    )

    # Fails (5 countries: "FI" is there twice), so the task fails after its summary is made.
    @cola_check(
        rules=[
            {"type": "distinct_count", "column": "country", "must_be": "= 6"},
            {"type": "not_null", "columns": ["country"]},
        ],
        conf=FAST,
    )
    def distinct_countries(spark=None, ds=None):
        return spark.read.json(f"{ORDERS}/{ds}")

    distinct_countries()

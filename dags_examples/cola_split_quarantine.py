"""Split a day of orders into valid rows and a quarantine, each written as parquet.

Every quarantined row carries ``rejections``: the codes of the rules it broke, such as
``["not_null(order_id)"]`` or ``["NEGATIVE_AMOUNT"]``. The split does not fail the task
(``on_failure="warn"``): the bad rows are set aside and the good ones go on.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_cola.operators import ColaSplitOperator

HERE = Path(__file__).resolve().parent

RULES = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
    {"type": "regex", "column": "country", "pattern": "^[A-Z]{2}$", "code": "BAD_COUNTRY"},
]

with DAG(
    dag_id="cola_split_quarantine",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"data_dir": str(HERE / "data"), "output_dir": str(Path(tempfile.gettempdir()) / "cola_examples")},
    tags=["cola", "example"],
):
    split = ColaSplitOperator(
        task_id="split_orders",
        conn_id="spark_local",
        rules=RULES,
        source={"path": "{{ params.data_dir }}/orders/{{ ds }}", "format": "json"},
        valid_output={"path": "{{ params.output_dir }}/{{ ds }}/valid", "mode": "overwrite"},
        invalid_output={"path": "{{ params.output_dir }}/{{ ds }}/quarantine", "mode": "overwrite"},
        annotate="rejections",
        report={"path": "{{ params.output_dir }}/{{ ds }}/report", "mode": "overwrite"},
        on_failure="warn",
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )

    @task
    def announce(ti=None):
        summary = ti.xcom_pull(task_ids="split_orders")
        print(f"{summary['valid_count']} valid rows, {summary['invalid_count']} quarantined")

    split >> announce()

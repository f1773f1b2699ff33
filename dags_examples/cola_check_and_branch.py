"""Check one day of orders on Spark, then load, notify or quarantine by the worst severity.

    pass -> load
    warn -> load and notify
    fail -> quarantine

The source path is templated with ``{{ ds }}``, so each run checks its own day. The sample
days in ``data/orders`` are 2024-01-01 (passes), 2024-01-02 (a warning) and 2024-01-03
(fails). Spark comes from the ``spark_local`` connection, for example
``AIRFLOW_CONN_SPARK_LOCAL='{"conn_type": "spark", "host": "local[2]"}'``.
"""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_cola.operators import ColaCheckOperator

HERE = Path(__file__).resolve().parent

with DAG(
    dag_id="cola_check_and_branch",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"data_dir": str(HERE / "data")},
    tags=["cola", "example"],
):
    check = ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_local",
        rules="rules/orders.yaml",  # relative to this file
        source={"path": "{{ params.data_dir }}/orders/{{ ds }}", "format": "json"},
        branch={"pass": "load", "warn": ["load", "notify"], "fail": "quarantine"},
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )

    @task
    def load(ds=None):
        print(f"loading the orders of {ds}")

    @task
    def notify(ti=None):
        summary = ti.xcom_pull(task_ids="check_orders")
        warned = [r["message"] for r in summary["results"] if r["severity"] == "warn"]
        print(f"orders loaded with {len(warned)} warning(s): {warned}")

    @task
    def quarantine(ds=None, ti=None):
        summary = ti.xcom_pull(task_ids="check_orders")
        failed = [r["code"] for r in summary["results"] if r["severity"] == "fail"]
        print(f"orders of {ds} held back; failed checks: {failed}")

    check >> [load(), notify(), quarantine()]

"""A downstream ``@task.branch`` that decides from the check's XCom.

The check only reports (``on_failure="warn"``); the branch reads the summary and routes the
run: small problems are published with a ticket, anything worse is held back.
"""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_cola.operators import ColaCheckOperator

HERE = Path(__file__).resolve().parent

with DAG(
    dag_id="cola_xcom_branch",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"data_dir": str(HERE / "data"), "max_failed_rows": 1},
    tags=["cola", "example"],
):
    check = ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_local",
        rules="rules/orders.yaml",
        source={"path": "{{ params.data_dir }}/orders/{{ ds }}", "format": "json"},
        on_failure="warn",
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )

    @task.branch
    def route(ti=None, params=None):
        summary = ti.xcom_pull(task_ids="check_orders")
        if summary["passed"]:
            return "publish"
        failed_rows = sum(r["failed_count"] for r in summary["results"] if r["severity"] == "fail")
        return ["publish", "open_ticket"] if failed_rows <= params["max_failed_rows"] else "hold_back"

    @task
    def publish():
        print("published")

    @task
    def open_ticket(ti=None):
        summary = ti.xcom_pull(task_ids="check_orders")
        print(f"ticket: {summary['counts']['fail']} failed check(s)")

    @task
    def hold_back(ti=None):
        summary = ti.xcom_pull(task_ids="check_orders")
        print(f"held back: {[r['code'] for r in summary['results'] if r['severity'] == 'fail']}")

    check >> route() >> [publish(), open_ticket(), hold_back()]

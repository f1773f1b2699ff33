"""``@task.cola_check``: the rules run in the task's own process, on the DataFrame it returns.

The function receives ``spark`` and returns the DataFrame to check. With the default
``on_failure="fail"`` a failed check fails the task, so ``publish`` only runs on good data.
"""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

HERE = Path(__file__).resolve().parent

with DAG(
    dag_id="cola_decorator",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"data_dir": str(HERE / "data")},
    tags=["cola", "example"],
):

    @task.cola_check(
        rules=[
            {"type": "not_null", "columns": ["order_id", "email"], "name": "keys present"},
            {"type": "unique", "columns": ["order_id"]},
            {"type": "avg", "column": "amount", "must_be": "between 10 and 500"},
        ],
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )
    def check_orders(spark=None, params=None, ds=None):
        return spark.read.json(f"{params['data_dir']}/orders/{ds}").where("country IS NOT NULL")

    @task
    def publish(summary):
        print(f"publishing: {summary['counts']}")

    publish(check_orders())

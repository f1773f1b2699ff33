"""Streaming splits under Airflow: each DAG run splits only the files that landed since the
last run, once through ``ColaSplitOperator`` (spark-submit) and once through ``@cola_check``
(a streaming DataFrame in the task's process), and branches on the worst severity.

Run by test_stream.py over two logical dates, with a file landing in between.
"""

from __future__ import annotations

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaSplitOperator

SCHEMA = "order_id BIGINT, amount DOUBLE, country STRING"
RULES = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0},
    {"type": "row_count", "min": 1},
]
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}

with DAG(
    dag_id="cola_test_stream",
    schedule="@daily",
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"landing": "/nonexistent/set-by-the-test", "out": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    split = ColaSplitOperator(
        task_id="split_landing",
        conn_id="spark_local",
        rules=RULES,
        # One file per micro-batch, so that each file is a batch of its own.
        source={"path": "{{ params.landing }}", "format": "json", "stream": True, "schema": SCHEMA,
                "options": {"maxFilesPerTrigger": "1"}},
        checkpoint="{{ params.out }}/operator/checkpoint",
        valid_output="{{ params.out }}/operator/valid",
        invalid_output={"path": "{{ params.out }}/operator/invalid", "partition_by": ["country"]},
        annotate="cola_codes",
        history="{{ params.out }}/history",
        dataset="landing.orders",
        branch={"pass": "load", "warn": "load", "fail": "review"},
        conf=FAST,
    )
    split >> [EmptyOperator(task_id="load"), EmptyOperator(task_id="review")]

    @cola_check(
        rules=RULES, conn_id="spark_local", on_failure="warn", conf=FAST,
        checkpoint="{{ params.out }}/decorator/checkpoint",
        valid_output="{{ params.out }}/decorator/valid", invalid_output="{{ params.out }}/decorator/invalid",
    )
    def split_frame(spark=None, params=None):
        return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(params["landing"])

    split_frame()

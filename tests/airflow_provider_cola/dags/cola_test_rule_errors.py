"""A rule naming a column the data does not have, through every entry point; run by test_failures.py.

Each task may be retried twice, and none is: the error is the rules', and a retry would only
start Spark again to meet it again. The last task crashes for a reason of its own, which is
retried. The operators run the real spark-submit in local mode; the decorator runs in the
task's process. Run on 2024-01-03; the splits write under the ``work_dir`` param.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator, ColaSplitOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
SOURCE = {"path": str(ORDERS / "{{ ds }}"), "format": "json"}
# The data's column is order_id.
WRONG_COLUMN = [{"type": "row_count", "min": 1}, {"type": "not_null", "columns": ["order_ids"]}]
RETRIED_TWICE = {"retries": 2, "retry_delay": dt.timedelta(seconds=1)}

with DAG(
    dag_id="cola_test_rule_errors",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"work_dir": "/nonexistent/set-by-the-test"},
):
    ColaCheckOperator(
        task_id="check_operator", conn_id="spark_local", rules=WRONG_COLUMN, source=SOURCE, conf=FAST, **RETRIED_TWICE
    )
    ColaSplitOperator(
        task_id="split_operator",
        conn_id="spark_local",
        rules=WRONG_COLUMN,
        source=SOURCE,
        valid_output="{{ params.work_dir }}/split_operator/valid",
        invalid_output="{{ params.work_dir }}/split_operator/quarantine",
        conf=FAST,
        **RETRIED_TWICE,
    )

    @cola_check(rules=WRONG_COLUMN, conn_id="spark_local", conf=FAST, **RETRIED_TWICE)
    def decorator_check(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    @cola_check(
        rules=WRONG_COLUMN,
        valid_output="{{ params.work_dir }}/decorator_split/valid",
        invalid_output="{{ params.work_dir }}/decorator_split/quarantine",
        conn_id="spark_local",
        conf=FAST,
        **RETRIED_TWICE,
    )
    def decorator_split(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # The same mistake in the function's own query: Spark refuses to analyse it.
    @cola_check(rules=WRONG_COLUMN[:1], conn_id="spark_local", conf=FAST, **RETRIED_TWICE)
    def decorator_query(spark, ds=None):
        return spark.read.json(str(ORDERS / ds)).select("order_ids", "amount")

    # Not a refusal: whatever else the function raises keeps Airflow's retries.
    @cola_check(rules=WRONG_COLUMN[:1], conn_id="spark_local", retries=1, retry_delay=dt.timedelta(seconds=1))
    def decorator_crash(spark):
        raise RuntimeError("the orders service did not answer")

    decorator_check()
    decorator_split()
    decorator_query()
    decorator_crash()

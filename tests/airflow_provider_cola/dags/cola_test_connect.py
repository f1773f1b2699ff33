"""``@cola_check`` with a ``spark_connect`` connection: the function gets a Spark Connect session.

Run by test_connect.py, which points ``spark_local`` at a local Spark Connect server.
"""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
RULES = [{"type": "unique", "columns": ["order_id"]}, {"type": "row_count", "min": 1}]

with DAG(
    dag_id="cola_test_connect",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):

    @cola_check(rules=RULES, on_failure="warn", conn_id="spark_local")
    def orders_over_connect(spark, ds=None):
        # The session's own module says which kind it is; the test reads it from the log.
        print(f"session: {type(spark).__module__}")
        return spark.read.json(str(ORDERS / ds))

    orders_over_connect()

with DAG(
    dag_id="cola_test_connect_failures",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):
    # The same failure rules as through spark-submit: a failed check fails the task after XCom.
    ColaCheckOperator(
        task_id="fails", conn_id="spark_local", rules=RULES, source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
    )
    # spark-submit's arguments mean nothing to a Connect client: refused, not ignored.
    ColaCheckOperator(
        task_id="submit_only", conn_id="spark_local", rules=RULES, executor_memory="2g",
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
    )

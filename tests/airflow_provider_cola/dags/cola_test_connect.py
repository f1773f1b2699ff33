"""``@cola_check`` with a ``spark_connect`` connection: the function gets a Spark Connect session;
``ColaProfileOperator`` runs the engine in the task's process as its client.

Run by test_connect.py, which points ``spark_local`` at a local Spark Connect server, and
``spark_gone`` at a port on 127.0.0.1 that nothing listens on.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator, ColaProfileOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
CONTRACT = Path(__file__).resolve().parent / "orders_contract.yaml"
RULES = [{"type": "unique", "columns": ["order_id"]}, {"type": "row_count", "min": 1}]

with DAG(
    dag_id="cola_test_connect",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"folder": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):

    @cola_check(rules=RULES, on_failure="warn", conn_id="spark_local")
    def orders_over_connect(spark, ds=None):
        # The session's own module says which kind it is; the test reads it from the log.
        print(f"session: {type(spark).__module__}")
        return spark.read.json(str(ORDERS / ds))

    orders_over_connect()
    ColaProfileOperator(
        task_id="profile_over_connect", conn_id="spark_local", source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
        suggestions="{{ params.folder }}/orders.suggested.json",
    )
    # An ODCS contract checked by the operator over Connect: its gaps are a field of the results.
    ColaCheckOperator(
        task_id="contract_over_connect", conn_id="spark_local", rules=str(CONTRACT), on_failure="skip",
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
    )



def _give_up_soon(context):
    """Let a Spark Connect client of ``spark_gone`` (a port nothing listens on) give up soon.

    pyspark's client retries a server it cannot reach for at least ten minutes (its
    ``DefaultPolicy``) before it raises; a client of that port retries once, after 10 ms. Only
    its patience changes: the failure it then raises is the real one. Run before the task, in
    the task's process.
    """
    from pyspark.sql.connect.client.core import SparkConnectClient
    from pyspark.sql.connect.client.retries import DefaultPolicy

    original = SparkConnectClient.__init__
    if getattr(original, "gives_up_soon", False):
        return
    gone = f"127.0.0.1:{json.loads(os.environ['AIRFLOW_CONN_SPARK_GONE'])['port']}"

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if self._builder.endpoint == gone:
            self.set_retry_policies([DefaultPolicy(max_retries=1, initial_backoff=10, max_backoff=10)])

    __init__.gives_up_soon = True
    SparkConnectClient.__init__ = __init__


# A wrong column, each entry point: never retried. A server out of reach: retried, as a crash.
WRONG_COLUMN = [{"type": "not_null", "columns": ["order_ids"]}]
RETRIED_TWICE = {"retries": 2, "retry_delay": dt.timedelta(seconds=1)}
RETRIED_ONCE = {"retries": 1, "retry_delay": dt.timedelta(seconds=1), "on_execute_callback": _give_up_soon}

with DAG(
    dag_id="cola_test_connect_failures",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):
    # The same failure rules as through spark-submit: a failed check fails the task after XCom.
    fails = ColaCheckOperator(
        task_id="fails", conn_id="spark_local", rules=RULES, source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
    )
    # spark-submit's arguments mean nothing to a Connect client: refused, not ignored.
    submit_only = ColaCheckOperator(
        task_id="submit_only", conn_id="spark_local", rules=RULES, executor_memory="2g",
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
    )
    wrong_column = ColaCheckOperator(
        task_id="wrong_column", conn_id="spark_local", rules=WRONG_COLUMN,
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"}, **RETRIED_TWICE,
    )
    profile_wrong_column = ColaProfileOperator(
        task_id="profile_wrong_column", conn_id="spark_local", columns=["order_ids"],
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
        suggestions=str(Path(tempfile.gettempdir()) / "never-written.yaml"), **RETRIED_TWICE,
    )

    @cola_check(rules=WRONG_COLUMN, conn_id="spark_local", **RETRIED_TWICE)
    def decorator_wrong_column(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # Last, whatever the others do: a Spark Connect session whose server cannot be reached
    # stays the process's active session when it fails to start (cola_core.storage.session leaves
    # it), and the later tasks of this `airflow dags test` process would be given it.
    server_gone = ColaCheckOperator(
        task_id="server_gone", conn_id="spark_gone", rules=RULES, trigger_rule="all_done",
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"}, **RETRIED_ONCE,
    )

    @cola_check(rules=RULES, conn_id="spark_gone", trigger_rule="all_done", **RETRIED_ONCE)
    def decorator_server_gone(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    [fails, submit_only, wrong_column, profile_wrong_column, decorator_wrong_column()] >> server_gone
    server_gone >> decorator_server_gone()

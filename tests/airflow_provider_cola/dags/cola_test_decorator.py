"""``@cola_check`` beyond the example: on_failure="skip", a branch missing a severity, a bad return.

Run by test_decorator.py on the failing sample day (2024-01-03).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_cola.decorators import cola_check

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
RULES = [{"type": "unique", "columns": ["order_id"]}, {"type": "row_count", "min": 1}]
SECRET_CONF = {"spark.myapp.credential": "clearcredvalue1", "spark.myapp.kEy": 987654321, "spark.ui.enabled": "false"}
# reflect() reaches the JVM: refused unless the task says that its rules are trusted.
REFLECT = [{
    "type": "sql",
    "failed_rows": "SELECT * FROM _validation_df "
                   "WHERE reflect('java.lang.String', 'valueOf', order_id) <> CAST(order_id AS STRING)",
    "code": "REFLECT",
}]

with DAG(
    dag_id="cola_test_decorator",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):

    @cola_check(rules=RULES, on_failure="skip", conn_id="spark_local")
    def informative(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # Secret-named conf, as text and as a number: neither is shown in the Rendered Template view.
    @task.cola_check(rules=RULES, branch={"pass": "on_pass", "warn": "on_pass"}, conf=SECRET_CONF)
    def gated(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # A retry would not help, so it does not happen although one is allowed.
    @cola_check(rules=RULES, retries=1, retry_delay=dt.timedelta(seconds=1))
    def not_a_dataframe(spark):
        return [1, 2, 3]

    @cola_check(rules=REFLECT, allow_external_access=True)
    def trusted(spark, ds=None):
        return spark.read.json(str(ORDERS / ds)).where("order_id IS NOT NULL")

    @cola_check(rules=REFLECT, retries=1, retry_delay=dt.timedelta(seconds=1))
    def untrusted(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    @task
    def after_informative(summary):
        print(f"informative: {summary['severity']}")

    @task
    def on_pass():
        print("passed")

    @task
    def also_downstream():
        print("not in the mapping")

    after_informative(informative())
    not_a_dataframe()
    trusted()
    untrusted()
    gated() >> [on_pass(), also_downstream()]

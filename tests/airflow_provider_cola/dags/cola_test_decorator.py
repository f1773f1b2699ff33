"""``@cola_check`` beyond the example: on_failure="skip", a branch missing a severity, a bad return,
an ODCS contract as the rules file (and the same contract submitted by ``ColaCheckOperator``), and
(in ``cola_test_decorator_split``) the split mode.

Run by test_decorator.py on the failing sample day (2024-01-03); the split DAG writes under
its ``output_dir`` param.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
# An ODCS contract is read wherever a rules file is.
CONTRACT = Path(__file__).resolve().parent / "orders_contract.yaml"
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

    @cola_check(rules=str(CONTRACT), on_failure="skip")
    def contract(spark, ds=None):
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

    # The same contract through spark-submit: its gaps come back as a field of the results.
    ColaCheckOperator(
        task_id="contract_submitted", conn_id="spark_local", rules=str(CONTRACT), on_failure="skip",
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )

    after_informative(informative())
    not_a_dataframe()
    contract()
    trusted()
    untrusted()
    gated() >> [on_pass(), also_downstream()]


# The rules of the cola_split_quarantine example: on 2024-01-03 each breaks on other rows.
SPLIT_RULES = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
    {"type": "regex", "column": "country", "pattern": "^[A-Z]{2}$", "code": "BAD_COUNTRY"},
]

with DAG(
    dag_id="cola_test_decorator_split",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
    params={"output_dir": "/nonexistent/set-by-the-test", "annotate": "rejections"},
):

    # Output configs with templated paths, and the codes of the broken rules on each invalid row.
    @cola_check(
        rules=SPLIT_RULES,
        valid_output={"path": "{{ params.output_dir }}/{{ ds }}/valid", "mode": "overwrite"},
        invalid_output={"path": "{{ params.output_dir }}/{{ ds }}/quarantine", "mode": "overwrite"},
        annotate="{{ params.annotate }}",
        on_failure="warn",
        conn_id="spark_local",
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )
    def split_orders(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # Plain parquet paths, and a quarantine key: a clean line of a rejected order goes with it.
    @task.cola_check(
        rules=[{"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"}],
        valid_output="{{ params.output_dir }}/lines/valid",
        invalid_output="{{ params.output_dir }}/lines/quarantine",
        annotate="rejections",
        quarantine_key=["order_id"],
        on_failure="skip",
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )
    def split_lines(spark):
        return spark.createDataFrame(
            [(1, 1, 10.0), (1, 2, -4.0), (2, 1, 3.0), (3, 1, 8.5)], "order_id int, line int, amount double"
        )

    # A malformed output is refused in the worker, before the function runs or a session starts.
    @cola_check(
        rules=SPLIT_RULES,
        valid_output="{{ params.output_dir }}/bad/valid",
        invalid_output={"path": "{{ params.output_dir }}/bad/quarantine", "mode": "sometimes"},
    )
    def bad_output(spark):
        print("bad_output was called")
        return spark.range(1)

    @task
    def announce(summary):
        print(f"{summary['valid_count']} valid rows, {summary['invalid_count']} quarantined")

    announce(split_orders())
    split_lines()
    bad_output()

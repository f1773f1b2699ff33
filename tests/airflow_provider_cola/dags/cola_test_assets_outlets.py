"""Each kind of outlet a Cola task may have, on the failing sample day (2024-01-03); run by
test_assets.py: an ``Asset.ref`` on a branching task (and a ref to no known asset), an asset
alias on a decorated split, an asset on a split operator, and an asset on a task that fails."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, Asset, AssetAlias, task

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaSplitOperator

ORDERS_DATA = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
RULES = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
]
# Declared in full by the task that reads it; the branching task names it by a ref.
GATED = Asset(name="cola_test_orders_gated", uri="file:///cola-test/orders_gated")
SPLIT = AssetAlias(name="cola_test_orders_split")
VALID = Asset(name="cola_test_orders_valid", uri="file:///cola-test/orders_valid")
SUBMITTED = Asset(name="cola_test_orders_submitted", uri="file:///cola-test/orders_submitted")
STRICT = Asset(name="cola_test_orders_strict", uri="file:///cola-test/orders_strict")

with DAG(
    dag_id="cola_test_assets_outlets",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
    params={"output_dir": "/nonexistent/set-by-the-test"},
):

    # Branching skips by raising; Airflow still counts the task a success and emits its events.
    @cola_check(
        rules=RULES,
        branch={"pass": "publish"},
        outlets=[Asset.ref(name=GATED.name), Asset.ref(name="cola_test_no_such_asset")],
        conf=FAST,
    )
    def gated_orders(spark, ds=None):
        return spark.read.json(str(ORDERS_DATA / ds))

    @task(inlets=[GATED])
    def publish():
        print("published")

    # An alias names no asset: the task adds the one it wrote, with an extra of its own.
    @cola_check(
        rules=RULES,
        valid_output={"path": "{{ params.output_dir }}/decorated/valid", "mode": "overwrite"},
        invalid_output={"path": "{{ params.output_dir }}/decorated/invalid", "mode": "overwrite"},
        on_failure="skip",
        outlets=[SPLIT],
        conf=FAST,
    )
    def split_orders(spark, ds=None, outlet_events=None):
        outlet_events[SPLIT].add(VALID, extra={"written_by": "split_orders"})
        return spark.read.json(str(ORDERS_DATA / ds))

    ColaSplitOperator(
        task_id="submitted_split",
        conn_id="spark_local",
        rules=RULES,
        source={"path": f"{ORDERS_DATA}/{{{{ ds }}}}", "format": "json"},
        valid_output={"path": "{{ params.output_dir }}/submitted/valid", "mode": "overwrite"},
        invalid_output={"path": "{{ params.output_dir }}/submitted/invalid", "mode": "overwrite"},
        on_failure="warn",
        outlets=[SUBMITTED],
        conf=FAST,
    )

    # A failed task emits no event, whatever its outlets.
    @cola_check(rules=RULES, outlets=[STRICT], conf=FAST)
    def strict_orders(spark, ds=None):
        return spark.read.json(str(ORDERS_DATA / ds))

    gated_orders() >> publish()
    split_orders()
    strict_orders()

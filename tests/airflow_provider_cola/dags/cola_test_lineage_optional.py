"""A decorated check that passes, run by test_lineage.py in a process where ``openlineage``
cannot be imported: the provider's tasks work without the optional OpenLineage provider."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"

with DAG(
    dag_id="cola_test_lineage_optional",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):

    @cola_check(rules=[{"type": "not_null", "columns": ["order_id"]}], conf={"spark.ui.enabled": "false"})
    def orders(spark=None, ds=None):
        return spark.read.json(f"{ORDERS}/{ds}")

    orders()

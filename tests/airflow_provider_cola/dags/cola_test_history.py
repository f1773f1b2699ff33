"""Quality over time: a check and a decorated check append to one history store each day,
and a change rule compares the day's volume with the day before; run by test_history.py."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
# The sample days hold 6, 8 and 6 orders: +33% on the second day, -25% on the third.
VOLUME = [
    {"type": "row_count", "must_be": "change between -20% and 50%", "id": "orders.volume"},
    {"type": "not_null", "columns": ["order_id"]},
]

with DAG(
    dag_id="cola_test_history",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"history": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    ColaCheckOperator(
        task_id="check_volume",
        conn_id="spark_local",
        rules=VOLUME,
        source={"path": str(ORDERS) + "/{{ ds }}", "format": "json"},
        history="{{ params.history }}",
        dataset="shop.orders",
        on_failure="warn",
        conf=FAST,
    )

    @cola_check(rules=VOLUME, history="{{ params.history }}", on_failure="warn", conf=FAST)
    def decorated_volume(spark=None, ds=None):
        return spark.read.json(f"{ORDERS}/{ds}")

    decorated_volume()

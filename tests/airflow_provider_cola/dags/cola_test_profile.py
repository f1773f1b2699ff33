"""``ColaProfileOperator`` through spark-submit, run by test_profiling.py: one task profiles a day of
the sample orders and writes the rules suggested from it, learning thresholds from a history
store of earlier checks; another names a column the data does not have, which the job refuses."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pendulum
from airflow.sdk import DAG, CronDataIntervalTimetable

from airflow_provider_cola.operators import ColaProfileOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
SOURCE = {"path": str(ORDERS) + "/{{ ds }}", "format": "json"}

with DAG(
    dag_id="cola_test_profile",
    # Daily data intervals, as cola_test_history's: the run of 2024-01-03 profiles that day's orders.
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"folder": "/nonexistent/set-by-the-test", "history": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    ColaProfileOperator(
        task_id="profile_orders",
        conn_id="spark_local",
        source=SOURCE,
        suggestions="{{ params.folder }}/orders.suggested.yaml",
        history="{{ params.history }}",
        dataset="shop.orders",
        conf=FAST,
    )
    # Refused by the job (only the data says which columns it has): failed once, never retried.
    ColaProfileOperator(
        task_id="profile_unknown_column",
        conn_id="spark_local",
        source=SOURCE,
        columns=["order_id", "emails"],
        suggestions="{{ params.folder }}/never-written.yaml",
        conf=FAST,
        retries=2,
        retry_delay=dt.timedelta(seconds=1),
    )

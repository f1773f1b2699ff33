"""Quality over time under Airflow: a check (spark-submit) and a decorated split (in the task's
process) share one rules file and one history store; run by test_history_store.py over three
logical dates, out of order and again, as backfills and reruns do."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, CronDataIntervalTimetable

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
# The sample days' orders average 243.748, 93.8313 and 70.0833: the second day's drop is
# beyond the rule's bounds, the third day's is within them.
RULES = "history_rules.yaml"

with DAG(
    dag_id="cola_test_history",
    # Daily data intervals: the run of 2024-01-02 checks the data of [2024-01-02, 2024-01-03).
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"history": "/nonexistent/set-by-the-test", "out": "/nonexistent/set-by-the-test"},
    default_args={"retries": 0},
):
    check = ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_local",
        rules=RULES,
        source={"path": str(ORDERS) + "/{{ ds }}", "format": "json"},
        history="{{ params.history }}",
        dataset="shop.orders",
        on_failure="warn",
        conf=FAST,
    )

    @cola_check(
        rules=RULES, history="{{ params.history }}", dataset="shop.orders", on_failure="warn", conf=FAST,
        valid_output={"path": "{{ params.out }}/{{ ds }}/valid", "mode": "overwrite"},
        invalid_output={"path": "{{ params.out }}/{{ ds }}/invalid", "mode": "overwrite"},
    )
    def split_orders(spark=None, ds=None):
        return spark.read.json(f"{ORDERS}/{ds}")

    check >> split_orders()

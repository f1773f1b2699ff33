"""A Cola check submitted to a Spark standalone cluster; run by test_cluster.py.

The ``spark_cluster`` connection is set by the test, once it has started the master.
"""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.operators import ColaCheckOperator

REPO = Path(__file__).resolve().parents[3]

with DAG(
    dag_id="cola_test_cluster",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):
    ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_cluster",
        rules=str(REPO / "dags_examples" / "rules" / "orders.yaml"),
        source={"path": str(REPO / "dags_examples" / "data" / "orders" / "{{ ds }}"), "format": "json"},
        on_failure="warn",
        executor_memory="512m",
        total_executor_cores=1,
        # Executors connect back to the driver, which runs here (client mode).
        conf={"spark.driver.host": "127.0.0.1", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )

"""Every way a Cola operator task can fail, one task each; run by test_failures.py.

The tasks using ``spark_binary="spark3-submit"`` run the fake spark-submit of the tests'
conftest, which records its calls and fails on demand (``FAKE_SUBMIT_MODE``). The others
run the real spark-submit in local mode.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_cola.operators import ColaCheckOperator, ColaSplitOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
ROW_COUNT = [{"type": "row_count", "min": 1}]
SOURCE = {"path": str(ORDERS / "2024-01-01"), "format": "json"}


def fake(mode: str) -> dict:
    return {"spark_binary": "spark3-submit", "env_vars": {"FAKE_SUBMIT_MODE": mode}, "conn_id": "spark_local"}


with DAG(
    dag_id="cola_test_failures",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"work_dir": "/nonexistent"},
    default_args={"retries": 0},
):
    ColaCheckOperator(
        task_id="malformed_rule",
        rules=[{"type": "not_null", "columns": ["order_id"]}, {"type": "range", "column": "amount", "minimum": 0}],
        source=SOURCE,
        **fake("crash"),
    )
    # A crash may be transient, so it is retried; a data failure (below) is not.
    ColaCheckOperator(
        task_id="crashed_job", rules=ROW_COUNT, source=SOURCE, retries=1, retry_delay=dt.timedelta(seconds=1),
        **fake("crash"),
    )
    ColaCheckOperator(task_id="missing_results", rules=ROW_COUNT, source=SOURCE, **fake("silent"))
    ColaCheckOperator(task_id="corrupt_results", rules=ROW_COUNT, source=SOURCE, **fake("corrupt"))
    ColaCheckOperator(task_id="inconsistent_results", rules=ROW_COUNT, source=SOURCE, **fake("inconsistent"))
    ColaCheckOperator(
        task_id="no_results", rules="../../../dags_examples/rules/orders.yaml", source=SOURCE, **fake("no_results")
    )
    # Refusals of the inputs are final: none of these is retried, although each may be twice.
    ColaCheckOperator(task_id="refused_in_file", rules=ROW_COUNT, source=SOURCE, retries=2, **fake("refused"))
    ColaCheckOperator(
        task_id="missing_source",
        rules=ROW_COUNT,
        source={"path": "{{ params.work_dir }}/no-such-folder", "format": "json"},
        retries=2,
        **fake("crash"),
    )
    ColaCheckOperator(
        task_id="broken_source",
        conn_id="spark_local",
        rules=ROW_COUNT,
        source={"path": "{{ params.work_dir }}/broken.parquet"},
        conf=FAST,
        retries=2,
        retry_delay=dt.timedelta(seconds=1),
    )
    ColaSplitOperator(
        # Its invalid output's folder would go under a regular file: the split's publication
        # fails after the valid output was moved into place, and is undone.
        task_id="blocked_split",
        conn_id="spark_local",
        rules=ROW_COUNT,
        source=SOURCE,
        valid_output="{{ params.work_dir }}/split/valid",
        invalid_output="{{ params.work_dir }}/blocker/quarantine",
        conf=FAST,
        retries=2,
        retry_delay=dt.timedelta(seconds=1),
    )
    ColaCheckOperator(
        task_id="failing_checks",
        # Its connection has a password, and its conf a secret: neither may show anywhere.
        conn_id="spark_with_secret",
        retries=1,
        retry_delay=dt.timedelta(seconds=1),
        rules="../../../dags_examples/rules/orders.yaml",
        source={
            "path": str(ORDERS / "2024-01-03"),
            "format": "json",
            "options": {"password": os.environ.get("COLA_TEST_OPTION_PASSWORD", "unset")},
        },
        report={"path": "{{ params.work_dir }}/report", "format": "json", "mode": "overwrite"},
        results_uri="{{ params.work_dir }}/results",
        conf={
            **FAST,
            "spark.hadoop.fs.s3a.secret.key": os.environ.get("COLA_TEST_SECRET", "unset"),
            # Keys that SparkSubmitHook's own masking (secret, password) does not cover.
            "spark.myapp.credential": os.environ.get("COLA_TEST_CREDENTIAL", "unset"),
            "spark.hadoop.fs.s3a.access.key": os.environ.get("COLA_TEST_ACCESS_KEY", "unset"),
        },
    )

"""A task that records the report its run's conf names (nothing when it is empty), without
Spark, as ``links.push_report`` records one: the plugin's tests then point ``cola_report`` at
files it must and must not serve. Run by test_report_plugin.py."""

from __future__ import annotations

from pathlib import Path

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_cola.links import push_report

with DAG(
    dag_id="cola_test_report_files",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    params={"report": "/nonexistent/set-by-the-test.html"},
    default_args={"retries": 0},
):

    @task
    def recorded(params=None, ti=None):
        if params["report"]:
            push_report({"ti": ti}, Path(params["report"]))

    recorded()

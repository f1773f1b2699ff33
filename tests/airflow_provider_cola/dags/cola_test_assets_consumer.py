"""A DAG scheduled on the producer's orders asset, gated by the Cola summary of the event that
triggered it; run by test_assets.py through the scheduler's asset-triggered DAG run."""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, Asset, task

from airflow_provider_cola.assets import cola_quality_branch, cola_quality_extras, cola_quality_gate

# The producer's asset (cola_test_assets_producer.py): the same name and URI.
ORDERS = Asset(name="cola_test_orders", uri="file:///cola-test/orders")

with DAG(
    dag_id="cola_test_assets_consumer",
    schedule=[ORDERS],
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
):

    @task
    def load():
        print("loading the checked orders")

    # The helper itself is the callable; Airflow passes it the triggering events.
    task.short_circuit(task_id="gate")(cola_quality_gate)(accept=["pass", "warn"]) >> load()

    @task.branch
    def route(triggering_asset_events=None):
        return cola_quality_branch(
            triggering_asset_events, branch={"pass": "publish", "warn": "publish", "fail": "quarantine"}
        )

    @task
    def publish():
        print("publishing")

    @task
    def quarantine():
        print("quarantining")

    route() >> [publish(), quarantine()]

    @task
    def quality(triggering_asset_events=None):
        return cola_quality_extras(triggering_asset_events)

    quality()

"""The HTML report in Airflow: ``html_report`` on the operator and the decorator, the "Cola report"
extra link, and the plugin that serves the reports and the quality index (cola_test_report)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

DAG_ID = "cola_test_report"
# The sample data of 2024-01-03 holds a NULL order_id and a duplicate one.
SEVERITIES = {"orders.keys": "fail", "orders.unique": "fail", "orders.volume": "pass"}
# That of 2024-01-02 passes.
DAY_2 = {"orders.keys": "pass", "orders.unique": "pass", "orders.volume": "pass"}


def _link_xcom(dag_id: str, run_id: str, task_id: str):
    """What the worker pushed for the extra link (the API server reads it back from there)."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = session.scalars(XComModel.get_many(run_id=run_id, dag_ids=dag_id, task_ids=task_id, key=None)).all()
        return {row.key: XComModel.deserialize_value(row) for row in rows}


def _run_id(dag_id: str) -> str:
    from airflow.models import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return session.scalars(
            select(DagRun.run_id).where(DagRun.dag_id == dag_id).order_by(DagRun.id.desc()).limit(1)
        ).one()


def _assert_served(client, outcome, dag_id: str, run_id: str, task_id: str, page, severities=SEVERITIES) -> None:
    """The task wrote ``page``, pushed its path, and its extra link serves it through the plugin."""
    results = outcome.xcom[task_id]["results"]
    assert {r["rule_id"]: r["severity"] for r in results} == severities
    xcoms = _link_xcom(dag_id, run_id, task_id)
    assert xcoms["cola_report"] == str(page)
    link = xcoms["_link_ColaReportLink"]
    assert link == f"/cola/reports/{dag_id}/{run_id.replace(':', '%3A').replace('+', '%2B')}/{task_id}"
    served = client.get(link.removeprefix("/cola"))
    assert served.status_code == 200
    assert served.headers["content-type"] == "text/html; charset=utf-8"
    assert served.text == page.read_text(encoding="utf-8")
    codes = [r["code"] for r in results]
    assert codes == ["not_null(order_id)", "unique(order_id)", "row_count"]
    for code in codes:
        assert f"<code>{code}</code>" in served.text
    assert f"<dd>{run_id}</dd>" in served.text
    # With the history: a trend of this one run per rule.
    assert served.text.count("<circle") == 3


def test_the_decorator_writes_its_report_and_the_plugin_serves_it_and_indexes_it(run_dag, tmp_path, monkeypatch):
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from fastapi.testclient import TestClient
    from sqlalchemy import update

    from airflow_provider_cola.plugin import create_app

    outcome = run_dag(DAG_ID, "2024-01-03", {"out": str(tmp_path)})
    run_id = _run_id(DAG_ID)
    assert outcome.states == {"check_without_report": "success", "decorated_orders": "success"}
    client = TestClient(create_app())
    _assert_served(client, outcome, DAG_ID, run_id, "decorated_orders", tmp_path / "decorated.html")

    # The task without html_report: no page, no XCom, an empty link, and a 404.
    xcoms = _link_xcom(DAG_ID, run_id, "check_without_report")
    assert "cola_report" not in xcoms
    assert xcoms["_link_ColaReportLink"] == ""
    assert client.get(f"/reports/{DAG_ID}/{run_id}/check_without_report").status_code == 404
    assert client.get(f"/reports/{DAG_ID}/{run_id}/no_such_task").status_code == 404

    # The index, without a history store: the latest reports, with their links.
    monkeypatch.delenv("AIRFLOW__COLA__HISTORY_STORE", raising=False)
    index = client.get("/")
    assert index.status_code == 200
    latest = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>\s*<td>(.*?)</td>", index.text)
    assert latest[0] == (DAG_ID, run_id, "decorated_orders", "fail")
    assert not any(row[2] == "check_without_report" for row in latest)

    # With [cola] history_store: the index of the store lists this (latest) run's rules.
    monkeypatch.setenv("AIRFLOW__COLA__HISTORY_STORE", str(tmp_path / "history"))
    index = client.get("/")
    assert index.status_code == 200
    dataset = f"{DAG_ID}.decorated_orders"
    rows = [row for row in re.findall(r"<tr>(.*?)</tr>", index.text, flags=re.S) if dataset in row]
    assert len(rows) == 3
    assert [rule for rule in SEVERITIES if any(rule in row for row in rows)] == list(SEVERITIES)

    # Only a recorded .html file is ever served: not another file the XCom was made to name.
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the web")
    with create_session() as session:
        session.execute(
            update(XComModel)
            .where(XComModel.dag_id == DAG_ID, XComModel.run_id == run_id, XComModel.task_id == "decorated_orders",
                   XComModel.key == "cola_report")
            .values(value=XComModel.serialize_value(str(secret)))
        )
    assert _link_xcom(DAG_ID, run_id, "decorated_orders")["cola_report"] == str(secret)
    response = client.get(f"/reports/{DAG_ID}/{run_id}/decorated_orders")
    assert response.status_code == 404
    assert "not for the web" not in response.text


def test_the_operator_s_driver_writes_its_report_and_the_link_serves_it(run_dag, tmp_path):
    from fastapi.testclient import TestClient

    from airflow_provider_cola.plugin import create_app

    dag_id = "cola_test_report_operator"
    outcome = run_dag(dag_id, "2024-01-03", {"out": str(tmp_path)})
    assert outcome.states == {"check_orders": "success"}
    _assert_served(TestClient(create_app()), outcome, dag_id, _run_id(dag_id), "check_orders",
                   tmp_path / "check_orders.html")


def test_over_spark_connect_the_operator_writes_its_report_in_the_worker(airflow_home, tmp_path):
    """The same operator task with a spark_connect connection: the engine runs in the task's
    process (an ``airflow dags test`` process of its own), which writes the page, with trends."""
    from fastapi.testclient import TestClient

    from airflow_provider_cola.plugin import create_app
    from connect_server import connect_server

    dag_id = "cola_test_report_operator"
    with connect_server() as url:
        connection = {"conn_type": "spark_connect", "host": "127.0.0.1", "port": urlsplit(url).port}
        env = {**os.environ, "AIRFLOW_CONN_SPARK_LOCAL": json.dumps(connection)}
        done = subprocess.run(
            [sys.executable, "-m", "airflow", "dags", "test", dag_id, "2024-01-02", "-c",
             json.dumps({"out": str(tmp_path)})],
            capture_output=True, text=True, env=env, timeout=900,
        )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-5000:]
    assert "as a Spark Connect client" in log
    run_id = _run_id(dag_id)
    outcome = SimpleNamespace(xcom={"check_orders": _link_xcom(dag_id, run_id, "check_orders")["return_value"]})
    _assert_served(TestClient(create_app()), outcome, dag_id, run_id, "check_orders",
                   tmp_path / "check_orders.html", severities=DAY_2)


def test_the_link_is_empty_without_a_report(monkeypatch):
    from airflow.sdk.execution_time import xcom

    from airflow_provider_cola.links import ColaReportLink

    pulled = []
    monkeypatch.setattr(xcom.XCom, "get_value", classmethod(lambda cls, *, ti_key, key: pulled.append(key)))
    key = SimpleNamespace(dag_id="d", run_id="manual__2024-01-01T00:00:00+00:00", task_id="t")
    assert ColaReportLink().get_link(None, ti_key=key) == ""  # type: ignore[arg-type]
    assert pulled == ["cola_report"]
    monkeypatch.setattr(xcom.XCom, "get_value", classmethod(lambda cls, *, ti_key, key: "/tmp/r.html"))
    assert ColaReportLink().get_link(None, ti_key=key) == (  # type: ignore[arg-type]
        "/cola/reports/d/manual__2024-01-01T00%3A00%3A00%2B00%3A00/t"
    )


def test_the_plugin_is_registered(airflow_home):
    from airflow import plugins_manager

    (cola,) = [p for p in plugins_manager.get_plugin_info(["fastapi_apps", "external_views"]) if p["name"] == "cola"]
    assert [(app["url_prefix"], app["name"]) for app in cola["fastapi_apps"]] == [("/cola", "Cola quality")]
    assert cola["external_views"] == [
        {"name": "Cola quality", "href": "/cola/", "destination": "nav", "url_route": "cola"}
    ]


def test_the_api_server_mounts_the_app_at_cola(airflow_home, monkeypatch):
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    monkeypatch.delenv("AIRFLOW__COLA__HISTORY_STORE", raising=False)
    client = TestClient(create_app())
    index = client.get("/cola/")
    assert index.status_code == 200
    assert "<h1>Cola quality</h1>" in index.text
    assert client.get("/cola/reports/no_dag/no_run/no_task").status_code == 404


def test_a_path_the_task_cannot_write_fails_before_spark(tmp_path):
    from airflow_provider_cola.errors import ColaConfigError
    from airflow_provider_cola.links import checked_report_path

    with pytest.raises(ColaConfigError, match=r"html_report .* is a folder"):
        checked_report_path(str(tmp_path))
    with pytest.raises(ColaConfigError, match="must be a file the driver can write"):
        checked_report_path("s3://bucket/report.html")
    assert checked_report_path(None) is None

"""The Cola plugin for Airflow 3's API server: the tasks' HTML reports and a quality index, read-only.

Registered through the ``airflow.plugins`` entry point. It mounts a small FastAPI app at
``/cola`` (``fastapi_apps``) and adds "Cola quality" to the navigation (``external_views``):

- ``/cola/reports/{dag_id}/{run_id}/{task_id}``: the page that task instance wrote, as recorded
  in its XCom ``cola_report`` (the "Cola report" extra link points here). Only a path recorded
  there is ever served, and only a ``.html`` file; anything else is a 404.
- ``/cola/``: with ``[cola] history_store`` set, the index of that history store
  (``cola_core.pages.render_index``); without it, the latest reports recorded in XCom.

The index over a history store is a Spark query (``cola_core.history.index_rows``), as in
``cola history html``: the store can be any output Cola writes (a table as well as a parquet
folder), and the index is then the one the command line gives. A local Spark session
(``local[1]``) is started in the API server on the first request to the index, and kept.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.plugins_manager import AirflowPlugin

from airflow_provider_cola.links import REPORT_XCOM_KEY, URL_PREFIX, report_url

if TYPE_CHECKING:
    from fastapi import FastAPI
    from pyspark.sql import SparkSession

__all__ = ["LATEST_REPORTS", "ColaPlugin", "create_app"]

# How many reports the index lists without a history store, newest first.
LATEST_REPORTS = 50

_LATEST_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Cola quality</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}
th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left}th{background:#f6f8fa}</style>
</head><body><h1>Cola quality</h1>
<p>The latest Cola reports{% if not rows %}: none yet{% endif %}. Set <code>[cola] history_store</code>
for an index of a history store.</p>
{% if rows %}<table><tr><th>DAG</th><th>run</th><th>task</th><th>severity</th><th>report</th></tr>
{% for row in rows %}<tr><td>{{ row.dag_id }}</td><td>{{ row.run_id }}</td><td>{{ row.task_id }}</td>
<td>{{ row.severity or "" }}</td><td><a href="{{ row.url }}">report</a></td></tr>
{% endfor %}</table>{% endif %}
</body></html>
"""

_spark_lock = threading.Lock()
_spark: SparkSession | None = None


def _index_spark() -> SparkSession:
    """The API server's one local Spark session for the index, started on first use."""
    global _spark
    with _spark_lock:
        if _spark is None:
            from cola_core.session import spark_session

            _spark, _ = spark_session("local[1]", [("spark.ui.enabled", "false")], app_name="cola-plugin")
        return _spark


def _recorded_report(dag_id: str, run_id: str, task_id: str) -> Path | None:
    """The page recorded in that task instance's XCom, when it is a ``.html`` file that exists."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        row = session.scalars(
            XComModel.get_many(run_id=run_id, dag_ids=dag_id, task_ids=task_id, key=REPORT_XCOM_KEY, limit=1)
        ).first()
        value = None if row is None else XComModel.deserialize_value(row)
    if not isinstance(value, str) or not value.endswith(".html"):
        return None
    path = Path(value)
    return path if path.is_absolute() and path.is_file() else None


def _latest_reports(limit: int) -> list[dict[str, Any]]:
    """The latest task instances that recorded a report, newest first, with their severity."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    rows: list[dict[str, Any]] = []
    with create_session() as session:
        reports = session.scalars(
            select(XComModel).where(XComModel.key == REPORT_XCOM_KEY).order_by(XComModel.timestamp.desc()).limit(limit)
        ).all()
        for report in reports:
            summary = session.scalars(
                XComModel.get_many(run_id=report.run_id, dag_ids=report.dag_id, task_ids=report.task_id,
                                   map_indexes=report.map_index, key="return_value", limit=1)
            ).first()
            value = None if summary is None else XComModel.deserialize_value(summary)
            rows.append({
                "dag_id": report.dag_id, "run_id": report.run_id, "task_id": report.task_id,
                "severity": value.get("severity") if isinstance(value, dict) else None,
                "url": report_url(report.dag_id, report.run_id, report.task_id),
            })
    return rows


def create_app() -> FastAPI:
    """The read-only app the plugin mounts at ``/cola``."""
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import HTMLResponse

    app = FastAPI(title="Cola quality", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/reports/{dag_id}/{run_id}/{task_id}", response_class=HTMLResponse)
    def report(dag_id: str, run_id: str, task_id: str) -> HTMLResponse:
        path = _recorded_report(dag_id, run_id, task_id)
        if path is None:
            raise HTTPException(status_code=404, detail="this task instance recorded no Cola report")
        return HTMLResponse(path.read_text(encoding="utf-8"))

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        from airflow.configuration import conf

        store = conf.get("cola", "history_store", fallback=None)
        if store:
            from cola_core.history import index_rows
            from cola_core.pages import render_index

            return HTMLResponse(render_index(index_rows(_index_spark(), store)))
        from jinja2 import Environment

        template = Environment(autoescape=True).from_string(_LATEST_TEMPLATE)
        return HTMLResponse(template.render(rows=_latest_reports(LATEST_REPORTS)))

    return app


class ColaPlugin(AirflowPlugin):
    """Serves the Cola reports and the quality index in the API server; adds "Cola quality" to the nav."""

    name = "cola"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Cola quality"}]
    external_views = [{"name": "Cola quality", "href": f"{URL_PREFIX}/", "destination": "nav", "url_route": "cola"}]

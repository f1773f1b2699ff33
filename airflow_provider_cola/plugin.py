"""The Cola plugin for Airflow 3's API server: the tasks' HTML reports and a quality index, read-only.

Registered through the ``airflow.plugins`` entry point. It mounts a small FastAPI app at
``/cola`` (``fastapi_apps``) and adds "Cola quality" to the navigation (``external_views``):

- ``/cola/report?dag_id=..&run_id=..&task_id=..&map_index=..``: the page that task instance
  wrote, as recorded in its XCom ``cola_report`` (the "Cola report" extra link points here),
  to a user who may read that DAG. Only a recorded path is ever served, and only a regular
  ``.html`` file below ``[cola] reports_folder`` reached through no symlink; anything else is
  a 404 that says why.
- ``/cola/``: to an authenticated user. With ``[cola] history_store`` set (a path, or a JSON
  output spec, as ``cola history --history`` takes it), the index of that history store
  (``cola_core.pages.render_index``), to a user who may read every DAG (the store holds
  them all), rendered at most every ``[cola] index_cache_seconds``; without it, the latest
  reports recorded in XCom of the DAGs that user may read.

Airflow authenticates its own API with a router dependency that a mounted app does not
inherit, so every route here authenticates the caller itself, with Airflow's own
``get_user`` (the UI's ``_token`` cookie, or an ``Authorization: Bearer`` token) and the
configured auth manager. Every response carries :data:`SECURITY_HEADERS`: a report is a file a
task wrote, and it must not run a script on the API server's origin.

The index over a history store is a Spark query (``cola_core.history.index_rows``), as in
``cola history html``: the store can be any output Cola writes (a table as well as a parquet
folder), and the index is then the one the command line gives. A local Spark session
(``local[1]``) is started in the API server on the first request to the index, and kept.
"""

from __future__ import annotations

import html
import os
import stat
import threading
import time
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from airflow_provider_cola.links import REPORT_XCOM_KEY, URL_PREFIX, report_url

if TYPE_CHECKING:
    from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
    from pyspark.sql import SparkSession

__all__ = ["DEFAULT_INDEX_CACHE_SECONDS", "LATEST_REPORTS", "SECURITY_HEADERS", "ColaPlugin", "create_app"]

# How many reports the index lists without a history store, newest first.
LATEST_REPORTS = 50
# How long a rendered index of the history store is served before it is queried again.
DEFAULT_INDEX_CACHE_SECONDS = 60
# On every response: the pages are self-contained (inline CSS and SVG, no script), so nothing
# else may load, and ``sandbox`` gives the page an opaque origin of its own even if a task
# wrote a script into it.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
NO_REPORTS_FOLDER = (
    "Cola reports are not served here: set [cola] reports_folder (AIRFLOW__COLA__REPORTS_FOLDER) "
    "to the folder the tasks write their html_report below"
)

_STYLE = """<style>body{font:14px/1.4 system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}
th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left}th{background:#f6f8fa}</style>"""
_LATEST_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Cola quality</title>
""" + _STYLE + """
</head><body><h1>Cola quality</h1>
<p>The latest Cola reports{% if not rows %}: none yet{% endif %}. Set <code>[cola] history_store</code>
for an index of a history store.</p>
{% if rows %}<table><tr><th>DAG</th><th>run</th><th>task</th><th>severity</th><th>report</th></tr>
{% for row in rows %}<tr><td>{{ row.dag_id }}</td><td>{{ row.run_id }}</td><td>{{ row.task }}</td>
<td>{{ row.severity or "" }}</td><td><a href="{{ row.url }}">report</a></td></tr>
{% endfor %}</table>{% endif %}
</body></html>
"""
_ERROR_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Cola quality: {status}</title>
{style}
</head><body><h1>{status}</h1>
<p>{reason}</p>
</body></html>
"""

_spark_lock = threading.Lock()
# The rendered index per store setting: (when it was rendered, time.monotonic(); the page).
# One lock, so that concurrent first views make one Spark query, not one each.
_index_lock = threading.Lock()
_index_pages: dict[str, tuple[float, str]] = {}


class _StoreUnreadable(Exception):
    """The configured history store cannot be parsed or read: the index is a 503 saying why."""


def _index_spark() -> SparkSession:
    """The API server's one local Spark session for the index, started on first use.

    Asked for again on each query rather than kept: ``getOrCreate`` gives the running session,
    and a new one if something else in the process stopped it.
    """
    from cola_core.session import spark_session

    with _spark_lock:
        session, _ = spark_session("local[1]", [("spark.ui.enabled", "false")], app_name="cola-plugin")
        return session


def _store_index(store: str, cache_seconds: int) -> str:
    """The index page of the history store ``[cola] history_store`` names, from the cache when
    it was rendered less than ``cache_seconds`` ago.

    Raises:
        _StoreUnreadable: the setting is not a history store spec, or the store cannot be read.
    """
    from cola_core.errors import ColaError
    from cola_core.history import index_rows
    from cola_core.history_cli import checked_history_arguments
    from cola_core.pages import render_index

    with _index_lock:
        cached = _index_pages.get(store)
        if cached is not None and time.monotonic() - cached[0] < cache_seconds:
            return cached[1]
        try:
            # The command line's own parser: the setting reads as ``--history`` does.
            spec = checked_history_arguments(Namespace(history=store, action=None))
            page = render_index(index_rows(_index_spark(), spec))
        except ColaError as error:
            reason = str(error).splitlines()[0]
            if reason.startswith("--history"):
                reason = "[cola] history_store" + reason.removeprefix("--history")
            raise _StoreUnreadable(reason) from error
        _index_pages[store] = (time.monotonic(), page)
        return page


def _recorded_report(dag_id: str, run_id: str, task_id: str, map_index: int) -> Any:
    """What that task instance recorded in its XCom ``cola_report`` (None: nothing)."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        row = session.scalars(
            XComModel.get_many(run_id=run_id, dag_ids=dag_id, task_ids=task_id, map_indexes=map_index,
                               key=REPORT_XCOM_KEY, limit=1)
        ).first()
        return None if row is None else XComModel.deserialize_value(row)


def _reports_folder() -> Path:
    """``[cola] reports_folder``, resolved: the only folder reports are served from.

    Raises:
        HTTPException: 404, unset, missing, or a path through a symlink.
    """
    from airflow.configuration import conf

    setting = conf.get("cola", "reports_folder", fallback=None)
    if not setting:
        raise HTTPException(status_code=404, detail=NO_REPORTS_FOLDER)
    written = Path(os.path.abspath(setting))
    try:
        folder = written.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise HTTPException(status_code=404, detail="[cola] reports_folder does not exist") from error
    # Were the folder itself a symlink, whoever can write its parent could point it anywhere.
    if folder != written or not folder.is_dir():
        raise HTTPException(
            status_code=404, detail="[cola] reports_folder must be a folder named by its real path (no symlink)"
        )
    return folder


def _servable(recorded: Any, folder: Path) -> Path:
    """The recorded page, when it is a regular ``.html`` file below ``folder`` whose path goes
    through no symlink: a symlink a task left there could name any file the API server reads.

    Raises:
        HTTPException: 404, saying which of those it is not.
    """
    if recorded is None:
        raise HTTPException(status_code=404, detail="this task instance recorded no Cola report")
    if not isinstance(recorded, str) or not os.path.isabs(recorded) or not recorded.endswith(".html"):
        raise HTTPException(status_code=404, detail="the recorded Cola report is not the absolute path of a .html file")
    written = Path(os.path.abspath(recorded))
    if not written.is_relative_to(folder):
        raise HTTPException(status_code=404, detail="the recorded Cola report is not below [cola] reports_folder")
    try:
        resolved = written.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise HTTPException(status_code=404, detail="the recorded Cola report does not exist") from error
    if resolved != written:
        raise HTTPException(status_code=404, detail="the recorded Cola report's path goes through a symlink")
    if not stat.S_ISREG(resolved.lstat().st_mode):
        raise HTTPException(status_code=404, detail="the recorded Cola report is not a regular file")
    return resolved


def _read_page(path: Path) -> bytes:
    """The page's bytes, read without following a symlink put there since it was checked.

    Raises:
        HTTPException: 404, it is no longer a regular file there.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise HTTPException(status_code=404, detail="the recorded Cola report cannot be read") from error
    with os.fdopen(descriptor, "rb") as page:
        if not stat.S_ISREG(os.fstat(page.fileno()).st_mode):
            raise HTTPException(status_code=404, detail="the recorded Cola report is not a regular file")
        return page.read()


def _latest_reports(limit: int, dag_ids: set[str]) -> list[dict[str, Any]]:
    """The latest task instances of ``dag_ids`` that recorded a report, newest first, with
    their severity."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    rows: list[dict[str, Any]] = []
    with create_session() as session:
        reports = session.scalars(
            select(XComModel)
            .where(XComModel.key == REPORT_XCOM_KEY, XComModel.dag_id.in_(dag_ids))
            .order_by(XComModel.timestamp.desc())
            .limit(limit)
        ).all()
        for report in reports:
            summary = session.scalars(
                XComModel.get_many(run_id=report.run_id, dag_ids=report.dag_id, task_ids=report.task_id,
                                   map_indexes=report.map_index, key="return_value", limit=1)
            ).first()
            value = None if summary is None else XComModel.deserialize_value(summary)
            mapped = f" [{report.map_index}]" if report.map_index >= 0 else ""
            rows.append({
                "dag_id": report.dag_id, "run_id": report.run_id, "task": f"{report.task_id}{mapped}",
                "severity": value.get("severity") if isinstance(value, dict) else None,
                "url": report_url(report.dag_id, report.run_id, report.task_id, report.map_index),
            })
    return rows


def _may_read_dags(user: BaseUser, dag_id: str | None) -> bool:
    """Whether ``user`` may read the XComs of ``dag_id`` (of every DAG, when None), as Airflow's
    own XCom endpoints ask the auth manager."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
    from airflow.models.dag import DagModel

    details = None if dag_id is None else DagDetails(id=dag_id, team_name=DagModel.get_team_name(dag_id))
    return get_auth_manager().is_authorized_dag(
        method="GET", access_entity=DagAccessEntity.XCOM, details=details, user=user
    )


_bearer = HTTPBearer(auto_error=False)


async def _authenticated(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> BaseUser:
    """The caller, as Airflow's API authenticates it (a bearer token, else the UI's cookie).

    Raises:
        HTTPException: 401 without a token or with an expired one, 403 with an invalid one.
    """
    from airflow.api_fastapi.core_api.security import get_user

    return await get_user(request, _oauth_token=None, bearer_credentials=credentials)


# A route's caller, authenticated (typed Any: Airflow's user class is imported on a request).
_Caller = Annotated[Any, Depends(_authenticated)]


def create_app() -> FastAPI:
    """The read-only app the plugin mounts at ``/cola``.

    Airflow's API modules are imported on a request, not here: the plugin is also loaded
    where no API server runs (the task runner, the DAG processor).
    """
    app = FastAPI(title="Cola quality", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def error_page(request: Request, error: StarletteHTTPException) -> HTMLResponse:
        page = _ERROR_PAGE.format(status=error.status_code, style=_STYLE, reason=html.escape(str(error.detail)))
        return HTMLResponse(page, status_code=error.status_code, headers=error.headers)

    @app.get("/report", response_class=HTMLResponse)
    def report(user: _Caller, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> HTMLResponse:
        if not _may_read_dags(user, dag_id):
            raise HTTPException(status_code=403, detail="Forbidden")
        folder = _reports_folder()
        path = _servable(_recorded_report(dag_id, run_id, task_id, map_index), folder)
        return HTMLResponse(_read_page(path))

    @app.get("/", response_class=HTMLResponse)
    def index(user: _Caller) -> HTMLResponse:
        from airflow.api_fastapi.app import get_auth_manager
        from airflow.configuration import conf
        from airflow.exceptions import AirflowConfigException

        store = conf.get("cola", "history_store", fallback=None)
        if store:
            if not _may_read_dags(user, None):
                raise HTTPException(
                    status_code=403, detail="the index of the history store is for users who may read every DAG"
                )
            try:
                cache_seconds = conf.getint("cola", "index_cache_seconds", fallback=DEFAULT_INDEX_CACHE_SECONDS)
            except AirflowConfigException as error:
                raise HTTPException(
                    status_code=503, detail="[cola] index_cache_seconds must be a whole number of seconds"
                ) from error
            try:
                return HTMLResponse(_store_index(store, cache_seconds))
            except _StoreUnreadable as error:
                raise HTTPException(status_code=503, detail=str(error)) from error
        from jinja2 import Environment

        readable = get_auth_manager().get_authorized_dag_ids(user=user, method="GET")
        template = Environment(autoescape=True).from_string(_LATEST_TEMPLATE)
        return HTMLResponse(template.render(rows=_latest_reports(LATEST_REPORTS, readable)))

    return app


class ColaPlugin(AirflowPlugin):
    """Serves the Cola reports and the quality index in the API server; adds "Cola quality" to the nav."""

    name = "cola"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Cola quality"}]
    external_views = [{"name": "Cola quality", "href": f"{URL_PREFIX}/", "destination": "nav", "url_route": "cola"}]

"""The Cola plugin for Airflow 3's API server: the tasks' HTML reports and a quality index, read-only.

Registered through the ``airflow.plugins`` entry point. It mounts a small FastAPI app at
``/cola`` (``fastapi_apps``) and adds "Cola quality" to the navigation (``external_views``):

- ``/cola/report?dag_id=..&run_id=..&task_id=..&map_index=..``: the page that task instance
  wrote, as recorded in its XCom ``cola_report`` (``{"path": .., "sha256": ..}``, the "Cola
  report" extra link points here), to a user who may read that DAG's XComs. Only a recorded
  path is ever served, only a regular ``.html`` file below ``[cola] reports_folder`` reached
  through no symlink, with one hard link and at most :data:`MAX_REPORT_BYTES`, and only while
  its bytes hash to the recorded SHA-256; anything else is a 404 that says why.
- ``/cola/``: to an authenticated user. With ``[cola] history_store`` set (a path, or a JSON
  output spec, as ``cola history --history`` takes it), the index of that history store
  (``cola_core.report.index_page.render_index``), to a user who may read every DAG of the metadata DB and
  its XComs (the store holds them all), rendered at most every ``[cola] index_cache_seconds``;
  without it, the latest reports recorded in XCom of the DAGs whose XComs that user may read.

Airflow authenticates its own API with a router dependency that a mounted app does not
inherit, so every route here authenticates the caller itself, with Airflow's own
``get_user`` (the UI's ``_token`` cookie, or an ``Authorization: Bearer`` token) and the
configured auth manager. Every response carries :data:`SECURITY_HEADERS`: a report is a file a
task wrote, and it must not run a script on the API server's origin. Errors are HTML pages that
say why (a request without its query parameters too: a 400, not FastAPI's JSON echoing them).

The index over a history store is the one ``cola history html`` draws, and no request waits
for a JVM: a store on this machine's disk (a parquet or ORC folder on a local path) is read
without Spark (``_light_index``, pyarrow), in well under a second for a thousand runs. A table
store, or a folder on other storage (``s3a://``, ``hdfs://``), only Spark reads: its index is
built by a Spark query (``cola_core.history.summaries.index_rows``) in a background thread of the API
server worker, which starts a local session (``local[1]``) for it once; meanwhile the last
index built is served, or a 503 page saying that it is being built.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from airflow_provider_cola import _served_report as served
from airflow_provider_cola._history_index import (
    BEING_BUILT,
    INDEX_RUNS,
    IndexBeingBuilt,
    StoreUnreadable,
    store_index,
)
from airflow_provider_cola._served_report import MAX_REPORT_BYTES
from airflow_provider_cola.links import (
    REPORT_XCOM_KEY,
    URL_PREFIX,
    report_record_of,
    report_record_refusal,
    report_url,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from airflow.api_fastapi.auth.managers.models.base_user import BaseUser


__all__ = [
    "BEING_BUILT", "DEFAULT_INDEX_CACHE_SECONDS", "INDEX_RUNS", "LATEST_REPORTS", "MAX_REPORT_BYTES",
    "SECURITY_HEADERS", "ColaPlugin", "create_app",
]

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


def _recorded_page(recorded: Any) -> tuple[str, str]:
    """The path and the SHA-256 of a record ``links.push_report`` pushed (``links.report_record_of``).

    Raises:
        HTTPException: 404, saying why it is not such a record (``links.report_record_refusal``).
    """
    reason = report_record_refusal(recorded)
    if reason is not None:
        raise HTTPException(status_code=404, detail=reason)
    return recorded["path"], recorded["sha256"]


def _latest_reports(limit: int, dag_ids: set[str]) -> list[dict[str, Any]]:
    """The latest task instances of ``dag_ids`` that recorded a report, newest first, with
    their severity.

    Only records the plugin serves are listed (not the bare paths older versions pushed), so
    the rows are read a page of ``limit`` at a time until ``limit`` of them are found.
    """
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    rows: list[dict[str, Any]] = []
    with create_session() as session:
        query = (
            select(XComModel)
            .where(XComModel.key == REPORT_XCOM_KEY, XComModel.dag_id.in_(dag_ids))
            .order_by(XComModel.timestamp.desc(), XComModel.dag_run_id, XComModel.task_id, XComModel.map_index)
        )
        offset = 0
        while len(rows) < limit:
            page = session.scalars(query.offset(offset).limit(limit)).all()
            offset += limit
            for report in page:
                if len(rows) < limit and _is_record(XComModel.deserialize_value(report)):
                    rows.append(_latest_row(session, report))
            if len(page) < limit:
                break
    return rows


def _is_record(recorded: Any) -> bool:
    """Whether ``recorded`` is a record ``links.push_report`` pushes (a path and its SHA-256)."""
    return report_record_of(recorded) is not None


def _latest_row(session: Any, report: Any) -> dict[str, Any]:
    """The index row of one ``cola_report`` XCom: its task instance, the severity its
    ``return_value`` gives, and the link."""
    from airflow.models.xcom import XComModel

    summary = session.scalars(
        XComModel.get_many(run_id=report.run_id, dag_ids=report.dag_id, task_ids=report.task_id,
                           map_indexes=report.map_index, key="return_value", limit=1)
    ).first()
    value = None if summary is None else XComModel.deserialize_value(summary)
    mapped = f" [{report.map_index}]" if report.map_index >= 0 else ""
    return {
        "dag_id": report.dag_id, "run_id": report.run_id, "task": f"{report.task_id}{mapped}",
        "severity": value.get("severity") if isinstance(value, dict) else None,
        "url": report_url(report.dag_id, report.run_id, report.task_id, report.map_index),
    }


def _xcoms_readable(user: BaseUser, dag_ids: set[str]) -> set[str]:
    """The DAGs of ``dag_ids`` whose XComs ``user`` may read, as Airflow's own XCom endpoints
    ask the auth manager (each DAG with its team, in multi-team mode)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
    from airflow.models.dag import DagModel

    auth_manager = get_auth_manager()
    teams = DagModel.get_dag_id_to_team_name_mapping(list(dag_ids)) if dag_ids else {}
    return {
        dag_id for dag_id in dag_ids
        if auth_manager.is_authorized_dag(
            method="GET", access_entity=DagAccessEntity.XCOM,
            details=DagDetails(id=dag_id, team_name=teams.get(dag_id)), user=user,
        )
    }


def _may_read_every_dag(user: BaseUser) -> bool:
    """Whether ``user`` may read every DAG of the metadata DB and the XComs of each.

    Asked DAG by DAG: the auth manager's answer for no DAG in particular (``details`` None) is
    not "every DAG" in all of them (FAB's checks only the XComs permission, not the DAGs'). That
    answer is still asked first, so that an empty metadata DB does not open the index to all.
    """
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    auth_manager = get_auth_manager()
    if not auth_manager.is_authorized_dag(method="GET", access_entity=DagAccessEntity.XCOM, user=user):
        return False
    with create_session() as session:
        every = set(session.scalars(select(DagModel.dag_id)).all())
    if not every <= auth_manager.get_authorized_dag_ids(user=user, method="GET"):
        return False
    return _xcoms_readable(user, every) == every


def _dags_with_reports(dag_ids: set[str]) -> set[str]:
    """The DAGs of ``dag_ids`` with a ``cola_report`` XCom: the only ones whose XCom access the
    latest reports need to ask about."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    if not dag_ids:
        return set()
    with create_session() as session:
        return set(session.scalars(
            select(XComModel.dag_id).where(XComModel.key == REPORT_XCOM_KEY, XComModel.dag_id.in_(dag_ids)).distinct()
        ).all())


def _error_response(status: int, reason: str, headers: Mapping[str, str] | None = None) -> HTMLResponse:
    """The HTML page of an error: its status and the one line that says why."""
    page = _ERROR_PAGE.format(status=status, style=_STYLE, reason=html.escape(reason))
    return HTMLResponse(page, status_code=status, headers=headers)


def _invalid_parameters(error: RequestValidationError) -> str:
    """Which query parameters are missing or invalid, without the values given: FastAPI's own
    answer (a 422 in JSON) echoes them back."""
    reasons = []
    for problem in error.errors():
        name = ".".join(str(part) for part in problem.get("loc", ())[1:]) or "the request"
        if problem.get("type") == "missing":
            reasons.append(f"the query parameter {name} is missing")
        else:
            reasons.append(f"the query parameter {name} is not valid: {problem.get('msg', 'invalid')}")
    return "; ".join(reasons) or "the request is not valid"


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
        return _error_response(error.status_code, str(error.detail), error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> HTMLResponse:
        return _error_response(400, _invalid_parameters(error))

    @app.get("/report", response_class=HTMLResponse)
    def report(user: _Caller, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> HTMLResponse:
        if dag_id not in _xcoms_readable(user, {dag_id}):
            raise HTTPException(status_code=403, detail="Forbidden")
        folder = _reports_folder()
        recorded, sha256 = _recorded_page(_recorded_report(dag_id, run_id, task_id, map_index))
        path, checked = served.servable(recorded, folder)
        return HTMLResponse(served.read_page(path, checked, sha256))

    @app.get("/", response_class=HTMLResponse)
    def index(user: _Caller) -> HTMLResponse:
        from airflow.api_fastapi.app import get_auth_manager
        from airflow.configuration import conf
        from airflow.exceptions import AirflowConfigException

        store = conf.get("cola", "history_store", fallback=None)
        if store:
            if not _may_read_every_dag(user):
                raise HTTPException(
                    status_code=403,
                    detail="the index of the history store is for users who may read every DAG and its XComs",
                )
            try:
                cache_seconds = conf.getint("cola", "index_cache_seconds", fallback=DEFAULT_INDEX_CACHE_SECONDS)
            except AirflowConfigException as error:
                raise HTTPException(
                    status_code=503, detail="[cola] index_cache_seconds must be a whole number of seconds"
                ) from error
            try:
                return HTMLResponse(store_index(store, cache_seconds))
            except StoreUnreadable as error:
                raise HTTPException(status_code=503, detail=str(error)) from error
            except IndexBeingBuilt as error:
                raise HTTPException(status_code=503, detail=BEING_BUILT, headers={"Retry-After": "30"}) from error
        from jinja2 import Environment

        # The list shows each task's XComs (its record, the severity its return_value gives):
        # only those of the DAGs the user may read the XComs of, not every DAG they may read.
        readable = _dags_with_reports(get_auth_manager().get_authorized_dag_ids(user=user, method="GET"))
        readable = _xcoms_readable(user, readable)
        template = Environment(autoescape=True).from_string(_LATEST_TEMPLATE)
        return HTMLResponse(template.render(rows=_latest_reports(LATEST_REPORTS, readable)))

    return app


class ColaPlugin(AirflowPlugin):
    """Serves the Cola reports and the quality index in the API server; adds "Cola quality" to the nav."""

    name = "cola"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Cola quality"}]
    external_views = [{"name": "Cola quality", "href": f"{URL_PREFIX}/", "destination": "nav", "url_route": "cola"}]

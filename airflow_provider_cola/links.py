"""The HTML report of a task: its path checked, its XCom, and the "Cola report" extra link.

A task given ``html_report`` pushes ``{"path": <absolute path>, "sha256": <hex digest>}`` of the
page it wrote under the XCom key :data:`REPORT_XCOM_KEY`. The link points to the provider's plugin
(``airflow_provider_cola.plugin``), which serves that file, and only that file, and only while its
bytes are still the ones the task wrote, at
``/cola/report?dag_id=<dag_id>&run_id=<run_id>&task_id=<task_id>&map_index=<map_index>``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from airflow.sdk import BaseOperatorLink

from airflow_provider_cola.errors import ColaConfigError
from cola_core.errors import ColaError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from airflow.sdk import BaseOperator
    from airflow.sdk.types import TaskInstanceKey
    from pyspark.sql import SparkSession

    from cola_core.job.runner import JobOutcome
    from cola_core.job.spec import JobSpec

__all__ = [
    "REPORT_XCOM_KEY", "URL_PREFIX", "ColaReportLink", "checked_report_path", "push_report", "report_record",
    "report_record_of", "report_record_refusal", "report_url", "url_prefix", "write_report_page",
]

log = logging.getLogger(__name__)

REPORT_XCOM_KEY = "cola_report"
# Where the plugin's app is mounted in the API server.
URL_PREFIX = "/cola"


def checked_report_path(html_report: Any) -> Path | None:
    """The absolute local path of the page ``html_report`` names, checked before any Spark work.

    Raises:
        ColaConfigError: not a path the task can write (a URI, a folder, a read-only place).
    """
    if html_report is None:
        return None
    from cola_core.report.pages import checked_page_path

    if not isinstance(html_report, str):
        raise ColaConfigError(f"html_report must be the path of a file, got {html_report!r}")
    try:
        return checked_page_path(html_report, "html_report").absolute()
    except ColaError as error:
        raise ColaConfigError(str(error)) from error


def write_report_page(path: Path, spark: SparkSession, spec: JobSpec, outcome: JobOutcome) -> None:
    """Write the HTML report page of a job run in this process, as ``cola --html`` does for the driver
    (``cola_core.job.runner.report_page``: the run's ``validated_at``, and with a history the
    trends of the dataset's last runs, this one included).

    Raises:
        ColaOutputError: the page cannot be written, or the history read for its trends.
    """
    from cola_core.job.runner import write_run_page

    write_run_page(spark, spec, outcome, path)


def report_record(path: Path) -> dict[str, str]:
    """What :func:`push_report` records of the page at ``path``: its absolute path and the
    SHA-256 of its bytes (lowercase hex).

    The digest ties the record to these bytes: the plugin serves the file only while it hashes
    to it, so a page that a later run, or another instance of a mapped task, wrote since at the
    same path is not served as this task instance's. It does not tie the record to a DAG: a task
    can hash any file it reads, another DAG's page below the reports folder included, and record
    that (the plugin serves only files below ``[cola] reports_folder``, to whoever may read the
    recording DAG's XComs).

    Raises:
        OSError: the page cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as page:
        for chunk in iter(lambda: page.read(1 << 20), b""):
            digest.update(chunk)
    return {"path": str(path.absolute()), "sha256": digest.hexdigest()}


_SHA256 = re.compile(r"[0-9a-f]{64}")


def report_record_refusal(recorded: Any) -> str | None:
    """Why ``recorded`` (a task instance's ``cola_report`` XCom, None without one) is not a
    record :func:`push_report` pushes; None when it is one.

    The one check of a record: the "Cola report" link shows only for a record, and the plugin
    serves nothing else (its 404 gives this reason). Nothing but the record is taken: without
    the digest, a path names whatever is there now.
    """
    if recorded is None:
        return "this task instance recorded no Cola report"
    if isinstance(recorded, str):
        return (
            "this task instance recorded its Cola report as a bare path, as older versions of the provider "
            "did: without the page's SHA-256 it is not served (run the task again)"
        )
    if (
        not isinstance(recorded, dict) or set(recorded) != {"path", "sha256"}
        or not isinstance(recorded["sha256"], str) or not _SHA256.fullmatch(recorded["sha256"])
    ):
        return "the recorded Cola report is not a path and the SHA-256 of the page"
    path = recorded["path"]
    if not isinstance(path, str) or not os.path.isabs(path) or not path.endswith(".html"):
        return "the recorded Cola report is not the absolute path of a .html file"
    if "\x00" in path:  # resolve() and open() refuse it with a ValueError, not an OSError
        return "the recorded Cola report's path holds a NUL character"
    return None


def report_record_of(recorded: Any) -> tuple[Path, str] | None:
    """The page's path and SHA-256 of a record :func:`push_report` pushes; None for anything
    else (:func:`report_record_refusal` says why)."""
    if report_record_refusal(recorded) is not None:
        return None
    return Path(recorded["path"]), recorded["sha256"]


def push_report(context: Mapping[str, Any], path: Path | None) -> str | None:
    """Push :func:`report_record` of the page under :data:`REPORT_XCOM_KEY` when the run wrote
    it (the link and the plugin read it); nothing otherwise.

    A page written but not readable back pushes nothing and logs a warning, as a page that
    cannot be written does: the check's result stands, only its link is missing.

    Returns:
        The "Cola report" link's URL (:func:`report_url`) when a record was pushed, for the
        task's alerts; None otherwise.
    """
    if path is None or not path.is_file():
        return None
    try:
        record = report_record(path)
    except OSError as error:
        log.warning("The Cola report %s was written but cannot be read back, so it has no link: %s", path, error)
        return None
    ti = context["ti"]
    ti.xcom_push(key=REPORT_XCOM_KEY, value=record)
    return report_url(ti.dag_id, ti.run_id, ti.task_id, ti.map_index)


def url_prefix() -> str:
    """The plugin's URL: ``[api] base_url`` (without its trailing slash) + ``/cola``."""
    from airflow.configuration import conf

    base = (conf.get("api", "base_url", fallback="") or "").rstrip("/")
    return f"{base}{URL_PREFIX}"


def report_url(dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> str:
    """Where the plugin serves that task instance's report (``map_index`` -1: not a mapped task).

    The identifiers are query parameters, each percent-encoded whole: in the path, a run id
    holding a ``/`` (``%2F``) would be decoded into two segments before any route saw it.
    """
    query = {"dag_id": dag_id, "run_id": run_id, "task_id": task_id, "map_index": str(map_index)}
    return f"{url_prefix()}/report?{urlencode(query, quote_via=quote)}"


class ColaReportLink(BaseOperatorLink):
    """ "Cola report": the task instance's HTML report, served by the provider's plugin.

    Empty (no link) when the task recorded no report (:func:`report_record`): no
    ``html_report``, a run that stopped before writing it, or anything the plugin would not
    serve (:func:`report_record_of`: a bare path of an older provider...). Each instance of a
    mapped task has its own (its ``map_index``).
    """

    name = "Cola report"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        from airflow.sdk.execution_time.xcom import XCom

        recorded = XCom.get_value(ti_key=ti_key, key=REPORT_XCOM_KEY)
        if report_record_of(recorded) is None:  # the plugin would answer a 404
            return ""
        return report_url(ti_key.dag_id, ti_key.run_id, ti_key.task_id, ti_key.map_index)

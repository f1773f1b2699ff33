"""How the operators run their job: with spark-submit, or as a Spark Connect client in this worker.

Each runner takes the validated rules, source, outputs and page, runs the job, and returns
the results summary and the page the run wrote (None if none); the operator then settles
(``_lifecycle.TaskLifecycle.settle``). How a task is submitted (:func:`submit_hook`,
:func:`submit_job`, :func:`check_deploy_mode`) and whether it runs over Spark Connect
(:func:`connect_url`) is the same for every operator, ``ColaProfileOperator`` included.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException

from airflow_provider_cola._rules import RuleBlock, checked_local_path
from airflow_provider_cola._spark_target import requested_deploy_mode
from airflow_provider_cola.errors import ColaConfigError, ColaJobError
from airflow_provider_cola.operators._argv import rules_file
from airflow_provider_cola.operators._results import ResultsFile
from airflow_provider_cola.operators._spark_submit import ColaSubmitHook
from airflow_provider_cola.operators._submit_args import SUBMIT_ONLY, submit_arguments

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pyspark.sql import SparkSession

    from cola_core.storage.specs import SourceSpec

__all__ = [
    "ConnectClientRun", "ConnectRun", "OperatorRun", "SparkSubmitRun", "check_deploy_mode", "connect_url",
    "submit_hook", "submit_job",
]

# The runners take the operator (a ColaCheckOperator or a ColaProfileOperator, which import this
# module, so it is not named here): its arguments, its log, its _lifecycle, _job_spec and _mask_secrets.
Operator = Any

# Besides spark-submit's own arguments, the operator's that only apply to it.
_SUBMIT_ONLY = {**SUBMIT_ONLY, "results_uri": None}


class OperatorRun(Protocol):
    """How an operator runs its job."""

    hook: ColaSubmitHook | None

    def run(
        self, block: RuleBlock, source: SourceSpec, outputs: Mapping[str, Any], page: Path | None
    ) -> tuple[Mapping[str, Any], Path | None]:
        """The results summary, and the page this run wrote (None if none)."""
        ...


def connect_url(task: Operator) -> str | None:
    """With a ``spark_connect`` connection, its URL (it may carry a token: never logged).

    Raises:
        ColaConfigError: an argument that only applies to spark-submit is given, or the
            connection has no usable URL.
    """
    try:
        conn = BaseHook.get_connection(task.conn_id)
    except AirflowException:
        return None
    if conn.conn_type != "spark_connect":
        return None
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

    given = sorted(name for name, default in _SUBMIT_ONLY.items() if getattr(task, name) != default)
    if given:
        raise ColaConfigError(
            f"{', '.join(given)} only apply to spark-submit; the spark_connect connection {task.conn_id!r} "
            "runs the engine in this worker as a Spark Connect client (Spark settings go in conf)"
        )
    try:
        return SparkConnectHook(task.conn_id).get_connection_url()
    except (ValueError, AttributeError, TypeError) as error:  # no host, or a host with a path
        raise ColaConfigError(f"the spark_connect connection {task.conn_id!r} has no usable URL: {error}") from None


class ConnectClientRun:
    """A run in this process as a client of a Spark Connect server (``remote``, from :func:`connect_url`).

    A failure that is no refusal (the server cannot be reached, a query crashed) is a
    ``ColaJobError``, which is retried.
    """

    hook: ColaSubmitHook | None = None

    def __init__(self, task: Operator, remote: str) -> None:
        self._task = task
        self._remote = remote

    @property
    def server(self) -> str:
        """The server's host and port, for the log (the URL may carry a token: never logged)."""
        return urlsplit(self._remote).netloc

    def session(self) -> tuple[SparkSession, bool]:
        """A session of the server, with the task's ``conf``, and whether this call started it."""
        from cola_core.storage.session import spark_session

        return spark_session(self._remote, (self._task.conf or {}).items())


class ConnectRun(ConnectClientRun):
    """Run the job in this process as a client of a Spark Connect server."""

    def run(
        self, block: RuleBlock, source: SourceSpec, outputs: Mapping[str, Any], page: Path | None
    ) -> tuple[Mapping[str, Any], Path | None]:
        from cola_core.job.runner import load_job

        task = self._task
        job = load_job(
            task._job_spec(tuple(block.rules), source, None, outputs), checks=block.checks,
            contract_gaps=block.contract_gaps,
        )
        task.log.info("Cola runs in this worker as a Spark Connect client of %s", self.server)
        run = task._lifecycle.run_in_process(
            job, self.session, page=page, crash="the Cola job over Spark Connect failed",
        )
        return run.outcome.summary, page if run.page_written else None


class SparkSubmitRun:
    """Submit ``cola_core``'s job entry point with spark-submit, then read its results file.

    Attributes:
        hook: the hook, once built (for the tests, which watch the running job).
    """

    def __init__(self, task: Operator) -> None:
        self._task = task
        self.hook: ColaSubmitHook | None = None

    def run(
        self, block: RuleBlock, source: SourceSpec, outputs: Mapping[str, Any], page: Path | None
    ) -> tuple[Mapping[str, Any], Path | None]:
        task = self._task
        deploy_mode = requested_deploy_mode(task.conn_id, task.deploy_mode)
        check_deploy_mode(deploy_mode, page, task.results_uri)
        # Again: execute() may be called without rendering (a test calling it directly).
        secrets = task._mask_secrets()
        with tempfile.TemporaryDirectory(prefix="cola-") as workdir:
            results = ResultsFile(workdir, task.results_uri)
            rules, shipped = rules_file(block, Path(workdir), deploy_mode)
            job = task._job_spec(rules, source, results.target, outputs)
            self.hook = hook = submit_hook(task, job.to_argv(), shipped, secrets)
            # The local master reads this machine's files: a missing one fails before any JVM.
            checked_local_path(source, hook.master)
            submit_job(task, hook, [results])
            summary = results.read(
                split=task.command == "split", checks=block.checks, log_tail=hook.log_tail, stream=source.stream
            )
        if page is not None and not page.is_file():
            # The driver removed the earlier page and warned why it wrote none (in its log above).
            task.log.warning("The HTML report was not written: %s is missing after the run", page)
        return summary, page


def submit_hook(task: Operator, arguments: list[str], shipped: list[str], secrets: Mapping[str, str]) -> ColaSubmitHook:
    """The hook that submits ``cola_core``'s job entry point with ``arguments`` for ``task``:
    its spark-submit arguments, ``cola_core`` zipped into ``--py-files`` (before the task's
    own), ``shipped`` files in ``--files`` (before the task's own), and ``secrets`` masked."""
    given = submit_arguments(task)
    return ColaSubmitHook(
        **{
            **given,
            "py_files": ",".join(filter(None, [str(_py_files_zip()), task.py_files])),
            "files": ",".join(filter(None, [*shipped, task.files])) or None,
            "name": task.name or f"cola-{task.dag_id}-{task.task_id}",
        },
        conn_id=task.conn_id,
        application_args=arguments,
        secrets=secrets,
    )


def submit_job(task: Operator, hook: ColaSubmitHook, written: Sequence[ResultsFile]) -> None:
    """Run ``hook``'s spark-submit of the job entry point, which ``task``'s kill stops.

    Args:
        written: the files the job writes for this worker. After a failed submit each is
            removed, once a refusal recorded in one of them has been read.

    Raises:
        AirflowTaskTerminated: the task was killed before spark-submit started.
        ColaJobRefused: the job refused its inputs (its command line included): the record
            it wrote in one of ``written`` says so.
        ColaJobError: spark-submit failed otherwise.
    """
    if hook.environment:
        task.log.info("spark-submit runs with %s", hook.environment)
    task._lifecycle.stop_if_killed()  # killed before spark-submit starts: nothing to run
    try:
        with task._lifecycle.interruptible(hook.on_kill):
            hook.submit(str(_job_entry_path()))
    except ColaJobError:
        # The job writes down why it refused its inputs, a usage error included, in the files it
        # was to write: the record is the fact, whatever spark-submit's exit status and log say
        # (in cluster deploy mode they are not the job's). No record: a crash, which is retried.
        refusal = next(filter(None, (file.refusal() for file in written)), None)
        # Whatever a failed job left (a refusal, a partial file) is read once, never again.
        for file in written:
            file.discard()
        if refusal is not None:
            raise refusal.error() from None  # its tail is not the news
        raise


def check_deploy_mode(deploy_mode: str, page: Path | None, results_uri: str | None) -> None:
    """Refuse what cannot work in cluster deploy mode, before anything is built.

    Raises:
        ColaConfigError: an HTML page, or no ``results_uri``, in cluster deploy mode.
    """
    if deploy_mode != "cluster":
        return
    if page is not None:
        # The driver would write the page on its cluster node, where this worker can
        # neither remove an earlier run's page nor serve it: the link would show nothing,
        # or an old page as this run's.
        raise ColaConfigError(
            "html_report cannot be used in cluster deploy mode: the driver runs on a cluster node and "
            "would write the page there, where this worker can neither remove an earlier page nor serve "
            "it; use client deploy mode, or a spark_connect connection (the page is then written in "
            "this worker)"
        )
    if not results_uri:
        raise ColaConfigError(
            "cluster deploy mode runs the driver on the cluster, so the results cannot come back "
            "through a local file: set results_uri to a folder both this worker and the driver reach"
        )


def _py_files_zip() -> Path:
    from cola_core.shipping import py_files_zip

    return py_files_zip()


def _job_entry_path() -> Path:
    from cola_core.shipping import job_entry_path

    return job_entry_path()

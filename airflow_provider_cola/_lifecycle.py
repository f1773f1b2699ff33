"""One Cola task's lifecycle, shared by ``ColaCheckOperator``, ``ColaSplitOperator`` and ``@cola_check``.

Every Cola task validates its rules, builds its job, runs it, reads its results, then settles:
pushes them to XCom (with the HTML page's record), alerts, branches or fails. Only how the
job runs differs, and each entry point says it with its own runner: spark-submit
(``operators/_runs.py``), a Spark Connect client (the same module) or the task's own session
(``@cola_check``); the last two run the engine here, through :meth:`TaskLifecycle.run_in_process`
(and ``ColaProfileOperator`` over Spark Connect, through :meth:`TaskLifecycle.in_session`).

What is the same for all of them lives here: the kill flag (a kill raises nothing in the
task, so what runs next must ask), the page (a page that cannot be written is a warning),
the job's validation, the secrets registered with the masker, and settling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from airflow.sdk.exceptions import AirflowTaskTerminated

from airflow_provider_cola import links
from airflow_provider_cola._outcome import (
    checked_branch,
    checked_on_failure,
    checked_samples,
    checked_switch,
    settle,
)
from airflow_provider_cola._rules import RuleBlock, dag_folder, load_rules
from airflow_provider_cola._secrets import mask_sensitive_settings, secrets_as_text
from airflow_provider_cola.alerts import checked_on_quality, checked_on_quality_severity
from airflow_provider_cola.errors import ColaConfigError, ColaJobError, refusal_of
from cola_core.common.spark_errors import first_line
from cola_core.contracts import unchecked_message
from cola_core.errors import ColaError
from cola_core.job.spec import JobSpec

if TYPE_CHECKING:
    from pathlib import Path

    from airflow.sdk import Context
    from pyspark.sql import DataFrame, SparkSession

    from cola_core.job.runner import JobOutcome, LoadedJob

__all__ = ["ColaTask", "InProcessRun", "TaskLifecycle", "job_spec"]

_Done = TypeVar("_Done")


def job_spec(**fields: Any) -> JobSpec:
    """The job a task runs, from its ``JobSpec`` fields.

    Raises:
        ColaConfigError: the engine refuses the job as specified.
    """
    try:
        return JobSpec(**fields)
    except ColaError as error:
        raise ColaConfigError(f"invalid Cola job: {error}") from error


@dataclass(frozen=True)
class InProcessRun:
    """A job run in this process.

    Attributes:
        outcome: what the engine returned.
        page_written: whether the run's HTML page was written.
    """

    outcome: JobOutcome
    page_written: bool


class TaskLifecycle:
    """The steps every Cola task takes, for one task (held by the task, see :class:`ColaTask`).

    Args:
        task: the operator; its ``log``, and the ``on_failure``, ``branch``, ``on_quality``
            and ``on_quality_severity`` it settles with.
    """

    def __init__(self, task: Any) -> None:
        self._task = task
        # Set by kill(): a kill raises nothing in the task (the Task SDK's SIGTERM handler only
        # calls on_kill), so what the interrupted Spark work raises next must not pass for an
        # ordinary failure, nor a finished run go on to branch or succeed.
        self.killed = False
        self._interrupt: Callable[[], object] | None = None

    @contextmanager
    def interruptible(self, interrupt: Callable[[], object]) -> Iterator[None]:
        """While inside, :meth:`kill` calls ``interrupt`` (stop spark-submit, interrupt a session)."""
        self._interrupt = interrupt
        try:
            yield
        finally:
            self._interrupt = None

    def kill(self) -> None:
        """Mark the task as killed, then interrupt what it runs."""
        self.killed = True
        interrupt = self._interrupt
        if interrupt is not None:
            interrupt()

    def stop_if_killed(self, error: BaseException | None = None) -> None:
        """Stop the task when it was killed: nothing after a kill may record a report, push the
        results, branch or let the task succeed.

        Raises:
            AirflowTaskTerminated: :meth:`kill` was called (``error``, what the interrupted
                work raised, is its cause); the Task SDK fails the task without a retry.
        """
        if self.killed:
            raise AirflowTaskTerminated("the Cola task was killed: its run was interrupted") from error

    def rules(self, context: Context, rules: Any, *, allow_external_access: bool) -> RuleBlock:
        """The task's rules, read (a relative file from the DAG file's folder) and validated.

        Raises:
            ColaConfigError: the file cannot be read, or a rule is malformed.
        """
        task = self._task
        return load_rules(
            rules, base_dir=dag_folder(context.get("dag") or task.get_dag()),
            allow_external_access=allow_external_access,
        )

    def run_in_process(
        self,
        job: LoadedJob,
        session: Callable[[], tuple[SparkSession, bool]],
        *,
        page: Path | None = None,
        frame: Callable[[SparkSession], DataFrame] | None = None,
        crash: str | None = None,
    ) -> InProcessRun:
        """Run ``job`` in this process (:meth:`in_session`, which says what ``session`` and
        ``crash`` are, and what it raises), write its page, and log its results table.

        Args:
            page: where to write the run's HTML page; an earlier run's page there is removed
                first, so that it never passes for this run's.
            frame: gives the data from the session, when the task has it (``@cola_check``);
                otherwise the job reads its source.
        """
        from cola_core.job.runner import run_job
        from cola_core.report.results import render_table

        if page is not None:
            page.unlink(missing_ok=True)

        def run(spark: SparkSession) -> tuple[JobOutcome, bool]:
            outcome = run_job(job, spark, df=None if frame is None else frame(spark))
            # In this process, as the driver does for cola --html.
            return outcome, page is not None and self.write_page(page, spark, job.spec, outcome)

        outcome, written = self.in_session(session, run, crash=crash)
        # The results come first in the task's log, as the driver prints them under spark-submit.
        table = render_table(
            outcome.results, valid_count=outcome.valid_count, invalid_count=outcome.invalid_count, cost=outcome.cost
        )
        self._task.log.info("Cola results:\n%s", table)
        if job.contract_gaps:  # after the results, as the driver says them under spark-submit
            self._task.log.warning("%s", unchecked_message(job.contract_gaps))
        return InProcessRun(outcome, written)

    def in_session(
        self,
        session: Callable[[], tuple[SparkSession, bool]],
        work: Callable[[SparkSession], _Done],
        *,
        crash: str | None = None,
    ) -> _Done:
        """What ``work`` returns, run in this process on the session ``session`` gives, which a
        kill interrupts (``interruptAll``); the session is stopped after, if this call started it.

        Args:
            session: gives the session, and whether this call started it (and so stops it).
            crash: with it, a failure that is no refusal raises ``ColaJobError("<crash>: ...")``;
                without it, it raises as it is.

        Raises:
            ColaJobRefused: the engine refused the source, an output or a rule on the data, or
                Spark refused a query (``errors.refusal_of``): as ``cola`` refuses them, without a retry.
            AirflowTaskTerminated: the task was killed while it ran.
        """
        from cola_core.storage.session import stop_session

        try:
            spark, started_here = session()
            try:
                with self.interruptible(spark.interruptAll):
                    return work(spark)
            finally:
                if started_here:
                    stop_session(spark)
        except Exception as error:
            self.stop_if_killed(error)  # what interrupting the session made the running work raise
            refusal = refusal_of(error)
            if refusal is not None:
                raise refusal from error
            if crash is None:
                raise
            raise ColaJobError(f"{crash}: {first_line(error)}") from error

    def write_page(self, page: Path, spark: SparkSession, spec: JobSpec, outcome: JobOutcome) -> bool:
        """Write the run's HTML report; whether it was written.

        The run is finished (its outputs published, its history appended): a page that cannot
        be built or written, whatever the reason (a history store that cannot be read for the
        trends, a bug in the page), is a warning, as for ``cola --html``. Failing the task
        would have it retried, and the retry would append a second history row for the same
        run. A timeout still stops the task: ``AirflowTaskTimeout`` is a BaseException. A kill
        raises nothing: :meth:`kill` interrupts the session, so the page's query fails with
        an ordinary exception, which must not pass for a page that merely could not be built.

        Raises:
            AirflowTaskTerminated: the task was killed while the page was built.
        """
        try:
            links.write_report_page(page, spark, spec, outcome)
        except Exception as error:
            self.stop_if_killed(error)
            self._task.log.warning("The HTML report was not written: %s", first_line(error), exc_info=True)
            return False
        return True

    def settle(self, context: Context, summary: Mapping[str, Any], page: Path | None) -> Mapping[str, Any]:
        """Unless the task was killed: push the page's record (``page``: the page this run
        wrote, or None), then the results, alert, and branch, fail or log (``_outcome.settle``).

        Raises:
            AirflowTaskTerminated: the task was killed.
        """
        self.stop_if_killed()
        task = self._task
        report_url = links.push_report(context, page)
        return settle(
            task, context, summary, on_failure=task.on_failure, branch=task.branch, on_quality=task.on_quality,
            on_quality_severity=task.on_quality_severity, report_url=report_url,
        )


class ColaTask:
    """What Airflow calls on every Cola task, the same way: rendering (with its secrets masked)
    and ``on_kill``. Mixed in before ``BaseOperator``; the task sets ``_lifecycle`` in its
    ``__init__``.

    ``_secret_settings`` names the task's arguments that are Spark settings (``conf``,
    ``env_vars``) or hold some (``source.options``): their values whose keys name a secret
    are registered with Airflow's masker.
    """

    _secret_settings: ClassVar[Sequence[str]] = ("conf",)
    _cola_lifecycle: TaskLifecycle

    @property
    def _lifecycle(self) -> TaskLifecycle:
        """The lifecycle of this task object. Airflow runs a copy of the task it was given
        (``BaseOperator.prepare_for_execution``), and what the run leaves on the task (its
        summary, read by the OpenLineage listener and the outlets) must land on the copy that
        ran: a lifecycle made for another object is made again for this one."""
        lifecycle = self._cola_lifecycle
        if lifecycle._task is not self:
            lifecycle = self._cola_lifecycle = TaskLifecycle(self)
        return lifecycle

    def _take_task_arguments(self, given: Mapping[str, Any]) -> None:
        """Check and keep the arguments every Cola task takes, from its ``__init__``'s ``locals()``
        (``rules``, ``conn_id``, ``on_failure``, ``branch``, ``on_quality``,
        ``on_quality_severity``, ``samples``, ``allow_external_access``), and start its lifecycle.

        Only the cheap, static checks: DAG parsing stays fast.

        Raises:
            ValueError: an argument of the wrong kind.
        """
        self.rules = given["rules"]
        self.conn_id = given["conn_id"]
        self.on_failure = checked_on_failure(given["on_failure"])
        self.branch = checked_branch(given["branch"])
        self.on_quality = checked_on_quality(given["on_quality"])
        self.on_quality_severity = checked_on_quality_severity(given["on_quality_severity"])
        self.samples = checked_samples(given["samples"])
        self.allow_external_access = checked_switch(given["allow_external_access"], "allow_external_access")
        self._cola_lifecycle = TaskLifecycle(self)

    def render_template_fields(self, context: Context, jinja_env: Any = None) -> None:
        """Render, then register secret-named values with the masker.

        Done here, not in ``execute``: the runner stores the rendered fields (the Rendered
        Template view) right after rendering, and a value must be known to the masker by then.
        """
        super().render_template_fields(context, jinja_env)  # type: ignore[misc]
        self._mask_secrets()

    def _mask_secrets(self) -> dict[str, str]:
        """Register the secret-named values of ``_secret_settings``; the pairs registered."""
        return mask_sensitive_settings(*(self._settings_as_text(name) for name in self._secret_settings))

    def _settings_as_text(self, name: str) -> Mapping[str, Any] | None:
        # Secret-named numbers become text first: the masker redacts text only.
        attribute, _, key = name.partition(".")
        value = getattr(self, attribute)
        if key:
            holder = value if isinstance(value, Mapping) else {}
            settings = secrets_as_text(holder.get(key))
            if settings is not holder.get(key):
                setattr(self, attribute, {**holder, key: settings})
        else:
            settings = secrets_as_text(value)
            setattr(self, attribute, settings)
        return settings if isinstance(settings, Mapping) else None

    def on_kill(self) -> None:
        """Mark the task as killed, so that it stops instead of settling, and interrupt what it
        runs: spark-submit (and the Spark application) through the hook, or what its session
        runs (``interruptAll``: on the server over Spark Connect, the session's jobs in a
        classic one, since Spark 4.0)."""
        self._lifecycle.kill()

"""``ColaCheckOperator`` and ``ColaSplitOperator``: the Cola job submitted with ``SparkSubmitHook``.

Both validate the rules and the source in the worker, describe the job as one
``cola_core.job.JobSpec`` (:meth:`ColaCheckOperator._job_spec`), submit ``cola_core``'s job
entry point with that job's command line and ``cola_core`` shipped as a ``--py-files`` zip,
read the results file back, push it to XCom, and then branch on the worst severity or apply
``on_failure``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from airflow.sdk import BaseHook, BaseOperator, BranchMixIn
from airflow.sdk.exceptions import AirflowException, AirflowTaskTerminated

from airflow_provider_cola._lineage import ColaLineageMixin
from airflow_provider_cola._outcome import (
    OnFailure,
    checked_branch,
    checked_on_failure,
    checked_samples,
    checked_switch,
    settle,
)
from airflow_provider_cola._rules import (
    RuleBlock,
    checked_local_path,
    checked_output,
    checked_source,
    dag_folder,
    load_rules,
    run_job_fields,
    split_job_fields,
)
from airflow_provider_cola._secrets import mask_sensitive_settings, secrets_as_text
from airflow_provider_cola.alerts import AlertSeverity, AlertTarget, checked_on_quality, checked_on_quality_severity
from airflow_provider_cola.errors import ColaConfigError, ColaJobError, ColaJobRefused, refusal_of
from airflow_provider_cola.links import ColaReportLink, checked_report_path, push_report, write_report
from airflow_provider_cola.operators._argv import rules_file
from airflow_provider_cola.operators._results import ResultsFile
from airflow_provider_cola.operators._spark_submit import ColaSubmitHook, launcher_environment, refused_message
from cola_core._spark_errors import first_line
from cola_core.errors import ColaError
from cola_core.job import Command, JobSpec

if TYPE_CHECKING:
    from airflow.sdk import Context
    from pyspark.sql import SparkSession

    from cola_core.result import Severity
    from cola_core.runner import JobOutcome
    from cola_core.specs import SourceSpec

__all__ = ["ColaCheckOperator", "ColaSplitOperator"]

_SUBMIT_TEMPLATE_FIELDS = (
    "conf",
    "files",
    "py_files",
    "archives",
    "jars",
    "packages",
    "driver_class_path",
    "env_vars",
    "name",
    "keytab",
    "principal",
    "proxy_user",
    "properties_file",
)


# What only spark-submit uses, with each argument's default: over Spark Connect, giving one is a
# mistake to point out rather than to ignore.
_SUBMIT_ONLY: dict[str, Any] = {
    "results_uri": None, "files": None, "py_files": None, "archives": None, "jars": None, "packages": None,
    "exclude_packages": None, "repositories": None, "driver_class_path": None, "total_executor_cores": None,
    "executor_cores": None, "executor_memory": None, "driver_memory": None, "num_executors": None, "keytab": None,
    "principal": None, "proxy_user": None, "env_vars": None, "spark_binary": None, "properties_file": None,
    "yarn_queue": None, "deploy_mode": None,
}


class ColaCheckOperator(ColaLineageMixin, BaseOperator, BranchMixIn):
    """Check a source against Cola rules on Spark, push the results to XCom, and gate the DAG.

    The rules and the source are validated in the worker before anything is submitted: a
    malformed rule fails the task at once with the engine's message. The job runs through
    ``SparkSubmitHook`` with ``cola_core`` shipped as a zip, so the cluster needs only Spark.

    XCom ``return_value`` is ``{"severity", "passed", "counts", "results"}``. With ``branch``,
    the task follows the tasks mapped to the worst severity and skips the other downstream
    tasks (all of them when that severity is not in the mapping). Without it, ``on_failure``
    decides what a failed check does.

    Args:
        rules: a list of rule dicts, or the path of a JSON/YAML rules file (relative paths
            are taken from the DAG file's folder). (templated)
        source: ``{"path": ..., "format": "parquet", "options": {...}}``, ``{"table": ...}``
            or ``{"query": "SELECT ..."}``. (templated)
        conn_id: the Spark connection, e.g. ``{"conn_type": "spark", "host": "local[2]"}``.
        on_failure: without ``branch``: ``fail`` (default) fails the task, after XCom and
            the report are written, without retrying; ``warn`` and ``skip`` let it succeed
            and log the failed checks (as a warning, or as information).
        branch: ``{"pass": ..., "warn": ..., "fail": ...}``, each a task id or a list of them.
        on_quality: an Airflow notifier (a ``BaseNotifier`` such as ``SmtpNotifier(...)``), a
            callable taking the task context, or a list of them: fired when the run's worst
            severity reaches ``on_quality_severity``, after XCom is pushed and before the task
            branches or fails. The task context they get also holds ``cola``, the run's summary
            (``airflow_provider_cola.alerts.alert_summary``), which a notifier's templated
            fields can use (``{{ cola.severity }}``). An alert that fails is logged as a
            warning; the run's outcome stands.
        on_quality_severity: ``fail`` (default) fires the alerts when a check failed; ``warn``
            when one warned or failed.
        report: where to write the report, one row per result: an output config
            ``{"path" | "table", "format", "mode", "partition_by", "options"}`` or a parquet
            path. (templated)
        pipeline: the pipeline name written in the report; ``<dag_id>.<task_id>`` by default.
            (templated)
        history: a history store, an output config or a plain path (a parquet folder): one
            row per result is appended to it on every run, with the task's DAG, task and run
            ids. (templated)
        dataset: with ``history``, what was checked; the source's path, table or query hash
            by default. (templated)
        html_report: a local file the Spark driver writes the run's HTML report to (see
            ``cola --html``); with ``history``, with each rule's trend. The task pushes its path
            and SHA-256 under the XCom key ``cola_report``, and the "Cola report" extra link opens it
            through the provider's plugin. Refused in cluster deploy mode, where the driver
            would write it on its cluster node: use client deploy mode or a ``spark_connect``
            connection. A page that cannot be written is a warning, not a failed task. (templated)
        samples: keep up to this many offending rows of each failed row rule in the results
            (one extra Spark job); the failure message shows them. 0 (default) keeps none.
        allow_external_access: let SQL text in the rules call JVM functions (``reflect``...)
            and read storage through path relations (``cola --allow-external-access``). Off
            by default; only for rules whose authors are trusted.
        results_uri: a folder both this worker and the Spark driver can reach, for the
            results file. Needed in cluster deploy mode; in client mode a temporary file is
            used. (templated)
        conf, files, py_files, archives, jars, packages, exclude_packages, repositories,
        driver_class_path, total_executor_cores, executor_cores, executor_memory,
        driver_memory, num_executors, keytab, principal, proxy_user, name, env_vars,
        verbose, spark_binary, properties_file, yarn_queue, deploy_mode,
        status_poll_interval: passed to ``SparkSubmitHook`` as for ``SparkSubmitOperator``.
            ``py_files`` is added to the ``cola_core`` zip. (conf, files, py_files,
            archives, jars, packages, driver_class_path, env_vars, name, keytab, principal,
            proxy_user and properties_file are templated.)
    """

    template_fields: Sequence[str] = (
        "rules",
        "source",
        "report",
        "pipeline",
        "history",
        "dataset",
        "html_report",
        "results_uri",
        *_SUBMIT_TEMPLATE_FIELDS,
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"rules": "json", "source": "json", "conf": "json"}
    ui_color = "#f5d76e"
    operator_extra_links = (ColaReportLink(),)
    # Tells the scheduler that this task may skip its downstream tasks (as branch operators do).
    inherits_from_skipmixin = True

    command: ClassVar[Command] = "check"

    def __init__(
        self,
        *,
        rules: list[dict[str, Any]] | str,
        source: dict[str, Any],
        conn_id: str = "spark_default",
        on_failure: OnFailure = "fail",
        branch: Mapping[Severity, str | list[str]] | None = None,
        on_quality: AlertTarget | Sequence[AlertTarget] | None = None,
        on_quality_severity: AlertSeverity = "fail",
        report: dict[str, Any] | str | None = None,
        pipeline: str | None = None,
        history: dict[str, Any] | str | None = None,
        dataset: str | None = None,
        html_report: str | None = None,
        results_uri: str | None = None,
        samples: int = 0,
        allow_external_access: bool = False,
        conf: dict[str, Any] | None = None,
        files: str | None = None,
        py_files: str | None = None,
        archives: str | None = None,
        jars: str | None = None,
        packages: str | None = None,
        exclude_packages: str | None = None,
        repositories: str | None = None,
        driver_class_path: str | None = None,
        total_executor_cores: int | None = None,
        executor_cores: int | None = None,
        executor_memory: str | None = None,
        driver_memory: str | None = None,
        num_executors: int | None = None,
        keytab: str | None = None,
        principal: str | None = None,
        proxy_user: str | None = None,
        name: str | None = None,
        env_vars: dict[str, Any] | None = None,
        verbose: bool = False,
        spark_binary: str | None = None,
        properties_file: str | None = None,
        yarn_queue: str | None = None,
        deploy_mode: str | None = None,
        status_poll_interval: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # Only stored (and the cheap, static arguments checked): DAG parsing stays fast.
        self.rules = rules
        self.source = source
        self.conn_id = conn_id
        self.on_failure = checked_on_failure(on_failure)
        self.branch = checked_branch(branch)
        self.on_quality = checked_on_quality(on_quality)
        self.on_quality_severity = checked_on_quality_severity(on_quality_severity)
        self.report = report
        self.pipeline = pipeline
        self.history = history
        self.dataset = dataset
        self.html_report = html_report
        self.results_uri = results_uri
        self.samples = checked_samples(samples)
        self.allow_external_access = checked_switch(allow_external_access, "allow_external_access")
        self.conf = conf
        self.files = files
        self.py_files = py_files
        self.archives = archives
        self.jars = jars
        self.packages = packages
        self.exclude_packages = exclude_packages
        self.repositories = repositories
        self.driver_class_path = driver_class_path
        self.total_executor_cores = total_executor_cores
        self.executor_cores = executor_cores
        self.executor_memory = executor_memory
        self.driver_memory = driver_memory
        self.num_executors = num_executors
        self.keytab = keytab
        self.principal = principal
        self.proxy_user = proxy_user
        self.name = name
        self.env_vars = env_vars
        self.verbose = verbose
        self.spark_binary = spark_binary
        self.properties_file = properties_file
        self.yarn_queue = yarn_queue
        self.deploy_mode = deploy_mode
        self.status_poll_interval = status_poll_interval
        self._hook: ColaSubmitHook | None = None
        self._connect_session: SparkSession | None = None
        # Set by on_kill: a kill raises nothing in the task (the Task SDK's SIGTERM handler only
        # calls on_kill), so what the interrupted Spark work raises next must not pass for an
        # ordinary failure, nor a finished run go on to branch or succeed.
        self._killed = False

    def render_template_fields(self, context: Context, jinja_env: Any = None) -> None:
        """Render, then register secret-named values with the masker.

        Done here, not in ``execute``: the runner stores the rendered fields (the Rendered
        Template view) right after rendering, and a value must be known to the masker by then.
        """
        super().render_template_fields(context, jinja_env)
        self._mask_secrets()

    def _mask_secrets(self) -> dict[str, str]:
        # Secret-named numbers become text first: the masker redacts text only.
        self.conf = secrets_as_text(self.conf)
        self.env_vars = secrets_as_text(self.env_vars)
        source = self.source if isinstance(self.source, Mapping) else {}
        options = secrets_as_text(source.get("options"))
        if options is not source.get("options"):
            self.source = source = {**source, "options": options}
        return mask_sensitive_settings(self.conf, self.env_vars, options if isinstance(options, Mapping) else None)

    def execute(self, context: Context) -> Mapping[str, Any]:
        """Validate, submit, read the results, push them to XCom, then branch or fail."""
        block = load_rules(
            self.rules,
            base_dir=dag_folder(context.get("dag") or self.get_dag()),
            allow_external_access=self.allow_external_access,
        )
        source = checked_source(self.source, allow_external_access=self.allow_external_access)
        outputs = {**self._job_outputs(), **run_job_fields(self.history, self.dataset, context, None)}
        page = checked_report_path(self.html_report)
        outputs["html"] = None if page is None else str(page)
        remote = self._connect_url()
        if remote is not None:
            summary, written = self._run_as_connect_client(remote, block, source, outputs)
            self._stop_if_killed()
            return self._settle(context, summary, push_report(context, page if written else None))
        deploy_mode = self._resolved_deploy_mode()
        if deploy_mode == "cluster" and page is not None:
            # The driver would write the page on its cluster node, where this worker can
            # neither remove an earlier run's page nor serve it: the link would show nothing,
            # or an old page as this run's.
            raise ColaConfigError(
                "html_report cannot be used in cluster deploy mode: the driver runs on a cluster node and "
                "would write the page there, where this worker can neither remove an earlier page nor serve "
                "it; use client deploy mode, or a spark_connect connection (the page is then written in "
                "this worker)"
            )
        if deploy_mode == "cluster" and not self.results_uri:
            raise ColaConfigError(
                "cluster deploy mode runs the driver on the cluster, so the results cannot come back "
                "through a local file: set results_uri to a folder both this worker and the driver reach"
            )
        # Again: execute() may be called without rendering (a test calling it directly).
        secrets = self._mask_secrets()
        with tempfile.TemporaryDirectory(prefix="cola-") as workdir:
            results = ResultsFile(workdir, self.results_uri)
            rules, shipped = rules_file(block, Path(workdir), deploy_mode)
            job = self._job_spec(rules, source, results.target, outputs)
            self._hook = self._make_hook(job.to_argv(), shipped, secrets)
            # The local master reads this machine's files: a missing one fails before any JVM.
            checked_local_path(source, self._hook.master)
            self._submit(self._hook, results)
            summary = results.read(
                split=self.command == "split", checks=block.checks, log_tail=self._hook.log_tail
            )
        if page is not None and not page.is_file():
            # The driver removed the earlier page and warned why it wrote none (in its log above).
            self.log.warning("The HTML report was not written: %s is missing after the run", page)
        self._stop_if_killed()
        return self._settle(context, summary, push_report(context, page))

    def _settle(self, context: Context, summary: Mapping[str, Any], report_url: str | None) -> Mapping[str, Any]:
        """Push the results, alert, then branch, fail or log (``_outcome.settle``)."""
        return settle(
            self, context, summary, on_failure=self.on_failure, branch=self.branch, on_quality=self.on_quality,
            on_quality_severity=self.on_quality_severity, report_url=report_url,
        )

    def _connect_url(self) -> str | None:
        """With a ``spark_connect`` connection, its URL (it may carry a token: never logged)."""
        try:
            conn = BaseHook.get_connection(self.conn_id)
        except AirflowException:
            return None
        if conn.conn_type != "spark_connect":
            return None
        from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

        given = sorted(name for name, default in _SUBMIT_ONLY.items() if getattr(self, name) != default)
        if given:
            raise ColaConfigError(
                f"{', '.join(given)} only apply to spark-submit; the spark_connect connection {self.conn_id!r} "
                "runs the engine in this worker as a Spark Connect client (Spark settings go in conf)"
            )
        try:
            return SparkConnectHook(self.conn_id).get_connection_url()
        except (ValueError, AttributeError, TypeError) as error:  # no host, or a host with a path
            raise ColaConfigError(f"the spark_connect connection {self.conn_id!r} has no usable URL: {error}") from None

    def _run_as_connect_client(
        self, remote: str, block: RuleBlock, source: SourceSpec, outputs: Mapping[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """Run the job in this process as a client of the Spark Connect server ``remote``.

        Returns:
            The results summary, and whether this run's HTML report was written.

        Raises:
            ColaJobRefused: the engine refused the source, an output or a rule on the data.
            ColaJobError: Spark failed (the server cannot be reached, a query crashed).
        """
        from cola_core.report import render_table
        from cola_core.runner import load_job, run_job
        from cola_core.session import spark_session, stop_session

        job = load_job(self._job_spec(tuple(block.rules), source, None, outputs), checks=block.checks)
        page = None if job.spec.html is None else Path(job.spec.html)
        if page is not None:  # an earlier run's page must never pass for this run's
            page.unlink(missing_ok=True)
        self.log.info("Cola runs in this worker as a Spark Connect client of %s", urlsplit(remote).netloc)
        written = False
        try:
            spark, started_here = spark_session(remote, (self.conf or {}).items())
            self._connect_session = spark
            try:
                outcome = run_job(job, spark)
                if page is not None:  # in this process, as the driver does for cola --html
                    written = self._write_report(page, spark, job.spec, outcome)
            finally:
                self._connect_session = None
                if started_here:
                    stop_session(spark)
        except Exception as error:
            self._stop_if_killed(error)  # what interruptAll made the running query raise
            # As `cola` says it (exit 2): a rule, source or output error, or SQL Spark refuses.
            refusal = refusal_of(error)
            if refusal is not None:
                raise refusal from error
            raise ColaJobError(f"the Cola job over Spark Connect failed: {first_line(error)}") from error
        table = render_table(outcome.results, valid_count=outcome.valid_count, invalid_count=outcome.invalid_count)
        self.log.info("Cola results:\n%s", table)
        return outcome.summary, written

    def _write_report(self, page: Path, spark: SparkSession, spec: JobSpec, outcome: JobOutcome) -> bool:
        """Write the run's HTML report; whether it was written.

        The run is finished (its outputs published, its history appended): a page that cannot
        be built or written, whatever the reason (a history store that cannot be read for the
        trends, a bug in the page), is a warning, as for ``cola --html``. Failing the task
        would have it retried, and the retry would append a second history row for the same
        run. A timeout still stops the task: ``AirflowTaskTimeout`` is a BaseException. A kill
        raises nothing: :meth:`on_kill` interrupts the session, so the page's query fails with
        an ordinary exception, which must not pass for a page that merely could not be built.

        Raises:
            AirflowTaskTerminated: the task was killed (:meth:`on_kill`) while the page was built.
        """
        try:
            write_report(page, spark, spec, outcome)
        except Exception as error:
            self._stop_if_killed(error)
            self.log.warning("The HTML report was not written: %s", first_line(error), exc_info=True)
            return False
        return True

    def _stop_if_killed(self, error: BaseException | None = None) -> None:
        """Stop the task when it was killed: nothing after a kill may record a report, push the
        results, branch or let the task succeed.

        Raises:
            AirflowTaskTerminated: :meth:`on_kill` was called (``error``, what the interrupted
                work raised, is its cause); the Task SDK fails the task without a retry.
        """
        if self._killed:
            raise AirflowTaskTerminated("the Cola task was killed: its run was interrupted") from error

    def _submit(self, hook: ColaSubmitHook, results: ResultsFile) -> None:
        with launcher_environment(hook.binary, hook.master, self.env_vars, self.conf) as changes:
            if changes:
                self.log.info("spark-submit runs with %s", changes)
            try:
                hook.submit(str(_job_entry_path()))
            except ColaJobError:
                # Where spark-submit's exit status is not the job's (cluster deploy mode), the
                # results file still says that the job refused its inputs.
                refusal = results.refusal()
                # Whatever a failed job left (a refusal, a partial file) is read once, never again.
                results.discard()
                if refusal is not None:
                    raise ColaJobRefused(refused_message(refusal)) from None  # its tail is not the news
                raise

    def on_kill(self) -> None:
        """Stop the Spark application (and spark-submit) through the hook; over Spark Connect,
        interrupt what this task's session runs on the server. Either way, mark the task as
        killed, so that it stops instead of settling (:meth:`_stop_if_killed`)."""
        self._killed = True
        if self._hook is not None:
            self._hook.on_kill()
        session = self._connect_session
        if session is not None:
            session.interruptAll()

    def _job_spec(
        self, rules: str | tuple[Mapping[str, Any], ...], source: SourceSpec, results: str | None,
        outputs: Mapping[str, Any],
    ) -> JobSpec:
        """The job this task submits: every operator argument that reaches the engine goes here.

        Args:
            rules: the ``--rules`` path the driver reads (see ``rules_file``), or the rules
                themselves for a job run in this process (Spark Connect).
            source: the source, validated (``checked_source``).
            results: where the job writes its results file (None in this process).
            outputs: the job's outputs, validated (:meth:`_job_outputs`).

        Raises:
            ColaConfigError: the engine refuses the job as specified.
        """
        try:
            return JobSpec(
                command=self.command,
                rules=rules,
                source=source,
                results=results,
                pipeline=self.pipeline or f"{self.dag_id}.{self.task_id}",
                samples=self.samples,
                allow_external_access=self.allow_external_access,
                # Exit 0 once the results file is written, even when checks failed: the hook
                # treats any non-zero exit as a crash, and the decision is made from the file.
                fail_exit_code=0,
                **outputs,
            )
        except ColaError as error:
            raise ColaConfigError(f"invalid Cola job: {error}") from error

    def _job_outputs(self) -> dict[str, Any]:
        """The ``JobSpec`` fields of what the job writes besides its results, each output checked.

        Checked before anything else is resolved (the deploy mode, the results file), so a
        malformed output is the error reported.

        Raises:
            ColaConfigError: an output config is malformed.
        """
        return {"report": None if self.report is None else checked_output(self.report, "report")}

    def _resolved_deploy_mode(self) -> str:
        # Resolved as the hook does (argument, then the connection's extra), before the hook
        # exists, because the arguments it is built with depend on it.
        if self.deploy_mode:
            return self.deploy_mode
        try:
            extra = BaseHook.get_connection(self.conn_id).extra_dejson
        except AirflowException:
            return "client"
        return extra.get("deploy-mode") or "client"

    def _make_hook(self, arguments: list[str], shipped: list[str], secrets: Mapping[str, str]) -> ColaSubmitHook:
        py_files = ",".join(filter(None, [str(_py_files_zip()), self.py_files]))
        files = ",".join(filter(None, [*shipped, self.files]))
        return ColaSubmitHook(
            conf=self.conf,
            conn_id=self.conn_id,
            files=files or None,
            py_files=py_files,
            archives=self.archives,
            driver_class_path=self.driver_class_path,
            jars=self.jars,
            packages=self.packages,
            exclude_packages=self.exclude_packages,
            repositories=self.repositories,
            total_executor_cores=self.total_executor_cores,
            executor_cores=self.executor_cores,
            executor_memory=self.executor_memory,
            driver_memory=self.driver_memory,
            keytab=self.keytab,
            principal=self.principal,
            proxy_user=self.proxy_user,
            name=self.name or f"cola-{self.dag_id}-{self.task_id}",
            num_executors=self.num_executors,
            status_poll_interval=self.status_poll_interval,
            application_args=arguments,
            env_vars=self.env_vars,
            verbose=self.verbose,
            spark_binary=self.spark_binary,
            properties_file=self.properties_file,
            yarn_queue=self.yarn_queue,
            deploy_mode=self.deploy_mode,
            secrets=secrets,
        )


class ColaSplitOperator(ColaCheckOperator):
    """Check a source and write its rows to a valid and an invalid (quarantine) output.

    Takes every argument of :class:`ColaCheckOperator`, and branches or fails the same way.
    Its XCom adds ``valid_count`` and ``invalid_count``, counted during the writes.

    Args:
        valid_output: where the rows that broke no row-level rule go: an output config or a
            parquet path. (templated)
        invalid_output: where the other rows go, with the input's columns. (templated)
        annotate: the name of an ``array<string>`` column added to the invalid rows, holding
            the codes of the rules each row broke. (templated)
        quarantine_key: columns naming an entity (``["order_id"]``): every row sharing a key
            with a rejected row is rejected too, so an order is never half loaded.
        annotate_valid: with ``annotate``, write its column (NULL) to the valid rows too,
            which spares the job a copy of them (``cola split --annotate-valid``).
    """

    template_fields: Sequence[str] = (*ColaCheckOperator.template_fields, "valid_output", "invalid_output", "annotate")
    command: ClassVar[Command] = "split"

    def __init__(
        self,
        *,
        valid_output: dict[str, Any] | str,
        invalid_output: dict[str, Any] | str,
        annotate: str | None = None,
        quarantine_key: list[str] | None = None,
        annotate_valid: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.valid_output = valid_output
        self.invalid_output = invalid_output
        self.annotate = annotate
        self.quarantine_key = quarantine_key
        self.annotate_valid = checked_switch(annotate_valid, "annotate_valid")

    def _job_outputs(self) -> dict[str, Any]:
        return {
            **super()._job_outputs(),
            **split_job_fields(
                self.valid_output, self.invalid_output, self.annotate, self.quarantine_key, self.annotate_valid
            ),
        }


def _py_files_zip() -> Path:
    from cola_core.shipping import py_files_zip

    return py_files_zip()


def _job_entry_path() -> Path:
    from cola_core.shipping import job_entry_path

    return job_entry_path()

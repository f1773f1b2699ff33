"""``ColaCheckOperator`` and ``ColaSplitOperator``: the Cola job submitted with ``SparkSubmitHook``.

Both validate the rules and the source in the worker, describe the job as one
``cola_core.job.spec.JobSpec`` (:meth:`ColaCheckOperator._job_spec`), run it (``operators/_runs.py``:
``cola_core``'s job entry point submitted with that job's command line and ``cola_core`` shipped
as a ``--py-files`` zip, then the results file read back; or, with a ``spark_connect``
connection, the engine run in this worker), and settle as every Cola task does
(``_lifecycle.TaskLifecycle.settle``): push the results to XCom, then branch on the worst
severity or apply ``on_failure``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator, BranchMixIn

from airflow_provider_cola._lifecycle import ColaTask, job_spec
from airflow_provider_cola._lineage import ColaLineageMixin
from airflow_provider_cola._outcome import OnFailure, checked_switch
from airflow_provider_cola._rules import checked_output, checked_source, run_job_fields, split_job_fields
from airflow_provider_cola.alerts import AlertSeverity, AlertTarget
from airflow_provider_cola.links import ColaReportLink, checked_report_path
from airflow_provider_cola.operators._runs import ConnectRun, OperatorRun, SparkSubmitRun, connect_url
from airflow_provider_cola.operators._submit_args import SUBMIT_ARGUMENTS, SUBMIT_TEMPLATE_FIELDS
from cola_core import exit_status

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_provider_cola.operators._spark_submit import ColaSubmitHook
    from cola_core.job.spec import Command, JobSpec
    from cola_core.language.result import Severity
    from cola_core.storage.specs import SourceSpec

__all__ = ["ColaCheckOperator", "ColaSplitOperator"]


class ColaCheckOperator(ColaTask, ColaLineageMixin, BaseOperator, BranchMixIn):
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
        source: ``{"path": ..., "format": "parquet", "options": {...}}`` (with ``"schema":
            "id INT, ..."`` to give the columns instead of inferring them, and for
            ``ColaSplitOperator`` ``"stream": True``), ``{"table": ...}`` or ``{"query":
            "SELECT ..."}``. (templated)
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
        conf: Spark configuration, ``{"spark.executor.memory": "2g", ...}``; over Spark
            Connect, applied to the session. (templated)
        files: comma-separated files to place in each executor's working folder. (templated)
        py_files: comma-separated ``.zip``, ``.egg`` or ``.py`` files for the Python path,
            added to the ``cola_core`` zip the job ships. (templated)
        archives: comma-separated archives to extract in each executor's working folder.
            (templated)
        jars: comma-separated jars for the driver and executor class paths. (templated)
        packages: comma-separated Maven coordinates of jars to include. (templated)
        exclude_packages: comma-separated Maven coordinates to exclude from ``packages``.
        repositories: comma-separated extra repositories to search for ``packages``.
        driver_class_path: extra class path entries for the driver. (templated)
        total_executor_cores: the cores of all executors (standalone and Mesos only).
        executor_cores: the cores per executor (standalone and YARN only).
        executor_memory: the memory per executor, such as ``2g``.
        driver_memory: the driver's memory, such as ``1g``.
        num_executors: the number of executors to launch (YARN).
        env_vars: environment variables for spark-submit (and, in cluster deploy mode on
            YARN or Kubernetes, for the driver). (templated)
        name: the Spark application's name; ``cola-<dag_id>-<task_id>`` by default.
            (templated)
        keytab: the keytab file for Kerberos. (templated)
        principal: the Kerberos principal of ``keytab``. (templated)
        proxy_user: the user to impersonate when submitting. (templated)
        verbose: pass ``--verbose`` to spark-submit.
        spark_binary: the spark-submit command to run, if not the connection's.
        properties_file: a file of extra Spark properties (``spark-defaults.conf`` by
            default). (templated)
        yarn_queue: the YARN queue to submit to (overrides the connection's ``queue``).
        deploy_mode: ``client`` or ``cluster`` (overrides the connection's ``deploy-mode``).
        status_poll_interval: seconds between polls of the driver's status in cluster
            deploy mode on a standalone cluster.
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
        *SUBMIT_TEMPLATE_FIELDS,
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"rules": "json", "source": "json", "conf": "json"}
    ui_color = "#f5d76e"
    operator_extra_links = (ColaReportLink(),)
    # Tells the scheduler that this task may skip its downstream tasks (as branch operators do).
    inherits_from_skipmixin = True

    command: ClassVar[Command] = "check"
    _secret_settings: ClassVar[Sequence[str]] = ("conf", "env_vars", "source.options")

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
        env_vars: dict[str, Any] | None = None,
        name: str | None = None,
        keytab: str | None = None,
        principal: str | None = None,
        proxy_user: str | None = None,
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
        self.source = source
        self._take_task_arguments(locals())
        self.report = report
        self.pipeline = pipeline
        self.history = history
        self.dataset = dataset
        self.html_report = html_report
        self.results_uri = results_uri
        # The spark-submit arguments, as declared once in SUBMIT_ARGUMENTS (the signature above
        # spells them out for Airflow and for users; a test checks that the two agree).
        arguments = locals()
        for argument in SUBMIT_ARGUMENTS:
            setattr(self, argument.name, arguments[argument.name])
        self._run: OperatorRun | None = None

    @property
    def _hook(self) -> ColaSubmitHook | None:
        """The spark-submit hook of the running job, once built."""
        return None if self._run is None else self._run.hook

    def execute(self, context: Context) -> Mapping[str, Any]:
        """Validate, run the job, read the results, push them to XCom, then branch or fail."""
        block = self._lifecycle.rules(context, self.rules, allow_external_access=self.allow_external_access)
        source = checked_source(self.source, allow_external_access=self.allow_external_access)
        outputs = {**self._job_outputs(), **run_job_fields(self.history, self.dataset, context, None)}
        page = checked_report_path(self.html_report)
        outputs["html"] = None if page is None else str(page)
        remote = connect_url(self)
        self._run = SparkSubmitRun(self) if remote is None else ConnectRun(self, remote)
        summary, written = self._run.run(block, source, outputs, page)
        return self._lifecycle.settle(context, summary, written)

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
        return job_spec(
            command=self.command,
            rules=rules,
            source=source,
            results=results,
            pipeline=self.pipeline or f"{self.dag_id}.{self.task_id}",
            samples=self.samples,
            allow_external_access=self.allow_external_access,
            # Exit OK once the results file is written, even when checks failed: the hook
            # treats any non-zero exit as a crash, and the decision is made from the file.
            fail_exit_code=exit_status.OK,
            **outputs,
        )

    def _job_outputs(self) -> dict[str, Any]:
        """The ``JobSpec`` fields of what the job writes besides its results, each output checked.

        Checked before anything else is resolved (the deploy mode, the results file), so a
        malformed output is the error reported.

        Raises:
            ColaConfigError: an output config is malformed.
        """
        return {"report": None if self.report is None else checked_output(self.report, "report")}


class ColaSplitOperator(ColaCheckOperator):
    """Check a source and write its rows to a valid and an invalid (quarantine) output.

    Takes every argument of :class:`ColaCheckOperator`, and branches or fails the same way.
    Its XCom adds ``valid_count`` and ``invalid_count``, counted during the writes.

    A streaming source (``{"path": ..., "format": "json", "stream": True, "schema": "id INT,
    ..."}``) with a ``checkpoint`` splits only the files that arrived since the last run,
    each micro-batch published exactly once (``Cola().split_stream`` with ``availableNow``):
    its XCom holds one result per rule (its worst over the batches), the counts summed, and
    ``stream``: ``{"batch_count", "batches"}``, one line per batch.

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
        checkpoint: for a streaming source, and only for one: the folder where the stream
            remembers which files it has split, kept from one run to the next, on storage
            the Spark driver reaches (``cola split --checkpoint``). (templated)
    """

    template_fields: Sequence[str] = (
        *ColaCheckOperator.template_fields, "valid_output", "invalid_output", "annotate", "checkpoint",
    )
    command: ClassVar[Command] = "split"

    def __init__(
        self,
        *,
        valid_output: dict[str, Any] | str,
        invalid_output: dict[str, Any] | str,
        annotate: str | None = None,
        quarantine_key: list[str] | None = None,
        annotate_valid: bool = False,
        checkpoint: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.checkpoint = checkpoint
        self.valid_output = valid_output
        self.invalid_output = invalid_output
        self.annotate = annotate
        self.quarantine_key = quarantine_key
        self.annotate_valid = checked_switch(annotate_valid, "annotate_valid")

    def _job_outputs(self) -> dict[str, Any]:
        return {
            **super()._job_outputs(),
            **split_job_fields(
                self.valid_output, self.invalid_output, self.annotate, self.quarantine_key, self.annotate_valid,
                self.checkpoint,
            ),
        }

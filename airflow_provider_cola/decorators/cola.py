"""``@cola_check`` (also ``@task.cola_check``): run Cola rules in the task's own process.

The decorated function receives ``spark`` (a SparkSession, as with ``@task.pyspark``) and
returns the DataFrame to check. The rules run in-process, and the task pushes the same XCom
dict as ``ColaCheckOperator``, then branches or applies ``on_failure`` in the same way. Given
``valid_output`` and ``invalid_output``, the task splits the DataFrame as
``ColaSplitOperator`` splits its source: through the engine's one split path (``run_job``
with a ``split`` job), with ``valid_count`` and ``invalid_count`` in its XCom.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import BaseHook, BranchMixIn
from airflow.sdk.bases.decorator import DecoratedOperator, TaskDecorator, task_decorator_factory

from airflow_provider_cola._lifecycle import ColaTask, job_spec
from airflow_provider_cola._lineage import ColaLineageMixin
from airflow_provider_cola._outcome import OnFailure, checked_switch
from airflow_provider_cola._rules import RuleBlock, run_job_fields, split_job_fields
from airflow_provider_cola._spark_target import master_url
from airflow_provider_cola.alerts import AlertSeverity, AlertTarget
from airflow_provider_cola.errors import ColaConfigError
from airflow_provider_cola.links import ColaReportLink, checked_report_path

if TYPE_CHECKING:
    from airflow.sdk import Context
    from pyspark.sql import DataFrame, SparkSession

    from cola_core.job.spec import JobSpec
    from cola_core.language.result import Severity

__all__ = ["cola_check"]

SPARK_ARGUMENT = "spark"


class _ColaCheckDecoratedOperator(ColaTask, ColaLineageMixin, DecoratedOperator, PythonOperator, BranchMixIn):
    """The operator behind ``@cola_check``; see :func:`cola_check` for the arguments."""

    custom_operator_name = "@task.cola_check"
    template_fields: Sequence[str] = (
        "templates_dict", "op_args", "op_kwargs", "rules", "conf", "valid_output", "invalid_output", "annotate",
        "checkpoint", "history", "dataset", "html_report",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {
        "templates_dict": "json", "op_args": "py", "op_kwargs": "py", "rules": "json", "conf": "json",
        "valid_output": "json", "invalid_output": "json",
    }
    inherits_from_skipmixin = True
    operator_extra_links = (ColaReportLink(),)

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: Collection[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        given = _cola_check_arguments(kwargs)
        self._take_task_arguments(given)
        self.conf = given["conf"]
        _check_split_arguments(
            given["valid_output"], given["invalid_output"], given["annotate"], given["quarantine_key"],
            given["checkpoint"],
        )
        self.valid_output = given["valid_output"]
        self.invalid_output = given["invalid_output"]
        self.annotate = given["annotate"]
        self.quarantine_key = given["quarantine_key"]
        self.annotate_valid = checked_switch(given["annotate_valid"], "annotate_valid")
        self.checkpoint = given["checkpoint"]
        self.history = given["history"]
        self.dataset = given["dataset"]
        self.html_report = given["html_report"]
        self._page: Path | None = None
        python_callable.__signature__ = _with_injected_spark(inspect.signature(python_callable))  # type: ignore[attr-defined]
        self._takes_spark = any(
            p.name == SPARK_ARGUMENT or p.kind is inspect.Parameter.VAR_KEYWORD
            for p in python_callable.__signature__.parameters.values()  # type: ignore[attr-defined]
        )
        self._block: RuleBlock | None = None
        self._job: JobSpec | None = None
        super().__init__(
            kwargs_to_upstream={"python_callable": python_callable, "op_args": op_args, "op_kwargs": op_kwargs},
            python_callable=python_callable,
            op_args=op_args,
            op_kwargs=op_kwargs,
            **kwargs,
        )

    def execute(self, context: Context) -> Mapping[str, Any]:
        """Validate, call the function, check (or split) its DataFrame, push the results to XCom,
        then branch or fail.

        What the engine refuses (a rule naming a column the DataFrame does not have, a source
        or output error, a query Spark refused to analyse) is not retried, as the operators
        refuse it; a crash (a lost executor, a Spark Connect server out of reach) is.
        """
        # Again: execute() may be called without rendering (a test calling it directly).
        self._mask_secrets()
        # The rules, the outputs and the job are checked before any Spark session starts.
        self._block = self._lifecycle.rules(context, self.rules, allow_external_access=self.allow_external_access)
        # The function's DataFrame has no source to name it by: the task does.
        run_fields = run_job_fields(self.history, self.dataset, context, f"{self.dag_id}.{self.task_id}")
        self._job = self._job_spec(self._block, {**self._job_outputs(), **run_fields})
        self._page = checked_report_path(self.html_report)
        summary = super().execute(context)
        return self._lifecycle.settle(context, summary, self._page)

    def execute_callable(self) -> dict[str, Any]:
        from cola_core.job.runner import load_job

        assert self._block is not None and self._job is not None, "execute() loads the rules and the job first"
        # The rules were parsed by load_rules, with the job's engine settings: not again.
        job = load_job(self._job, checks=self._block.checks, contract_gaps=self._block.contract_gaps)
        run = self._lifecycle.run_in_process(job, self._session, page=self._page, frame=self._dataframe)
        if not run.page_written:
            self._page = None  # so that execute() pushes no cola_report
        return run.outcome.summary

    def _dataframe(self, spark: SparkSession) -> DataFrame:
        """Call the function (with ``spark`` when it takes it); the DataFrame it returns."""
        from pyspark.sql import DataFrame

        if self._takes_spark:
            self.op_kwargs = {**self.op_kwargs, SPARK_ARGUMENT: spark}
        df = super().execute_callable()
        if not isinstance(df, DataFrame):
            raise ColaConfigError(f"a @cola_check function must return a Spark DataFrame, got {type(df).__name__}")
        return df

    def _job_spec(self, block: RuleBlock, outputs: Mapping[str, Any]) -> JobSpec:
        """The job run on the function's DataFrame: every argument that reaches the engine goes here.

        Args:
            block: the rules, validated (``load_rules``).
            outputs: the split's outputs, validated (:meth:`_job_outputs`), and the run's fields
                (`_rules.run_job_fields`); the command is a split when there are outputs.

        Raises:
            ColaConfigError: the engine refuses the job as specified.
        """
        return job_spec(
            command="split" if "valid_output" in outputs else "check",
            rules=tuple(block.rules),
            samples=self.samples,
            allow_external_access=self.allow_external_access,
            **outputs,
        )

    def _job_outputs(self) -> dict[str, Any]:
        """The ``JobSpec`` fields of the split, each output checked as ``ColaSplitOperator`` does.

        Empty without ``valid_output`` (then there is no ``invalid_output`` either: ``__init__``
        refuses one without the other).

        Raises:
            ColaConfigError: an output config is malformed.
        """
        if self.valid_output is None or self.invalid_output is None:
            return {}
        return split_job_fields(
            self.valid_output, self.invalid_output, self.annotate, self.quarantine_key, self.annotate_valid,
            self.checkpoint,
        )

    def _session(self) -> tuple[SparkSession, bool]:
        """The session to use, and whether this task started it (and so must stop it).

        A session already active in this process is reused and left running. Otherwise
        ``cola_core.storage.session.spark_session`` starts one with the connection's master and
        ``spark.*`` extras, then ``conf``; for a local or standalone master its Python workers
        run this interpreter, unless ``spark.pyspark.python`` or ``PYSPARK_PYTHON`` says otherwise.
        Spark is quiet as in the operators (WARN, no progress bar, unless ``conf`` says
        otherwise), and what the JVM writes to stderr goes to the task log at its own level.
        """
        from pyspark.sql import SparkSession

        from cola_core.storage.session import spark_session

        active = SparkSession.getActiveSession()
        if active is not None:
            # spark_session would return it too, but the connection is not even read then.
            return active, False
        master, settings = self._connection_settings()
        settings.update(self.conf or {})
        return spark_session(
            master, settings.items(), app_name=f"{self.dag_id}-{self.task_id}", jvm_log=self._log_jvm_line
        )

    def _log_jvm_line(self, level: int, line: str) -> None:
        """Log one line of the JVM's stderr at its own level (``jvm_log`` of ``spark_session``).

        The task runner logs a task's stderr as errors, line by line; so Spark's warnings and
        the JVM's start-up notice came out as errors on every run, even a passing one.
        """
        self.log.log(level, line)

    def _connection_settings(self) -> tuple[str, dict[str, Any]]:
        """The master URL and the ``spark.*`` settings of ``conn_id`` (``local[*]`` without one)."""
        if not self.conn_id:
            return "local[*]", {}
        conn = BaseHook.get_connection(self.conn_id)
        if conn.conn_type == "spark_connect":
            from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

            return SparkConnectHook(self.conn_id).get_connection_url(), {}
        # As SparkSubmitHook reads it.
        extra = conn.extra_dejson
        return master_url(conn), {key: value for key, value in extra.items() if str(key).startswith("spark.")}


def _check_split_arguments(
    valid_output: Any, invalid_output: Any, annotate: Any, quarantine_key: Any, checkpoint: Any = None
) -> None:
    """Refuse (at DAG parse time) a split given by halves: one output, or options without both.

    Raises:
        ColaConfigError: one of ``valid_output``/``invalid_output`` without the other, or
            ``annotate``/``quarantine_key``/``checkpoint`` without them, or a ``quarantine_key`` that is one
            string instead of a list of column names.
    """
    given = [name for name, value in (("valid_output", valid_output), ("invalid_output", invalid_output))
             if value is not None]
    if len(given) == 1:
        missing = "invalid_output" if given == ["valid_output"] else "valid_output"
        raise ColaConfigError(
            f"a @cola_check split needs both valid_output and invalid_output: {given[0]} is given "
            f"but {missing} is not"
        )
    options = [name for name, value in (("annotate", annotate), ("quarantine_key", quarantine_key),
                                        ("checkpoint", checkpoint)) if value]
    if options and not given:
        raise ColaConfigError(
            f"{' and '.join(options)} only {'applies' if len(options) == 1 else 'apply'} to a split: "
            "give valid_output and invalid_output as well"
        )
    if isinstance(quarantine_key, str):
        raise ColaConfigError(
            f"quarantine_key must be a list of column names, got {quarantine_key!r} "
            f"(for one column: [{quarantine_key!r}])"
        )


def _with_injected_spark(signature: inspect.Signature) -> inspect.Signature:
    """The signature Airflow sees: ``spark`` defaults to None, since it is injected at run time.

    At parse time Airflow binds the call's arguments to the signature, which fails unless
    ``spark`` has a default. When a positional parameter without a default follows it,
    ``spark`` becomes keyword-only (last), so the others keep their order.
    """
    parameters = list(signature.parameters.values())
    names = [p.name for p in parameters]
    if SPARK_ARGUMENT not in names:
        return signature
    index = names.index(SPARK_ARGUMENT)
    spark = parameters[index].replace(default=None)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if spark.kind in positional and any(
        p.kind in positional and p.default is inspect.Parameter.empty for p in parameters[index + 1:]
    ):
        rest = parameters[:index] + parameters[index + 1:]
        before_var_keyword = len([p for p in rest if p.kind is not inspect.Parameter.VAR_KEYWORD])
        rest.insert(before_var_keyword, spark.replace(kind=inspect.Parameter.KEYWORD_ONLY))
        return signature.replace(parameters=rest)
    parameters[index] = spark
    return signature.replace(parameters=parameters)


def _cola_check_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take :func:`cola_check`'s own arguments out of the keywords its operator is built with.

    They are declared once, on ``cola_check``: its signature is the one users, their IDEs and
    the documentation read, and it passes every one of them to the operator by name. A name
    missing here (an operator built by hand) gets ``cola_check``'s default.

    Raises:
        TypeError: no ``rules``, as calling ``cola_check`` without them would.
    """
    taken = {}
    for name, parameter in inspect.signature(cola_check).parameters.items():
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue  # python_callable, the decorated function; **kwargs, the BaseOperator's
        if name not in kwargs and parameter.default is inspect.Parameter.empty:
            raise TypeError(f"@cola_check missing required keyword argument: {name!r}")
        taken[name] = kwargs.pop(name, parameter.default)
    return taken


def cola_check(
    python_callable: Callable[..., Any] | None = None,
    *,
    rules: list[dict[str, Any]] | str,
    conn_id: str | None = None,
    on_failure: OnFailure = "fail",
    branch: Mapping[Severity, str | list[str]] | None = None,
    on_quality: AlertTarget | Sequence[AlertTarget] | None = None,
    on_quality_severity: AlertSeverity = "fail",
    conf: dict[str, Any] | None = None,
    samples: int = 0,
    allow_external_access: bool = False,
    valid_output: dict[str, Any] | str | None = None,
    invalid_output: dict[str, Any] | str | None = None,
    annotate: str | None = None,
    quarantine_key: list[str] | None = None,
    annotate_valid: bool = False,
    checkpoint: str | None = None,
    history: dict[str, Any] | str | None = None,
    dataset: str | None = None,
    html_report: str | None = None,
    **kwargs: Any,
) -> TaskDecorator:
    """Turn a function that returns a DataFrame into a Cola quality-gate task.

    Example::

        @cola_check(rules=[{"type": "not_null", "columns": ["id"]}], on_failure="warn")
        def orders(spark):
            return spark.read.parquet("/data/orders")

    Args:
        python_callable: the function; it may take ``spark`` (the session, injected at run
            time) and must return a Spark DataFrame.
        rules: a list of rule dicts, or the path of a JSON/YAML rules file (relative paths
            are taken from the DAG file's folder). (templated)
        conn_id: a Spark connection (``spark`` or ``spark_connect``) giving the master and its
            ``spark.*`` extras; ``local[*]`` when not given. A session already active in
            the process is used as it is.
        on_failure: ``fail`` (default), ``warn`` or ``skip``, as for ``ColaCheckOperator``.
        branch: ``{"pass": ..., "warn": ..., "fail": ...}``, as for ``ColaCheckOperator``.
        on_quality: notifiers or callables fired when the run's worst severity reaches
            ``on_quality_severity``, with ``cola`` in their context, as for ``ColaCheckOperator``.
        on_quality_severity: ``fail`` (default) or ``warn``, as for ``ColaCheckOperator``.
        conf: Spark settings for the session the task starts. (templated) Values whose key
            names a secret (``spark.myapp.credential``...) are masked in the Rendered Template
            view and the log, as for the operators.
        samples: keep up to this many offending rows of each failed row rule, as for
            ``ColaCheckOperator``.
        allow_external_access: let SQL text in the rules call JVM functions and read storage
            (``Cola(allow_external_access=True)``); only for trusted rules.
        valid_output: with ``invalid_output``, split the DataFrame as ``ColaSplitOperator``
            does: where the rows that broke no row-level rule go, an output config
            ``{"path" | "table", "format", "mode", "partition_by", "options"}`` or a parquet
            path. Giving only one of the two is a ``ColaConfigError``. (templated)
        invalid_output: where the other rows go, with the DataFrame's columns. (templated)
        annotate: for a split, the name of an ``array<string>`` column added to the invalid
            rows, holding the codes of the rules each row broke. (templated)
        quarantine_key: for a split, columns naming an entity (``["order_id"]``): every row
            sharing a key with a rejected row is rejected too.
        annotate_valid: for a split with ``annotate``, write its column (NULL) to the valid
            rows too, which spares a copy of them.
        checkpoint: for a split of a streaming DataFrame (``spark.readStream...``), and only
            for one: the folder where the stream remembers which files it has split. Each run
            splits the files that arrived since the last, each micro-batch published exactly
            once, as ``ColaSplitOperator`` does with a streaming source. (templated)
        history: a history store, as for ``ColaCheckOperator``. (templated)
        dataset: with ``history``, what was checked; ``<dag_id>.<task_id>`` by default, since
            the function's DataFrame has no source to name it by. (templated)
        html_report: a local file this worker writes the run's HTML report to, as for
            ``ColaCheckOperator``: its path and SHA-256 are pushed under the XCom key ``cola_report``,
            and the "Cola report" extra link opens it. (templated)
        **kwargs: any other ``BaseOperator`` argument (``task_id``, ``retries``...).

    Returns:
        A task decorator; calling the decorated function in a DAG creates the task, whose XCom
        ``return_value`` is ``{"severity", "passed", "counts", "results"}``, plus
        ``valid_count`` and ``invalid_count`` for a split, and ``stream`` (its batches) for a
        split of a streaming DataFrame.

    Raises:
        ColaConfigError: (when the decorated function is called in a DAG) a split given by
            halves: one of ``valid_output``/``invalid_output``, or ``annotate`` or
            ``quarantine_key`` without both.
        ValueError: (when the decorated function is called in a DAG) an ``on_failure``,
            ``branch``, ``on_quality`` or ``on_quality_severity`` of the wrong kind.

    When the task runs, what the engine refuses (a rule naming a column the DataFrame does
    not have, a source or an output error, SQL Spark cannot analyse, in the rules or in the
    function's own query) fails it with ``ColaJobRefused``, without a retry, as the operators
    do; a crash (a lost Spark Connect server) is retried.
    """
    kwargs.pop("multiple_outputs", None)  # the result is one dict, pushed as one value
    return task_decorator_factory(
        python_callable=python_callable,
        multiple_outputs=False,
        decorated_operator_class=_ColaCheckDecoratedOperator,
        rules=rules,
        conn_id=conn_id,
        on_failure=on_failure,
        branch=branch,
        on_quality=on_quality,
        on_quality_severity=on_quality_severity,
        conf=conf,
        samples=samples,
        allow_external_access=allow_external_access,
        valid_output=valid_output,
        invalid_output=invalid_output,
        annotate=annotate,
        quarantine_key=quarantine_key,
        annotate_valid=annotate_valid,
        checkpoint=checkpoint,
        history=history,
        dataset=dataset,
        html_report=html_report,
        **kwargs,
    )

"""Running a :class:`~cola_core.job.JobSpec`: read the source, run the rules, write the outputs.

The command line, the operators' Spark job and the decorator all go through
:func:`run_job`. Everything that can be checked without Spark is checked first, by
:func:`load_job`: the rules file, the custom check packages and every rule. Each of them
builds a run's HTML report with :func:`report_page`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cola_core._values import utc_datetime
from cola_core.checks.base import BaseCheck
from cola_core.cola import Cola
from cola_core.errors import ColaError
from cola_core.history import RunInfo, default_dataset, history_trends
from cola_core.job import JobSpec
from cola_core.pages import render_html
from cola_core.registry import load_checks
from cola_core.report import summarise, write_report_table
from cola_core.result import CheckResult
from cola_core.rules_file import read_rules_file
from cola_core.storage import ensure_writable, read_source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["TREND_RUNS", "JobOutcome", "LoadedJob", "load_job", "report_page", "run_job"]

# The runs of each rule whose trend a report draws, with a history.
TREND_RUNS = 20


@dataclass(frozen=True)
class LoadedJob:
    """A job whose rules have been read and parsed, once: nothing left to check without Spark.

    Attributes:
        spec: the job.
        cola: the engine the rules were parsed with.
        checks: the parsed rules, in order after ``targets`` expansion.
    """

    spec: JobSpec
    cola: Cola
    checks: tuple[BaseCheck, ...]


@dataclass(frozen=True)
class JobOutcome:
    """What a job measured and wrote.

    Attributes:
        results: one result per rule, in order.
        summary: the results summary (``cola_core.report.summarise``): what the results file
            and XCom hold.
        valid_count: for a split, the rows written to the valid output.
        invalid_count: for a split, the rows written to the invalid output.
        rejections: for a split, per rejection code, the invalid rows carrying it (codes no
            row carries left out; ``SplitOutcome.rejections``); None for a check.
        validated_at: when the rules ran: the time the report and the history rows carry.
        data_date: the date of the data the job checked (``JobSpec.data_date``, UTC);
            None when none was given (the history then keys the run by ``validated_at``).
    """

    results: list[CheckResult]
    summary: dict[str, Any] = field(default_factory=dict)
    valid_count: int | None = None
    invalid_count: int | None = None
    rejections: dict[str, int] | None = None
    validated_at: dt.datetime | None = None
    data_date: dt.datetime | None = None

    @property
    def passed(self) -> bool:
        return bool(self.summary["passed"])


def load_job(spec: JobSpec, checks: Sequence[BaseCheck] | None = None) -> LoadedJob:
    """Read and parse the job's rules, in pure Python.

    Args:
        checks: the rules already parsed with the job's engine settings (the provider parses
            them in the worker to validate them); they are then not parsed again.

    Raises:
        ColaError: the rules file cannot be read, a check package cannot be imported, or a
            rule is malformed (``ColaRuleError``, naming the rule).
    """
    for package in spec.check_packages:
        load_checks(package)
    cola = Cola(allow_external_access=spec.allow_external_access)
    if checks is None:
        rules = read_rules_file(spec.rules) if isinstance(spec.rules, str) else list(spec.rules)
        checks = cola.parse(rules)
    return LoadedJob(spec, cola, tuple(checks))


def run_job(job: JobSpec | LoadedJob, spark: SparkSession, *, df: DataFrame | None = None) -> JobOutcome:
    """Run a job in ``spark``.

    Args:
        job: the job, or the job :func:`load_job` has already checked.
        df: the data, when the caller has it (the decorator); otherwise the job's source is read.

    Raises:
        ColaError: a malformed spec or rule, a source that cannot be read, an output that
            exists or cannot be written.
    """
    loaded = job if isinstance(job, LoadedJob) else load_job(job)
    spec, cola, checks = loaded.spec, loaded.cola, list(loaded.checks)
    # The source query is checked under the same switch as the rules' SQL.
    with cola.sql_scope():
        if df is None:
            if spec.source is None:
                raise ValueError("run_job needs a job with a source, or a DataFrame")
            df = read_source(spark, spec.source)
        failed_rows_outputs = [check.failed_rows_output for check in checks if check.failed_rows_output is not None]
        for output in (*spec.outputs, *failed_rows_outputs):
            ensure_writable(spark, output)
        counts: dict[str, int] = {}
        rejections = None
        validated_at = dt.datetime.now(dt.timezone.utc)
        run_info = None
        if spec.history is not None:
            source = spec.source
            dataset = spec.dataset or (default_dataset(source) if source is not None else None)
            if dataset is None:
                raise ColaError("a history needs a dataset: the job has no source to name it by, so give dataset")
            run_info = RunInfo(
                dataset=dataset, pipeline=spec.pipeline, dag_id=spec.dag_id, task_id=spec.task_id,
                airflow_run_id=spec.airflow_run_id, validated_at=validated_at, data_date=_moment(spec.data_date),
                data_interval_start=_moment(spec.data_interval_start),
                data_interval_end=_moment(spec.data_interval_end), logical_date=_moment(spec.logical_date),
                map_index=spec.map_index,
            )
        if spec.command == "split":
            assert spec.valid_output is not None and spec.invalid_output is not None  # JobSpec checks it
            split = cola.split_write(
                df, checks, spec.valid_output, spec.invalid_output,
                annotate=spec.annotate, quarantine_key=spec.quarantine_key or None, samples=spec.samples,
                annotate_valid=spec.annotate_valid, history=spec.history, run_info=run_info,
            )
            results = split.results
            counts = {"valid_count": split.valid_count, "invalid_count": split.invalid_count}
            rejections = split.rejections
        else:
            results = cola.run(df, checks, samples=spec.samples, history=spec.history, run_info=run_info)
        if spec.report is not None:
            write_report_table(spark, results, spec.report, pipeline=spec.pipeline, validated_at=validated_at)
    return JobOutcome(
        results, summarise(results, **counts), counts.get("valid_count"), counts.get("invalid_count"),
        rejections=rejections, validated_at=validated_at,
        data_date=_moment(spec.data_date),
    )


def report_page(spark: SparkSession, spec: JobSpec, outcome: JobOutcome) -> str:
    """The HTML report of a run of ``spec`` (``cola_core.pages.render_html``): its time is the
    run's ``validated_at``, the one its history rows carry, and its data date the one it was
    keyed by; with a history, each rule has the trend of its dataset's last :data:`TREND_RUNS`
    data intervals up to this run's (which it has appended), so that the report of a rerun or
    a backfill draws what the first run's did.

    Raises:
        ColaOutputError: the history store is not a Cola history (its trends cannot be read).
    """
    dataset = spec.dataset or (default_dataset(spec.source) if spec.source is not None else None)
    trends = None
    if spec.history is not None and dataset is not None:
        until = outcome.data_date or outcome.validated_at
        trends = history_trends(spark, spec.history, dataset, runs=TREND_RUNS, until=until)
    return render_html(
        outcome.results, dataset=dataset, pipeline=spec.pipeline, validated_at=outcome.validated_at,
        dag_id=spec.dag_id, task_id=spec.task_id, airflow_run_id=spec.airflow_run_id, data_date=outcome.data_date,
        data_interval=(_moment(spec.data_interval_start), _moment(spec.data_interval_end)),
        valid_count=outcome.valid_count,
        invalid_count=outcome.invalid_count, rejections=outcome.rejections, trends=trends,
    )


def _moment(text: str | None) -> dt.datetime | None:
    """A ``JobSpec`` time (ISO text, checked when the spec was made) as a tz-aware UTC datetime."""
    return None if text is None else utc_datetime(text)

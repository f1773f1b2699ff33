"""Running a :class:`~cola_core.job.spec.JobSpec`: read the source, run the rules, write the outputs.

This is the one layer that writes. The checks describe and the plan measures; what a run
leaves behind is written here, and only here: the split's outputs, a failing ``sql`` rule's
failed rows, the report table, the history, the HTML page and the results file. A parsed
block runs on a DataFrame through :mod:`cola_core.job.blocks`, as the ``Cola`` facade's runs
do, and a streaming source through :mod:`cola_core.job.stream`.

The command line, the operators' Spark job and the decorator all go through
:func:`run_job`. Everything that can be checked without Spark is checked first, by
:func:`load_job`: the rules file, the custom check packages and every rule. Each of them
builds a run's HTML report with :func:`report_page`, and the command line writes it with
:func:`write_report_page`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.common.spark_errors import first_line
from cola_core.common.values import utc_datetime
from cola_core.errors import ColaError, ColaOutputError
from cola_core.guards.sqlguard import allowing_outside_access
from cola_core.history.store import RunInfo, default_dataset
from cola_core.history.summaries import history_trends
from cola_core.job.blocks import run_checks, run_split
from cola_core.job.spec import JobSpec
from cola_core.job.stream import StreamSummary, split_stream
from cola_core.language.contracts import ContractRules
from cola_core.language.files import read_rules_file
from cola_core.language.result import CheckResult
from cola_core.plan.cost import SparkCost, measuring_cost
from cola_core.report.pages import render_html, write_page
from cola_core.report.results import summarise, write_report_table, write_results_file
from cola_core.ruleset.parsing import parse_rules
from cola_core.ruleset.registry import default_checks, load_checks
from cola_core.storage.readwrite import ensure_writable, read_source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "TREND_RUNS", "JobOutcome", "LoadedJob", "load_job", "remove_earlier_file", "report_page", "run_job",
    "write_report_page", "write_results_file", "write_run_page",
]

# The runs of each rule whose trend a report draws, with a history.
TREND_RUNS = 20


@dataclass(frozen=True)
class LoadedJob:
    """A job whose rules have been read and parsed, once: nothing left to check without Spark.

    Attributes:
        spec: the job.
        checks: the parsed rules, in order after ``targets`` expansion.
        contract_gaps: for rules read from a data contract, the parts of it no rule checks
            (``ContractRules.gaps``), which the results carry as data.
    """

    spec: JobSpec
    checks: tuple[BaseCheck, ...]
    contract_gaps: tuple[str, ...] = ()


@dataclass(frozen=True)
class JobOutcome:
    """What a job measured and wrote.

    Attributes:
        results: one result per rule, in order.
        summary: the results summary (``cola_core.report.results.summarise``): what the results file
            and XCom hold.
        valid_count: for a split, the rows written to the valid output.
        invalid_count: for a split, the rows written to the invalid output.
        rejections: for a split, per rejection code, the invalid rows carrying it (codes no
            row carries left out; ``SplitOutcome.rejections``); None for a check.
        validated_at: when the rules ran: the time the report and the history rows carry.
        data_date: the date of the data the job checked (``JobSpec.data_date``, UTC);
            None when none was given (the history then keys the run by ``validated_at``).
        cost: what the run cost Spark, from reading the source to its last write
            (``cola_core.plan.cost``).
    """

    results: list[CheckResult]
    summary: dict[str, Any] = field(default_factory=dict)
    valid_count: int | None = None
    invalid_count: int | None = None
    rejections: dict[str, int] | None = None
    validated_at: dt.datetime | None = None
    data_date: dt.datetime | None = None
    cost: SparkCost | None = None

    @property
    def passed(self) -> bool:
        return bool(self.summary["passed"])


def load_job(
    spec: JobSpec, checks: Sequence[BaseCheck] | None = None, contract_gaps: Sequence[str] = ()
) -> LoadedJob:
    """Read and parse the job's rules, in pure Python, with the rule types every ``Cola()``
    starts with (those of the job's check packages included).

    Args:
        checks: the rules already parsed with the job's engine settings (the provider parses
            them in the worker to validate them); they are then not parsed again.
        contract_gaps: with ``checks``, what their contract states that no rule checks
            (``ContractRules.gaps``, as the caller read it); without them, read from the rules.

    Raises:
        ColaError: the rules file cannot be read, a check package cannot be imported, or a
            rule is malformed (``ColaRuleError``, naming the rule).
    """
    for package in spec.check_packages:
        load_checks(package)
    gaps = tuple(contract_gaps)
    if checks is None:
        rules = read_rules_file(spec.rules) if isinstance(spec.rules, str) else list(spec.rules)
        gaps = rules.gaps if isinstance(rules, ContractRules) else ()
        with allowing_outside_access(spec.allow_external_access):
            checks = parse_rules(rules, default_checks())
    return LoadedJob(spec, tuple(checks), gaps)


def run_job(job: JobSpec | LoadedJob, spark: SparkSession, *, df: DataFrame | None = None) -> JobOutcome:
    """Run a job in ``spark``: read its source, measure it, write its outputs, the report
    table and the history (the results file and the page are the caller's to write:
    :func:`write_results_file`, :func:`write_report_page`).

    Args:
        job: the job, or the job :func:`load_job` has already checked.
        df: the data, when the caller has it (the decorator); otherwise the job's source is read.

    Raises:
        ColaError: a malformed spec or rule, a source that cannot be read, an output that
            exists or cannot be written.
    """
    loaded = job if isinstance(job, LoadedJob) else load_job(job)
    spec, checks = loaded.spec, list(loaded.checks)
    # The source query is checked under the same switch as the rules' SQL.
    with measuring_cost(spark) as meter, allowing_outside_access(spec.allow_external_access):
        if df is None:
            if spec.source is None:
                raise ValueError("run_job needs a job with a source, or a DataFrame")
            df = read_source(spark, spec.source)
        failed_rows_outputs = [check.failed_rows_output for check in checks if check.failed_rows_output is not None]
        if spec.checkpoint is not None and not df.isStreaming:
            raise ColaError("checkpoint only applies to a streaming source (stream: true, or spark.readStream)")
        # A stream appends each batch to its outputs: they exist from its second run on.
        appended = (spec.valid_output, spec.invalid_output) if df.isStreaming else ()
        for output in (*spec.outputs, *failed_rows_outputs):
            if output not in appended:
                ensure_writable(spark, output)
        validated_at = dt.datetime.now(dt.timezone.utc)
        run_info = _run_info(spec, validated_at)
        counts: dict[str, int] = {}
        rejections = None
        streamed: dict[str, Any] = {}
        if df.isStreaming:
            summary = _run_stream(df, spec, checks, run_info)
            if summary.run_id is not None:
                meter.include_group(summary.run_id)
            results = summary.combined_results(checks)
            counts = {"valid_count": summary.valid_count, "invalid_count": summary.invalid_count}
            streamed = {"stream": summary.batch_lines()}
        elif spec.command == "split":
            assert spec.valid_output is not None and spec.invalid_output is not None  # JobSpec checks it
            split = run_split(
                df, checks, spec.valid_output, spec.invalid_output,
                annotate=spec.annotate, quarantine_key=spec.quarantine_key or None, samples=spec.samples,
                annotate_valid=spec.annotate_valid, history=spec.history, run_info=run_info,
            )
            results = split.results
            counts = {"valid_count": split.valid_count, "invalid_count": split.invalid_count}
            rejections = split.rejections
        else:
            results = run_checks(df, checks, samples=spec.samples, history=spec.history, run_info=run_info)
        if spec.report is not None:
            write_report_table(spark, results, spec.report, pipeline=spec.pipeline, validated_at=validated_at)
    assert meter.cost is not None  # set when the block ends
    return JobOutcome(
        results,
        {**summarise(results, **counts, cost=meter.cost, contract_gaps=loaded.contract_gaps), **streamed},
        counts.get("valid_count"),
        counts.get("invalid_count"), rejections=rejections, validated_at=validated_at,
        data_date=_moment(spec.data_date), cost=meter.cost,
    )


def _run_stream(df: DataFrame, spec: JobSpec, checks: list[BaseCheck], run_info: RunInfo | None) -> StreamSummary:
    """Split the files that arrived since the checkpoint's last batch (``availableNow``)."""
    if spec.command != "split" or spec.checkpoint is None:
        raise ColaError(
            "a streaming DataFrame is split, not checked: give the split's two outputs and a checkpoint "
            "(the folder where the stream remembers which files it has split)"
        )
    assert spec.valid_output is not None and spec.invalid_output is not None  # JobSpec checks it
    summary = split_stream(
        df, checks, spec.valid_output, spec.invalid_output, checkpoint=spec.checkpoint, trigger="availableNow",
        annotate=spec.annotate, quarantine_key=spec.quarantine_key or None, history=spec.history,
        run_info=run_info, annotate_valid=spec.annotate_valid, samples=spec.samples, run_key=_run_key(spec),
    )
    assert isinstance(summary, StreamSummary)  # a finite trigger waits and sums up
    return summary


def _run_key(spec: JobSpec) -> str | None:
    """What makes a streaming run the same run again: the task (from Airflow) and the date of
    its data, so that a rerun or a retry reports the batches its first attempt split; None
    without a data date (each run is then a run of its own)."""
    if spec.data_date is None:
        return None
    return json.dumps([spec.dag_id, spec.task_id, spec.map_index, spec.data_date])


def _run_info(spec: JobSpec, validated_at: dt.datetime) -> RunInfo | None:
    """What the job writes beside its results in its history; None without a history."""
    if spec.history is None:
        return None
    source = spec.source
    dataset = spec.dataset or (default_dataset(source) if source is not None else None)
    if dataset is None:
        raise ColaError("a history needs a dataset: the job has no source to name it by, so give dataset")
    return RunInfo(
        dataset=dataset, pipeline=spec.pipeline, dag_id=spec.dag_id, task_id=spec.task_id,
        airflow_run_id=spec.airflow_run_id, validated_at=validated_at, data_date=_moment(spec.data_date),
        data_interval_start=_moment(spec.data_interval_start),
        data_interval_end=_moment(spec.data_interval_end), logical_date=_moment(spec.logical_date),
        map_index=spec.map_index,
    )


# -- the files a run leaves on the driver --------------------------------------------------------


def report_page(spark: SparkSession, spec: JobSpec, outcome: JobOutcome) -> str:
    """The HTML report of a run of ``spec`` (``cola_core.report.pages.render_html``): its time is the
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
        spark_cost=None if outcome.cost is None else outcome.cost.describe(),
    )


def write_report_page(spark: SparkSession, spec: JobSpec, outcome: JobOutcome, path: Path) -> str | None:
    """Write the run's HTML report (:func:`report_page`) to ``path``; None when it was written,
    else the warning that says why not (``the HTML report was not written: ...``).

    The run is finished by then (its outputs published, its history appended): refusing it
    now would make it look undone, and a caller that retries on a refusal or a crash would
    run it again and append its history twice. So a page that cannot be built or written, for
    whatever reason (a history store that cannot be read for the trends, a bug in the page),
    is a warning, and the run's outcome stands. A BaseException (an interrupt, a timeout)
    still stops the caller.
    """
    try:
        write_run_page(spark, spec, outcome, path)
    except Exception as error:
        return f"the HTML report was not written: {_why_not(error)}"
    return None


def write_run_page(spark: SparkSession, spec: JobSpec, outcome: JobOutcome, path: Path) -> None:
    """Write the run's HTML report (:func:`report_page`) to ``path``, atomically.

    Raises:
        ColaOutputError: the page cannot be written, or the history read for its trends.
    """
    write_page(path, report_page(spark, spec, outcome))


# Spark's errors (py4j's, pyspark's) whose first line names the JVM class that failed.
_JVM_CLASS = re.compile(r"(?:[a-z_]\w*\.)+[A-Z]\w*: ")


def _why_not(error: Exception) -> str:
    """Why the page was not written, in one line: a ColaError's message; any other error's
    type before its message (a ``KeyError('x')`` says ``KeyError: 'x'``, not ``'x'``), unless
    the line already says what failed (Spark's ``org.apache.spark.SparkException: ...``)."""
    line = first_line(error)
    if isinstance(error, ColaError):
        return line
    name = type(error).__name__
    spark = type(error).__module__.split(".", 1)[0] in ("pyspark", "py4j")
    if line == name or (spark and _JVM_CLASS.match(line)):  # no message of its own, or Spark's
        return line
    return f"{name}: {line}"


def remove_earlier_file(path: Path, what: str) -> None:
    """Remove the file an earlier run left at ``path`` (a results file, an HTML report), so
    that it never passes for this run's if this one fails.

    Raises:
        ColaOutputError: it cannot be removed (``what`` names it).
    """
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        raise ColaOutputError(f"cannot remove the earlier {what} {str(path)!r}: {error}") from error


def _moment(text: str | None) -> dt.datetime | None:
    """A ``JobSpec`` time (ISO text, checked when the spec was made) as a tz-aware UTC datetime."""
    return None if text is None else utc_datetime(text)

"""What a run tells the outside world: the results summary, the report rows, the printed table.

- :func:`summarise` builds the dict that the CLI writes as its results file and that the
  Airflow operators and decorator push to XCom;
- :func:`report_dataframe` / :func:`write_report_table` build and write the persisted report
  table, one row per result;
- :func:`render_table` is the readable table the ``cola`` command prints;
- :func:`results_text` and :func:`refusal_results` are what the job writes as its results
  file (with :func:`write_results_file`): the summary of a run, or the error of a run it
  refused (exit status 2).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cola_core import exit_status
from cola_core.common.formatting import cut_text, format_number, one_line
from cola_core.common.values import plain_number
from cola_core.errors import ColaError
from cola_core.language.result import SEVERITIES, CheckResult, Severity, worst_severity
from cola_core.plan.cost import SparkCost
from cola_core.report.index_page import render_index
from cola_core.report.pages import render_html, replace_file
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# render_html and render_index are given here too: reports of every kind are found here.
__all__ = [
    "CUT_TEXT_CHARS",
    "CUT_THRESHOLDS",
    "REFUSAL_KEY",
    "REFUSAL_KINDS",
    "REPORT_COLUMNS",
    "REPORT_SCHEMA",
    "RESULTS_BYTES",
    "refusal_results",
    "render_html",
    "render_index",
    "render_table",
    "report_dataframe",
    "report_rows",
    "results_text",
    "summarise",
    "write_report_table",
    "write_results_file",
]

REPORT_COLUMNS = (
    "pipeline",
    "rule_type",
    "check_name",
    "code",
    "dimension",
    "severity",
    "passed",
    "failed_count",
    "metric_value",
    "message",
    "validated_at",
    "rule_id",
)
# The report's columns, with rule_id last so that reports written before it keep their order.
REPORT_SCHEMA = (
    "pipeline string, rule_type string, check_name string, code string, dimension string, severity string, "
    "passed boolean, failed_count bigint, metric_value double, message string, validated_at timestamp, "
    "rule_id string"
)

# The most bytes of JSON a summary's results take (the results file, the XCom): past it, the
# samples are left out, then every text cut (see _within_budget).
RESULTS_BYTES = 16 * 1024 * 1024
# What a text of a result is cut to, and how many of a custom check's thresholds are kept, when
# the results are over that budget without their samples.
CUT_TEXT_CHARS = 80
CUT_THRESHOLDS = 6

# The one key of a results file that records a refused run instead of results.
REFUSAL_KEY = "error"
# What a refused run refused, as its record says: its command line (argparse), its rules, its
# source, an output, a query Spark could not analyse, or anything else cola_core refuses.
REFUSAL_KINDS = ("usage", "rules", "source", "output", "query", "error")

_COLOURS = {"pass": "\033[32m", "warn": "\033[33m", "fail": "\033[1;31m"}
_RESET = "\033[0m"


def summarise(
    results: Sequence[CheckResult],
    *,
    valid_count: int | None = None,
    invalid_count: int | None = None,
    cost: SparkCost | None = None,
    contract_gaps: Sequence[str] = (),
) -> dict[str, Any]:
    """The results summary: the CLI's results file and the operators' XCom ``return_value``.

    Args:
        results: the results of one run, in rule order.
        valid_count: rows written to the valid output (a split only; give both counts or none).
        invalid_count: rows written to the invalid output.
        cost: what the run cost Spark (``cola_core.plan.cost``), when it was measured.
        contract_gaps: for rules read from a data contract, the parts of it no rule checks
            (``ContractRules.gaps``): the summary's ``contract_gaps``, written when there are some.

    Returns:
        ``{"severity", "passed", "counts": {"pass", "warn", "fail"}, "results"}``, plus
        ``valid_count`` and ``invalid_count`` for a split, and ``cost``
        (``SparkCost.to_dict()``) when given. ``passed`` is False exactly when a
        result failed. The dict is JSON-safe: a metric value that is not a finite number
        (NaN) is ``None``, since JSON has no NaN; its message still shows it.

    Raises:
        ColaError: when only one of the two counts is given.
    """
    if (valid_count is None) != (invalid_count is None):
        raise ColaError("give both valid_count and invalid_count (a split), or neither (a check)")
    counts = dict.fromkeys(SEVERITIES, 0)
    for result in results:
        counts[_severity(result)] += 1
    summary: dict[str, Any] = {
        "severity": worst_severity(list(results)),
        "passed": counts["fail"] == 0,
        "counts": counts,
        "results": _within_budget([_json_safe(result.to_dict()) for result in results]),
    }
    # Both or neither (checked above); the second test narrows invalid_count's type too.
    if valid_count is not None and invalid_count is not None:
        summary["valid_count"] = int(valid_count)
        summary["invalid_count"] = int(invalid_count)
    if cost is not None:
        summary["cost"] = cost.to_dict()
    if contract_gaps:
        summary["contract_gaps"] = [str(gap) for gap in contract_gaps]
    return summary


def _severity(result: CheckResult) -> Severity:
    # The field is Optional only so that a caller may leave it out: __post_init__ sets it
    # (from `passed`) on every CheckResult, so it is never None here.
    assert result.severity is not None
    return result.severity


def _within_budget(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results, made to fit :data:`RESULTS_BYTES` of JSON whatever the block: a results file
    and an XCom must never grow with the data.

    Each message is already at most ``MESSAGE_CHARS`` and each sampled text at most
    ``SAMPLE_TEXT_CHARS``, and each result's details at most ``DETAILS_CHARS``. Past the
    budget, the samples go first (each result with samples says how many were left out); then
    every text of every result is cut to :data:`CUT_TEXT_CHARS`, a custom check's thresholds
    beyond the first :data:`CUT_THRESHOLDS` are left out, and so are the details (the message
    says what they say, for a person). With at most ``rules.MAX_RESULTS`` results, that fits.
    """
    if _json_bytes(results) <= RESULTS_BYTES:
        return results
    without_samples = [_without_samples(result) for result in results]
    if _json_bytes(without_samples) <= RESULTS_BYTES:
        return without_samples
    return [_texts_cut(result) for result in without_samples]


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, allow_nan=False, default=str).encode())


def _without_samples(result: dict[str, Any]) -> dict[str, Any]:
    samples = result.get("samples")
    if not samples:
        return result
    left_out = (
        f" ({len(samples)} sample{'' if len(samples) == 1 else 's'} left out: the results were over their "
        f"{RESULTS_BYTES // (1024 * 1024)} MiB budget)"
    )
    kept = {key: value for key, value in result.items() if key != "samples"}
    return {**kept, "message": result["message"] + left_out}


def _texts_cut(result: dict[str, Any]) -> dict[str, Any]:
    cut: dict[str, Any] = {
        key: cut_text(value, CUT_TEXT_CHARS) if isinstance(value, str) else value
        for key, value in result.items()
        if key != "details"
    }
    thresholds = result.get("thresholds")
    if isinstance(thresholds, dict):
        kept = list(thresholds.items())[:CUT_THRESHOLDS]
        cut["thresholds"] = {cut_text(str(name), CUT_TEXT_CHARS): cut_text(str(value), CUT_TEXT_CHARS)
                             for name, value in kept}
    return cut


def _json_safe(data: dict[str, Any]) -> dict[str, Any]:
    # JSON has no NaN and no Decimal; the message still shows the measured value. Samples
    # are made JSON-safe when they are collected (cola_core.plan.samples).
    metric = plain_number(data.get("metric_value"))
    if isinstance(metric, float) and not math.isfinite(metric):
        metric = None
    return {**data, "metric_value": metric}


def results_text(summary: Mapping[str, Any]) -> str:
    """The text of a results file: strict JSON (no NaN or Infinity), so that any reader takes it.

    Raises:
        ColaError: the summary holds a value JSON cannot carry (a bug: ``summarise`` and the
            samples make every value JSON-safe).
    """
    try:
        return json.dumps(summary, indent=2, allow_nan=False) + "\n"
    except (TypeError, ValueError) as error:
        raise ColaError(f"the results cannot be written as JSON: {error}") from error


def write_results_file(path: Path, summary: Mapping[str, Any]) -> None:
    """Write ``summary`` (:func:`summarise`, or :func:`refusal_results`) as the results file at
    ``path``, atomically: a reader sees the previous file or the complete new one, never half.

    Raises:
        ColaError: the summary holds a value JSON cannot carry (see :func:`results_text`).
        ColaOutputError: the file cannot be written.
    """
    replace_file(path, results_text(summary), "the results file")


def refusal_results(message: str, exit_code: int = exit_status.REFUSED, kind: str = "error") -> dict[str, Any]:
    """The results file of a run the job refused (a usage, source or rule error).

    A results file that says why the run was refused lets the Airflow operators fail the
    task without a retry, with the job's own message, whatever spark-submit's exit status and
    log say (in cluster deploy mode they are not the job's).

    Args:
        kind: one of :data:`REFUSAL_KINDS`.

    Returns:
        ``{"error": {"exit_code": 2, "kind": "usage", "message": "..."}}``.

    Raises:
        ColaError: ``kind`` is none of :data:`REFUSAL_KINDS`.
    """
    if kind not in REFUSAL_KINDS:
        raise ColaError(f"a refusal's kind is one of {', '.join(REFUSAL_KINDS)}, got {kind!r}")
    return {REFUSAL_KEY: {"exit_code": int(exit_code), "kind": kind, "message": str(message)}}


def report_rows(
    results: Sequence[CheckResult], *, pipeline: str | None = None, validated_at: dt.datetime | None = None
) -> list[tuple[Any, ...]]:
    """One tuple per result, in :data:`REPORT_COLUMNS` order.

    Args:
        pipeline: the pipeline name written in every row.
        validated_at: when the rules ran; now (UTC) by default. Every row of a run shares it.
    """
    when = validated_at or dt.datetime.now(dt.timezone.utc)
    rows = []
    for result in results:
        metric = result.metric_value
        rows.append(
            (
                pipeline,
                result.rule_type,
                result.check_name,
                result.code,
                result.dimension,
                result.severity,
                bool(result.passed),
                int(result.failed_count),
                None if metric is None else float(metric),
                result.message,
                when,
                result.rule_id,
            )
        )
    return rows


def report_dataframe(
    spark: SparkSession,
    results: Sequence[CheckResult],
    *,
    pipeline: str | None = None,
    validated_at: dt.datetime | None = None,
) -> DataFrame:
    """The report as a DataFrame with :data:`REPORT_SCHEMA` (built from the results alone)."""
    return spark.createDataFrame(report_rows(results, pipeline=pipeline, validated_at=validated_at), REPORT_SCHEMA)


def write_report_table(
    spark: SparkSession,
    results: Sequence[CheckResult],
    output: Mapping[str, Any] | str | OutputSpec,
    *,
    pipeline: str | None = None,
    validated_at: dt.datetime | None = None,
) -> None:
    """Write the report table to an output config, whatever the results are (failed ones included).

    Raises:
        ColaOutputError: as ``cola_core.storage.readwrite.write_output``.
    """
    frame = report_dataframe(spark, results, pipeline=pipeline, validated_at=validated_at)
    # A handful of rows: one file per write keeps an appended report history tidy.
    write_output(frame.coalesce(1), output)


def render_table(
    results: Sequence[CheckResult],
    *,
    valid_count: int | None = None,
    invalid_count: int | None = None,
    colour: bool = False,
    cost: SparkCost | None = None,
) -> str:
    """The readable results table the ``cola`` command prints.

    Args:
        results: the results to show, in rule order.
        valid_count: for a split, the rows written to the valid output (shown under the table).
        invalid_count: for a split, the rows written to the invalid output.
        colour: colour the severities with ANSI codes (for a terminal; plain text otherwise).
        cost: what the run cost Spark, shown on the last line (``Spark cost: ...``).

    Each result is one line: a line break or a control character in a name, a code or a
    value is shown as its escape (``\\n``, ``\\x1b``: :func:`~cola_core.common.formatting.one_line`).
    """
    header = ("SEVERITY", "RULE", "CODE", "VALUE", "FAILED", "MESSAGE")
    rows = [
        (
            _severity(result).upper(),
            one_line(result.check_name or result.rule_type),
            one_line(result.code or ""),
            "-" if result.metric_value is None else one_line(format_number(result.metric_value)),
            one_line(result.failed_count),
            # A message's own line breaks are layout: folded to a space, as they always were;
            # then whatever else would break the line or act on a terminal (ESC) is escaped.
            one_line(" ".join(result.message.split())),
        )
        for result in results
    ]
    widths = [max(len(row[index]) for row in [header, *rows]) for index in range(len(header) - 1)]
    right_aligned = {3, 4}
    lines = []
    for number, row in enumerate([header, *rows]):
        # strict=False on purpose: widths has no entry for the last cell (the message), which
        # is not padded, so zip stops before it and the message is joined on below.
        cells = [
            cell.rjust(width) if index in right_aligned else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(row, widths, strict=False))
        ]
        if colour and number > 0:
            severity = row[0].lower()
            cells[0] = f"{_COLOURS[severity]}{cells[0]}{_RESET}"
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    counts = summarise(results)["counts"]
    noun = "result" if len(results) == 1 else "results"
    lines.append("")
    lines.append(f"{len(results)} {noun}: {counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail")
    if valid_count is not None:
        lines.append(f"split: {_counted(valid_count, 'valid')}, {_counted(invalid_count, 'invalid')}")
    if cost is not None:
        lines.append(f"Spark cost: {cost.describe()}")
    return "\n".join(lines)


def _counted(rows: int | None, kind: str) -> str:
    return f"{rows} {kind} row{'' if rows == 1 else 's'}"

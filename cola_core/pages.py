"""The quality as a web page: one self-contained HTML report per run, and an index over a history.

Standard library only: no template engine, no script, no external resource (no CDN, font or
image), so that a page opens from ``file://``, from an e-mail attachment or behind any proxy.
The style is inline CSS and the trend sparklines are inline SVG. Every value that comes from
the data or the rules (names, codes, messages, samples, datasets) is escaped as text.

- :func:`render_html` is one run's report: the run, its verdict, and every result;
- :func:`render_index` is the index of a history store: one row per dataset and rule;
- :func:`checked_page_path` and :func:`write_page` are how the command line writes them.

The trends and index rows come from the history store: ``cola_core.history.history_trends``
and ``cola_core.history.index_rows``.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cola_core._format import format_number
from cola_core.errors import ColaOutputError
from cola_core.result import SEVERITIES, CheckResult, worst_severity
from cola_core.specs import without_file_scheme

__all__ = [
    "SAMPLE_BUDGET",
    "SAMPLE_CELL_CHARS",
    "SAMPLE_ROWS",
    "SEVERITY_COLOURS",
    "TrendPoint",
    "checked_page_path",
    "render_html",
    "render_index",
    "sparkline",
    "write_page",
]

# One earlier (or this) run of a rule: when it ran, what it measured (None for a rule that
# measures no number), and what it concluded.
TrendPoint = tuple[Any, float | None, str]

SEVERITY_COLOURS = {"pass": "#1a7f37", "warn": "#b35900", "fail": "#cf222e"}
# The samples shown per result, and the characters per cell: the report stays small whatever
# the samples hold (the results file keeps them whole).
SAMPLE_ROWS = 20
SAMPLE_CELL_CHARS = 200
# The characters of sample tables one page holds: past it, a result's samples are only counted,
# so that a 50-rule block with 20 wide samples each still makes a page under 300 KB.
SAMPLE_BUDGET = 100_000
# A metric rule's message names its thresholds: "row_count = 3 violates must_be (> 5)".
_THRESHOLD = re.compile(r"\b(must_be|warn) \(([^()]*)\)")
_WORST_FIRST = {severity: rank for rank, severity in enumerate(reversed(SEVERITIES))}

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #d0d7de;padding:.25em .5em;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right}
.sev{color:#fff;font-weight:600;border-radius:3px;padding:0 .4em;white-space:nowrap}
.pass{background:#1a7f37}.warn{background:#b35900}.fail{background:#cf222e}
dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:0}dt{color:#59636e}dd{margin:0}
code{font-family:ui-monospace,monospace;word-break:break-all}details{margin:.2em 0}
table.samples{font-size:.9em}
"""


def render_html(
    results: Sequence[CheckResult],
    *,
    dataset: str | None = None,
    pipeline: str | None = None,
    validated_at: dt.datetime | None = None,
    dag_id: str | None = None,
    task_id: str | None = None,
    airflow_run_id: str | None = None,
    valid_count: int | None = None,
    invalid_count: int | None = None,
    trends: Mapping[str, Sequence[TrendPoint]] | None = None,
) -> str:
    """One run's report, as one self-contained HTML page.

    Args:
        results: the run's results, in rule order.
        dataset: what was checked (as in the history).
        pipeline: the pipeline name.
        validated_at: when the rules ran.
        dag_id: from Airflow, the DAG of the task that ran the rules.
        task_id: from Airflow, that task.
        airflow_run_id: from Airflow, the DAG run's id.
        valid_count: for a split, the rows written to the valid output (give both or neither).
        invalid_count: for a split, the rows written to the invalid output.
        trends: per ``rule_id``, its last runs oldest first (``history_trends``); each rule
            with some gets a sparkline.

    Returns:
        The page. A rule's threshold is shown when its message names it (metric rules do);
        each result's samples, when it has some, are a small table (the first
        :data:`SAMPLE_ROWS`, each cell cut at :data:`SAMPLE_CELL_CHARS` characters), while
        the page's :data:`SAMPLE_BUDGET` lasts; after that they are only counted.
    """
    verdict = worst_severity(list(results))
    counts = {severity: sum(r.severity == severity for r in results) for severity in SEVERITIES}
    facts = [
        ("dataset", dataset), ("pipeline", pipeline), ("validated at", _time(validated_at)),
        ("DAG", dag_id), ("task", task_id), ("Airflow run", airflow_run_id),
    ]
    parts = [
        _head(f"Cola report: {dataset}" if dataset else "Cola report"),
        f"<h1>Cola report {_badge(verdict)}</h1>",
        "<dl>" + "".join(f"<dt>{_e(name)}</dt><dd>{_e(value)}</dd>" for name, value in facts if value) + "</dl>",
        f"<p>{len(results)} result{'' if len(results) == 1 else 's'}: "
        f"{counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail</p>",
    ]
    if valid_count is not None or invalid_count is not None:
        parts.append(_split_section(results, valid_count, invalid_count))
    parts.append(_results_table(results, trends or {}))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def render_index(rows: Sequence[Mapping[str, Any]], *, title: str = "Cola quality") -> str:
    """The index of a history store, as one self-contained HTML page.

    Args:
        rows: one per dataset and rule (``cola_core.history.index_rows``), each with
            ``dataset``, ``rule_id``, ``severity`` (the latest), ``code``, ``check_name``,
            ``validated_at`` (the latest run) and ``trend`` (its last runs, oldest first).
        title: the page's title.

    Returns:
        The page, worst first: fail, then warn, then pass; then by dataset and rule.
    """
    ordered = sorted(rows, key=lambda row: (
        _WORST_FIRST.get(row["severity"], len(SEVERITIES)), str(row["dataset"]), str(row["rule_id"])
    ))
    lines = [
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in (
            _badge(row["severity"]), _e(row["dataset"]), f"<code>{_e(row.get('code'))}</code>",
            _e(row.get("check_name")), f"<code>{_e(row['rule_id'])}</code>", _e(_time(row.get("validated_at"))),
            sparkline(row.get("trend") or ()),
        )) + "</tr>"
        for row in ordered
    ]
    names = ("severity", "dataset", "code", "name", "rule id", "latest", "trend")
    header = "".join(f"<th>{name}</th>" for name in names)
    return "\n".join([
        _head(title), f"<h1>{_e(title)}</h1>",
        f"<p>{len(ordered)} rule{'' if len(ordered) == 1 else 's'}, worst first</p>",
        f"<table><thead><tr>{header}</tr></thead><tbody>", *lines, "</tbody></table>", "</body></html>\n",
    ])


def sparkline(points: Sequence[TrendPoint], *, width: int = 120, height: int = 24) -> str:
    """Runs oldest first as an inline SVG: one circle per run, coloured by its severity, at
    the height of its metric (on the mid line when it measured no number), joined by a line
    through the measured ones. Empty when there are no runs."""
    if not points:
        return ""
    values = [float(value) for _, value, _ in points if value is not None]
    low, high = (min(values), max(values)) if values else (0.0, 0.0)
    pad = 4.0
    step = (width - 2 * pad) / max(len(points) - 1, 1)

    def y(value: float | None) -> float:
        if value is None or high == low:
            return height / 2
        return pad + (high - value) / (high - low) * (height - 2 * pad)

    circles = []
    line = []
    for index, (when, value, severity) in enumerate(points):
        cx, cy = pad + index * step, y(value)
        if value is not None:
            line.append(f"{cx:.1f},{cy:.1f}")
        measured = "-" if value is None else format_number(value)
        colour = SEVERITY_COLOURS.get(severity, "#59636e")
        circles.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.5" fill="{colour}">'
            f"<title>{_e(_time(when))}: {_e(measured)} ({_e(severity)})</title></circle>"
        )
    polyline = (
        f'<polyline points="{" ".join(line)}" fill="none" stroke="#8c959f" stroke-width="1"/>' if len(line) > 1 else ""
    )
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">{polyline}{"".join(circles)}</svg>'
    )


def checked_page_path(text: str, flag: str = "--html") -> Path:
    """The local file a page is to be written to, refused before any work when the driver
    cannot write it.

    Raises:
        ColaOutputError: a remote URI, a folder, or a place that cannot be written.
    """
    local = without_file_scheme(text)
    if "://" in local or not local.strip():
        raise ColaOutputError(f"{flag} must be a file the driver can write (a local path or a file: URI), got {text!r}")
    path = Path(local)
    if path.is_dir():
        raise ColaOutputError(f"{flag} {text!r} is a folder; give the path of the page to write")
    ancestor = path.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise ColaOutputError(f"{flag} {text!r} cannot be written: {str(ancestor)!r} is not a writable folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise ColaOutputError(f"{flag} {text!r} cannot be written: the file is read-only")
    return path


def write_page(path: Path, page: str) -> None:
    """Write ``page`` atomically: a reader sees the previous file or the complete new one.

    Raises:
        ColaOutputError: the file cannot be written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
        partial.write_text(page, encoding="utf-8")
        os.replace(partial, path)
    except OSError as error:
        raise ColaOutputError(f"cannot write the page {str(path)!r}: {error}") from error


# -- the parts of a report -----------------------------------------------------------------------


def _e(value: Any) -> str:
    """``value`` as escaped text; nothing for None."""
    return "" if value is None else html.escape(str(value), quote=True)


def _badge(severity: Any) -> str:
    name = str(severity)
    css = name if name in SEVERITY_COLOURS else ""
    return f'<span class="sev {css}">{_e(name.upper())}</span>'


def _time(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    return None if value is None else str(value)


def _head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
    )


def _thresholds(result: CheckResult) -> str:
    found = _THRESHOLD.findall(result.message)
    shown = [f"{name} {threshold}" for name, threshold in dict(found).items()]
    if result.baseline is not None:
        shown.append(f"baseline {format_number(result.baseline)}")
    return "<br>".join(_e(item) for item in shown)


def _split_section(results: Sequence[CheckResult], valid_count: int | None, invalid_count: int | None) -> str:
    # A failed rule measured row by row in the block's scan has a row count and no metric;
    # its failed_count is what it counts (a unique rule counts the duplicates beyond the first).
    rejecting = [
        r for r in results if r.severity == "fail" and r.metric_value is None and r.rows_checked is not None
    ]
    rows = "".join(
        f'<tr><td><code>{_e(r.code)}</code></td><td class="num">{r.failed_count}</td></tr>' for r in rejecting
    )
    table = (
        f"<table><thead><tr><th>rejection code</th><th>failed</th></tr></thead><tbody>{rows}</tbody></table>"
        if rejecting else "<p>No row rule failed.</p>"
    )
    return (
        f"<h2>Split</h2><p>{_e(valid_count)} valid rows, {_e(invalid_count)} invalid rows</p>{table}"
    )


def _results_table(results: Sequence[CheckResult], trends: Mapping[str, Sequence[TrendPoint]]) -> str:
    header = ("severity", "code", "name", "dimension", "value", "failed", "threshold", "message", "trend")
    rows = []
    budget = SAMPLE_BUDGET
    for result in results:
        value = "" if result.metric_value is None else format_number(result.metric_value)
        trend = trends.get(result.rule_id or "", ())
        cells = (
            _badge(result.severity), f"<code>{_e(result.code)}</code>", _e(result.check_name), _e(result.dimension),
            _e(value), str(int(result.failed_count)), _thresholds(result), _e(result.message), sparkline(trend),
        )
        numeric = (4, 5)
        rows.append("<tr>" + "".join(
            f'<td class="num">{cell}</td>' if index in numeric else f"<td>{cell}</td>"
            for index, cell in enumerate(cells)
        ) + "</tr>")
        if result.samples:
            table = _samples(result.samples)
            if len(table) > budget:
                count = len(result.samples)
                table = (
                    f"<p>{count} sample{'' if count == 1 else 's'}, not shown: the page has no room left for "
                    "samples (the results file holds them)</p>"
                )
            else:
                budget -= len(table)
            rows.append(f'<tr><td colspan="{len(header)}">{table}</td></tr>')
    head = "".join(f"<th>{name}</th>" for name in header)
    return f"<h2>Results</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _samples(samples: Sequence[Mapping[str, Any]]) -> str:
    shown = list(samples[:SAMPLE_ROWS])
    columns = list(dict.fromkeys(key for sample in shown for key in sample))
    head = "".join(f"<th>{_e(column)}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_cell(sample.get(column)))}</td>" for column in columns) + "</tr>"
        for sample in shown
    )
    more = len(samples) - len(shown)
    summary = f"{len(samples)} sample{'' if len(samples) == 1 else 's'}" + (f", {len(shown)} shown" if more else "")
    return (
        f'<details open><summary>{summary}</summary><table class="samples"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></details>"
    )


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= SAMPLE_CELL_CHARS else text[:SAMPLE_CELL_CHARS] + "…"

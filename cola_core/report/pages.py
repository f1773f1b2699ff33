"""One run's quality as a web page: a self-contained HTML report, and how pages are written.

Standard library only: no template engine, no script, no external resource (no CDN, font or
image), so that a page opens from ``file://``, from an e-mail attachment or behind any proxy.
The style is inline CSS and the trend sparklines are inline SVG. Every value that comes from
the data or the rules (names, codes, messages, samples, datasets) is escaped as text.

- :func:`render_html` is one run's report: the run, its verdict, and every result;
- :func:`checked_page_path` and :func:`write_page` are how the command line writes a page
  (this one or :func:`cola_core.report.index_page.render_index`'s);
  :func:`replace_file` is how any text file is written so that no reader sees half of it.

The index of a history is :mod:`cola_core.report.index_page`; the escaping, times, style and
sparklines both pages share are :mod:`cola_core.report.page_parts`. The trends come from the
history store: ``cola_core.history.summaries.history_trends``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cola_core.common.formatting import format_number
from cola_core.errors import ColaOutputError
from cola_core.language.result import SEVERITIES, CheckResult, worst_severity
from cola_core.report.page_parts import (
    TEXT_BYTES,
    TrendPoint,
    clip_html,
    escape_html,
    page_head,
    severity_badge,
    shown_time,
    sparkline,
)
from cola_core.storage.specs import without_file_scheme

__all__ = [
    "MESSAGE_BYTES",
    "PAGE_BYTES",
    "SAMPLE_BUDGET",
    "SAMPLE_CELL_CHARS",
    "SAMPLE_ROWS",
    "THRESHOLDS_SHOWN",
    "checked_page_path",
    "render_html",
    "replace_file",
    "write_page",
]

# The samples shown per result, and the characters per cell: the report stays small whatever
# the samples hold (the results file keeps them whole).
SAMPLE_ROWS = 20
SAMPLE_CELL_CHARS = 200
# The bytes of one message, counted as TEXT_BYTES are (UTF-8 bytes of the escaped text): a
# longer one is cut, and says how long it was (the results file keeps it whole).
MESSAGE_BYTES = 1_000
# The sample tables of one page take at most SAMPLE_BUDGET bytes, and only the room the rest of
# the page leaves under PAGE_BYTES; past that, a result's samples are only counted. The rest of
# a 50-rule block with 20 runs of trend per rule is at most about 290 KB whatever it holds (130 KB
# of sparklines from a history, 170 KB with every part of every tooltip cut at TIP_BYTES; 50 KB
# of messages, 63 KB of names, codes, dimensions, values, thresholds and rejection codes, 20 KB
# of markup, 1 KB of the run's facts and title), so its page stays under 300 KB.
SAMPLE_BUDGET = 100_000
PAGE_BYTES = 300_000
# The thresholds shown per result: a built-in rule has at most three (must_be, warn and
# tolerance, or min and max), while a custom check may give any number; the rest are counted.
THRESHOLDS_SHOWN = 6


def render_html(
    results: Sequence[CheckResult],
    *,
    dataset: str | None = None,
    pipeline: str | None = None,
    validated_at: dt.datetime | None = None,
    dag_id: str | None = None,
    task_id: str | None = None,
    airflow_run_id: str | None = None,
    data_date: dt.datetime | None = None,
    data_interval: tuple[dt.datetime | None, dt.datetime | None] = (None, None),
    valid_count: int | None = None,
    invalid_count: int | None = None,
    rejections: Mapping[str, int] | None = None,
    trends: Mapping[str, Sequence[TrendPoint]] | None = None,
    spark_cost: str | None = None,
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
        data_date: the date of the data the run checked (what its history rows and its trend
            go by); not shown when none was given.
        data_interval: from Airflow, the DAG run's data interval, its start and its end.
        valid_count: for a split, the rows written to the valid output (give both or neither).
        invalid_count: for a split, the rows written to the invalid output.
        rejections: for a split, per rejection code, the invalid rows that carry it (a row
            breaking two rules counts under both).
        trends: per ``rule_id``, its last data intervals oldest first (``history_trends``);
            each rule with some gets a sparkline.
        spark_cost: what the run cost Spark, in words (``SparkCost.describe()``).

    Returns:
        The page. A rule's thresholds are the result's ``thresholds`` and ``baseline``;
        a message is cut at :data:`MESSAGE_BYTES`, a name, code, dimension, value, threshold,
        the dataset, the pipeline, an Airflow id and the title at :data:`TEXT_BYTES`, and each
        part of a trend point's tooltip at :data:`TIP_BYTES` (UTF-8, escaped). Each result's
        samples, when it has some, are a small table (the first :data:`SAMPLE_ROWS`, each cell
        cut at :data:`SAMPLE_CELL_CHARS` characters), while the page's :data:`SAMPLE_BUDGET`
        bytes last and the page stays under :data:`PAGE_BYTES`; after that they are only
        counted. Times are shown in UTC (a naive datetime is taken
        as local time, as Python and Spark's ``collect()`` have it). Values of the wrong kind
        (a ``failed_count`` that is NaN, a sample that is not a mapping, a metric beyond a
        float's range) are shown as they are rather than refused: this is the page of a run
        already done.
    """
    verdict = worst_severity(list(results))
    counts = {severity: sum(r.severity == severity for r in results) for severity in SEVERITIES}
    start, end = data_interval
    interval = None if start is None or end is None else f"{shown_time(start)} to {shown_time(end)}"
    facts = [
        ("dataset", dataset), ("pipeline", pipeline), ("data date", shown_time(data_date)), ("data interval", interval),
        ("validated at", shown_time(validated_at)), ("DAG", dag_id), ("task", task_id), ("Airflow run", airflow_run_id),
        ("Spark cost", spark_cost),
    ]
    parts = [
        page_head(f"Cola report: {dataset}" if dataset else "Cola report"),
        f"<h1>Cola report {severity_badge(verdict)}</h1>",
        "<dl>" + "".join(f"<dt>{name}</dt><dd>{clip_html(value, TEXT_BYTES)}</dd>" for name, value in facts if value)
        + "</dl>",
        f"<p>{len(results)} result{'' if len(results) == 1 else 's'}: "
        f"{counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail</p>",
    ]
    if valid_count is not None or invalid_count is not None or rejections is not None:
        parts.append(_split_section(valid_count, invalid_count, rejections))
    rows = [_result_row(result, (trends or {}).get(result.rule_id or "", ())) for result in results]
    unshown = [_not_shown(len(result.samples)) if result.samples else None for result in results]

    def page(samples: Sequence[str | None]) -> str:
        return "\n".join([*parts, _results_table(rows, samples), "</body></html>\n"])

    # The page without a sample table is measured first: the tables take what room it leaves,
    # in rule order, up to SAMPLE_BUDGET. A table is counted whole (the note it replaces is
    # already in the measure), so the page never passes PAGE_BYTES on account of its samples.
    room = min(SAMPLE_BUDGET, PAGE_BYTES - len(page(unshown).encode()))
    shown: list[str | None] = []
    for result, note in zip(results, unshown, strict=True):
        table = _samples(result.samples) if result.samples else None
        size = 0 if table is None else len(table.encode())
        if table is not None and size <= room:
            room -= size
            shown.append(table)
        else:
            shown.append(note)
    return page(shown)


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
    """Write the HTML ``page`` (:func:`render_html`,
    :func:`~cola_core.report.index_page.render_index`) atomically: a reader sees the previous
    page or the complete new one.

    Raises:
        ColaOutputError: the file cannot be written, or ``page`` has no UTF-8 form.
    """
    replace_file(path, page, "the page")


def replace_file(path: Path, text: str, what: str) -> None:
    """Replace the file at ``path`` with ``text`` atomically: a reader sees the previous file
    or the complete new one, and no partial file stays behind. ``what`` names the file in the
    errors (``the page``, ``the results file``).

    Raises:
        ColaOutputError: the file cannot be written, or ``text`` has no UTF-8 form.
    """
    # Encoded before any file exists: a text with no UTF-8 form (a lone surrogate) is refused
    # rather than written altered. render_html's pages always have one (it shows U+FFFD).
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ColaOutputError(f"cannot write {what} {str(path)!r}: {error}") from error
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError as error:
        raise ColaOutputError(f"cannot write {what} {str(path)!r}: {error}") from error
    finally:
        # Whatever stopped the write (an interrupt included), no partial file stays behind;
        # after os.replace there is none. An unlink that fails must not hide why the write did.
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


# -- the parts of a report -----------------------------------------------------------------------


def _thresholds(result: CheckResult) -> str:
    given = list((result.thresholds or {}).items())
    shown = [
        f"{clip_html(name, TEXT_BYTES)} {clip_html(value, TEXT_BYTES)}" for name, value in given[:THRESHOLDS_SHOWN]
    ]
    if len(given) > THRESHOLDS_SHOWN:
        shown.append(f"… and {len(given) - THRESHOLDS_SHOWN} more")
    if result.baseline is not None:
        shown.append(f"baseline {escape_html(format_number(result.baseline))}")
    return "<br>".join(shown)


def _split_section(valid_count: int | None, invalid_count: int | None, rejections: Mapping[str, int] | None) -> str:
    counts = f"<h2>Split</h2><p>{_row_count(valid_count, 'valid')}, {_row_count(invalid_count, 'invalid')}</p>"
    if rejections is None:
        return counts
    if not rejections:
        return counts + "<p>No row carries a rejection code.</p>"
    # A failed result's failed_count is no row count of the split: a unique rule counts the
    # duplicates beyond the first, and a warn rule quarantines nothing. These are the rows.
    ordered = sorted(rejections.items(), key=lambda item: (-item[1], str(item[0])))
    rows = "".join(
        f'<tr><td><code>{clip_html(code, TEXT_BYTES)}</code></td><td class="num">{escape_html(count)}</td></tr>'
        for code, count in ordered
    )
    return (
        f"{counts}<table><thead><tr><th>rejection code</th><th>rows</th></tr></thead><tbody>{rows}</tbody></table>"
        "<p>A row that breaks several rules counts under each of their codes.</p>"
    )


def _row_count(count: int | None, kind: str) -> str:
    return f"{escape_html(count)} {kind} row{'' if count == 1 else 's'}"


_RESULT_HEADER = ("severity", "code", "name", "dimension", "value", "failed", "threshold", "message", "trend")


def _result_row(result: CheckResult, trend: Sequence[TrendPoint]) -> str:
    value = "" if result.metric_value is None else format_number(result.metric_value)
    cells = (
        severity_badge(result.severity), f"<code>{clip_html(result.code, TEXT_BYTES)}</code>",
        clip_html(result.check_name, TEXT_BYTES), clip_html(result.dimension, TEXT_BYTES), clip_html(value, TEXT_BYTES),
        _failed(result.failed_count), _thresholds(result), clip_html(result.message, MESSAGE_BYTES, mark=True),
        sparkline(trend),
    )
    # Numbers right-aligned; a threshold ("must_be > 2") kept on one line (it is cut at TEXT_BYTES).
    classes = {4: ' class="num"', 5: ' class="num"', 6: ' class="limits"'}
    return "<tr>" + "".join(f"<td{classes.get(index, '')}>{cell}</td>" for index, cell in enumerate(cells)) + "</tr>"


def _failed(count: Any) -> str:
    """``failed_count`` as a whole number; one that is none (NaN, inf, a text) as it is."""
    try:
        return str(int(count))
    except (TypeError, ValueError, OverflowError):
        return clip_html(format_number(count), TEXT_BYTES)


def _results_table(rows: Sequence[str], samples: Sequence[str | None]) -> str:
    """The results, each row followed by its samples' cell when it has one."""
    body = "".join(
        row + ("" if cell is None else f'<tr><td colspan="{len(_RESULT_HEADER)}">{cell}</td></tr>')
        for row, cell in zip(rows, samples, strict=True)
    )
    head = "".join(f"<th>{name}</th>" for name in _RESULT_HEADER)
    return f"<h2>Results</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _not_shown(count: int) -> str:
    return (
        f"<p>{count} sample{'' if count == 1 else 's'}, not shown: the page has no room left for "
        "samples (the results file holds them)</p>"
    )


def _samples(samples: Sequence[Mapping[str, Any]]) -> str:
    shown = list(samples[:SAMPLE_ROWS])
    columns = list(dict.fromkeys(key for sample in shown if isinstance(sample, Mapping) for key in sample))
    head = "".join(f"<th>{escape_html(column)}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape_html(_cell(sample.get(column)))}</td>" for column in columns) + "</tr>"
        if isinstance(sample, Mapping)
        # A sample that is no mapping (a hand-built result's list or text) has no columns: it
        # is shown whole, across the table.
        else f'<tr><td colspan="{max(len(columns), 1)}">{escape_html(_cell(sample))}</td></tr>'
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
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, default=str, sort_keys=True)
        except (TypeError, ValueError):
            # Keys JSON cannot write or sort (a date, keys of mixed types), or a cycle: the
            # value as Python shows it.
            text = repr(value)
    return text if len(text) <= SAMPLE_CELL_CHARS else text[:SAMPLE_CELL_CHARS] + "…"

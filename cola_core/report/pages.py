"""The quality as a web page: one self-contained HTML report per run, and an index over a history.

Standard library only: no template engine, no script, no external resource (no CDN, font or
image), so that a page opens from ``file://``, from an e-mail attachment or behind any proxy.
The style is inline CSS and the trend sparklines are inline SVG. Every value that comes from
the data or the rules (names, codes, messages, samples, datasets) is escaped as text.

- :func:`render_html` is one run's report: the run, its verdict, and every result;
- :func:`render_index` is the index of a history store: one row per dataset and rule;
- :func:`checked_page_path` and :func:`write_page` are how the command line writes them;
  :func:`replace_file` is how any text file is written so that no reader sees half of it.

The trends and index rows come from the history store: ``cola_core.history.summaries.history_trends``
and ``cola_core.history.summaries.index_rows``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import math
import os
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cola_core.common.formatting import format_number
from cola_core.errors import ColaOutputError
from cola_core.language.result import SEVERITIES, CheckResult, worst_severity
from cola_core.storage.specs import without_file_scheme

__all__ = [
    "MESSAGE_BYTES",
    "PAGE_BYTES",
    "SAMPLE_BUDGET",
    "SAMPLE_CELL_CHARS",
    "SAMPLE_ROWS",
    "SEVERITY_COLOURS",
    "TEXT_BYTES",
    "THRESHOLDS_SHOWN",
    "TIP_BYTES",
    "TrendPoint",
    "checked_page_path",
    "render_html",
    "render_index",
    "replace_file",
    "sparkline",
    "write_page",
]

# One data interval of a rule (its latest attempt): the interval's data date, what it measured
# (None for a rule that measures no number), and what it concluded.
TrendPoint = tuple[Any, float | None, str]

SEVERITY_COLOURS = {"pass": "#1a7f37", "warn": "#b35900", "fail": "#cf222e"}
# The samples shown per result, and the characters per cell: the report stays small whatever
# the samples hold (the results file keeps them whole).
SAMPLE_ROWS = 20
SAMPLE_CELL_CHARS = 200
# A page's size is counted as it is served, in UTF-8 bytes of the escaped text: a "€" is three
# bytes and a '"' six (&quot;). The bytes of one message, and of one name, code, dimension or
# threshold, and of the dataset, the pipeline, an Airflow id or the title: a longer one is cut
# (the results file keeps it whole).
MESSAGE_BYTES = 1_000
TEXT_BYTES = 160
# The bytes of each part of a sparkline point's tooltip (its time, value and severity): any
# double's digits fit (24 characters at most), a hand-built 10**400 is cut. A page has a
# thousand of them (50 rules, 20 runs), so they are kept well below TEXT_BYTES.
TIP_BYTES = 32
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
# Lone surrogates (from a JSON "\ud800" escape, say) have no UTF-8 form; the page shows U+FFFD.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_WORST_FIRST: dict[str, int] = {severity: rank for rank, severity in enumerate(reversed(SEVERITIES))}

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #d0d7de;padding:.25em .5em;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right}
.sev{color:#fff;font-weight:600;border-radius:3px;padding:0 .4em;white-space:nowrap}
.pass{background:#1a7f37}.warn{background:#b35900}.fail{background:#cf222e}
dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:0}dt{color:#59636e}dd{margin:0}
code{font-family:ui-monospace,monospace;word-break:break-all}details{margin:.2em 0}
table.samples{font-size:.9em}td.limits{white-space:nowrap}
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
    data_date: dt.datetime | None = None,
    data_interval: tuple[dt.datetime | None, dt.datetime | None] = (None, None),
    valid_count: int | None = None,
    invalid_count: int | None = None,
    rejections: Mapping[str, int] | None = None,
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
        data_date: the date of the data the run checked (what its history rows and its trend
            go by); not shown when none was given.
        data_interval: from Airflow, the DAG run's data interval, its start and its end.
        valid_count: for a split, the rows written to the valid output (give both or neither).
        invalid_count: for a split, the rows written to the invalid output.
        rejections: for a split, per rejection code, the invalid rows that carry it (a row
            breaking two rules counts under both).
        trends: per ``rule_id``, its last data intervals oldest first (``history_trends``);
            each rule with some gets a sparkline.

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
    interval = None if start is None or end is None else f"{_time(start)} to {_time(end)}"
    facts = [
        ("dataset", dataset), ("pipeline", pipeline), ("data date", _time(data_date)), ("data interval", interval),
        ("validated at", _time(validated_at)), ("DAG", dag_id), ("task", task_id), ("Airflow run", airflow_run_id),
    ]
    parts = [
        _head(f"Cola report: {dataset}" if dataset else "Cola report"),
        f"<h1>Cola report {_badge(verdict)}</h1>",
        "<dl>" + "".join(f"<dt>{name}</dt><dd>{_clip(value, TEXT_BYTES)}</dd>" for name, value in facts if value)
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


def render_index(rows: Sequence[Mapping[str, Any]], *, title: str = "Cola quality") -> str:
    """The index of a history store, as one self-contained HTML page.

    Args:
        rows: one per dataset and rule (``cola_core.history.summaries.index_rows``), each with
            ``dataset``, ``rule_id``, ``severity`` (the latest), ``code``, ``check_name``,
            ``data_date`` (its newest data interval; ``validated_at`` for a row without one),
            ``trend`` (its last intervals, oldest first) and ``current`` (whether the
            dataset's newest interval had the rule; a row without it is).
        title: the page's title.

    Returns:
        The page (a dataset, code, name, rule id or time cut at :data:`TEXT_BYTES`; times in
        UTC): the current rules worst first (fail, then warn, then pass; then by dataset
        and rule), then, in a table of their own, the rules their dataset's newest data interval did
        not have (since removed), in the same order. Their latest severity is an old one,
        which must not pass for today's.
    """
    ordered = sorted(rows, key=lambda row: (_rank(row["severity"]), str(row["dataset"]), str(row["rule_id"])))
    current = [row for row in ordered if row.get("current", True)]
    former = [row for row in ordered if not row.get("current", True)]
    parts = [_head(title), f"<h1>{_clip(title, TEXT_BYTES)}</h1>"]
    if former:
        parts.append(
            f"<p>{_rules(len(ordered))}: {len(current)} in their dataset's newest data interval, worst first, "
            f"then {len(former)} not in it</p>"
        )
    else:
        parts.append(f"<p>{_rules(len(ordered))}, worst first</p>")
    parts.append(_index_table(current))
    if former:
        parts.append("<h2>Rules not in their dataset's newest data interval</h2>")
        parts.append(
            f"<p>{_rules(len(former))} that ran before but not in their dataset's newest data interval (removed "
            "since, most likely), worst first; the severity is that of their own newest interval</p>"
        )
        parts.append(_index_table(former))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def sparkline(points: Sequence[TrendPoint], *, width: int = 120, height: int = 24) -> str:
    """Runs oldest first as an inline SVG: one circle per run, coloured by its severity, at
    the height of its metric, joined by a line through the measured ones. A run that measured
    no number, or one that is not finite (``inf``, ``nan``: it has no place on a scale), sits on
    the mid line outside the line; its tooltip says ``-``, ``inf`` or ``nan`` (an int beyond a
    float's range is drawn as ``inf`` and its tooltip gives its first digits; a value that is no number
    sits on the mid line, its text in the tooltip). Times are shown in UTC. Each part of a
    tooltip (time, value, severity) is cut at :data:`TIP_BYTES`. Empty when there are no runs."""
    if not points:
        return ""
    measured = [_scaled(value) for _, value, _ in points]
    finite = [value for value in measured if value is not None and math.isfinite(value)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    pad = 4.0
    step = (width - 2 * pad) / max(len(points) - 1, 1)

    def y(value: float | None) -> float:
        if value is None or not math.isfinite(value) or high == low:
            return height / 2
        # Halved first: the span of two floats near their range's ends (-1e308 and 1e308) is
        # past it; halving is exact, so the places are the same.
        return pad + (high / 2 - value / 2) / (high / 2 - low / 2) * (height - 2 * pad)

    circles = []
    line = []
    for index, ((when, metric, severity), value) in enumerate(zip(points, measured, strict=True)):
        cx, cy = pad + index * step, y(value)
        if value is not None and math.isfinite(value):
            line.append(f"{cx:.1f},{cy:.1f}")
        shown = "-" if metric is None else format_number(metric)
        colour = SEVERITY_COLOURS.get(severity, "#59636e") if isinstance(severity, str) else "#59636e"
        circles.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.5" fill="{colour}">'
            f"<title>{_clip(_time(when), TIP_BYTES)}: {_clip(shown, TIP_BYTES)} ({_clip(severity, TIP_BYTES)})</title>"
            "</circle>"
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
    """Write the HTML ``page`` (:func:`render_html`, :func:`render_index`) atomically: a reader
    sees the previous page or the complete new one.

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


def _e(value: Any) -> str:
    """``value`` as escaped text; nothing for None."""
    return "" if value is None else html.escape(_encodable(str(value)), quote=True)


def _encodable(text: str) -> str:
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _clip(value: Any, limit: int, *, mark: bool = False) -> str:
    """``value`` as escaped text of at most ``limit`` UTF-8 bytes (nothing for None): a longer
    one is cut at a character and ends with an ellipsis, and with ``mark`` also with how long
    it was."""
    if value is None:
        return ""
    text = _encodable(str(value))
    escaped = html.escape(text, quote=True)
    if len(escaped) <= limit // 4 or len(escaped.encode()) <= limit:  # 4 bytes a character at most
        return escaped
    ending = "…" + (f" [cut: {len(text):,} characters]" if mark else "")
    room = limit - len(ending.encode())
    kept = []
    for character in text[:room]:  # a character takes a byte at least
        cost = len(html.escape(character, quote=True).encode())
        if cost > room:
            break
        room -= cost
        kept.append(character)
    return html.escape("".join(kept), quote=True) + ending


def _rank(severity: Any) -> int:
    """Where a severity sorts, worst first; one that is none of ours (or not even hashable,
    from a hand-built row) after them."""
    return _WORST_FIRST.get(severity, len(SEVERITIES)) if isinstance(severity, str) else len(SEVERITIES)


def _scaled(value: Any) -> float | None:
    """A metric's place on a sparkline's scale: None for no metric, NaN (off the scale) for a
    value that is no number, and an infinity for an int beyond a float's range (10**400)."""
    if value is None:
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):
        return math.nan


def _badge(severity: Any) -> str:
    name = str(severity)
    css = name if name in SEVERITY_COLOURS else ""
    return f'<span class="sev {css}">{_e(name.upper())}</span>'


def _time(value: Any) -> str | None:
    """A time as the pages show it: in UTC, with its zone, so that a run's report, its trend's
    tooltips and the index agree on any host. A naive datetime is local time, as Python (and
    Spark's ``collect()``) have it. At the calendar's edges, where UTC has no such time or
    Python cannot convert it (a naive ``datetime.min``, even on a UTC host), it is shown as
    given, with its zone: a naive one with the local zone's standard offset (``+00:00`` on a
    UTC host)."""
    if isinstance(value, dt.datetime):
        shown: dt.datetime = value
        try:
            shown = value.astimezone(dt.timezone.utc)
        except (OverflowError, ValueError, OSError):
            if value.utcoffset() is None:
                shown = value.replace(tzinfo=dt.timezone(dt.timedelta(seconds=-time.timezone)))
        return shown.isoformat(sep=" ", timespec="seconds")
    return None if value is None else str(value)


def _head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_clip(title, TEXT_BYTES)}</title><style>{_CSS}</style></head><body>"
    )


def _rules(count: int) -> str:
    return f"{count} rule{'' if count == 1 else 's'}"


def _index_table(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in (
            _badge(row["severity"]), _clip(row["dataset"], TEXT_BYTES),
            f"<code>{_clip(row.get('code'), TEXT_BYTES)}</code>", _clip(row.get("check_name"), TEXT_BYTES),
            f"<code>{_clip(row['rule_id'], TEXT_BYTES)}</code>",
            _clip(_time(row.get("data_date") or row.get("validated_at")), TEXT_BYTES),
            sparkline(row.get("trend") or ()),
        )) + "</tr>"
        for row in rows
    ]
    names = ("severity", "dataset", "code", "name", "rule id", "data date", "trend")
    header = "".join(f"<th>{name}</th>" for name in names)
    return "\n".join([f"<table><thead><tr>{header}</tr></thead><tbody>", *lines, "</tbody></table>"])


def _thresholds(result: CheckResult) -> str:
    given = list((result.thresholds or {}).items())
    shown = [f"{_clip(name, TEXT_BYTES)} {_clip(value, TEXT_BYTES)}" for name, value in given[:THRESHOLDS_SHOWN]]
    if len(given) > THRESHOLDS_SHOWN:
        shown.append(f"… and {len(given) - THRESHOLDS_SHOWN} more")
    if result.baseline is not None:
        shown.append(f"baseline {_e(format_number(result.baseline))}")
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
        f'<tr><td><code>{_clip(code, TEXT_BYTES)}</code></td><td class="num">{_e(count)}</td></tr>'
        for code, count in ordered
    )
    return (
        f"{counts}<table><thead><tr><th>rejection code</th><th>rows</th></tr></thead><tbody>{rows}</tbody></table>"
        "<p>A row that breaks several rules counts under each of their codes.</p>"
    )


def _row_count(count: int | None, kind: str) -> str:
    return f"{_e(count)} {kind} row{'' if count == 1 else 's'}"


_RESULT_HEADER = ("severity", "code", "name", "dimension", "value", "failed", "threshold", "message", "trend")


def _result_row(result: CheckResult, trend: Sequence[TrendPoint]) -> str:
    value = "" if result.metric_value is None else format_number(result.metric_value)
    cells = (
        _badge(result.severity), f"<code>{_clip(result.code, TEXT_BYTES)}</code>",
        _clip(result.check_name, TEXT_BYTES), _clip(result.dimension, TEXT_BYTES), _clip(value, TEXT_BYTES),
        _failed(result.failed_count), _thresholds(result), _clip(result.message, MESSAGE_BYTES, mark=True),
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
        return _clip(format_number(count), TEXT_BYTES)


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
    head = "".join(f"<th>{_e(column)}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_cell(sample.get(column)))}</td>" for column in columns) + "</tr>"
        if isinstance(sample, Mapping)
        # A sample that is no mapping (a hand-built result's list or text) has no columns: it
        # is shown whole, across the table.
        else f'<tr><td colspan="{max(len(columns), 1)}">{_e(_cell(sample))}</td></tr>'
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

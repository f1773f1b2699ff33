"""``cola history``: exclude a run, prune old rows, and print the monitoring summaries.

    cola history exclude --history OUTPUT --run-id ID
    cola history prune --history OUTPUT --older-than 90d
    cola history daily|dimensions|trend|top --history OUTPUT [--dataset NAME] [--days N]
    cola history html --history OUTPUT PATH [--runs N]

``html`` writes an index page (``cola_core.report.index_page.render_index``): one row per dataset and rule,
worst first, with a sparkline of its last N data intervals.

The summaries and the index go by the data's date (``data_date``), each data interval counted
once, by its latest attempt: a rerun or a backfill replaces its interval's earlier attempt.
``--days N`` keeps the data dates of the last N days (UTC). ``prune --older-than`` goes by
when the rows were written (the clock), not by their data's date, so a backfill of old data
is kept as long as any other run.

``exclude`` and ``prune`` are the only commands that rewrite a store; run them when no job
appends to it. The command line is parsed by ``cola_core.cli.args``; this module carries it out.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from cola_core.common.formatting import one_line
from cola_core.errors import ColaError
from cola_core.history.retention import exclude_run, prune_history
from cola_core.history.store import collected
from cola_core.history.summaries import (
    daily_summary,
    dimension_summary,
    index_rows,
    rule_trend,
    top_offenders,
)
from cola_core.report.index_page import render_index
from cola_core.report.pages import checked_page_path, write_page
from cola_core.storage.specs import OutputSpec, history_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["SUMMARIES", "checked_history_arguments", "run_history_command"]

SUMMARIES = ("daily", "dimensions", "trend", "top")


def checked_history_arguments(args: argparse.Namespace) -> OutputSpec:
    """The store, and the numbers the command takes, checked before Spark starts.

    Raises:
        ColaError: a malformed store, a --days, --top or --runs below 1, or an html PATH that
            cannot be written (``ColaOutputError``).
    """
    for flag in ("days", "top", "runs"):
        value = getattr(args, flag, None)
        if value is not None and value < 1:
            raise ColaError(f"--{flag} must be a whole number >= 1, got {value}")
    if args.action == "html":
        checked_page_path(args.path, "PATH")
    text = args.history
    config: Any = text
    if text.lstrip().startswith("{"):
        try:
            config = json.loads(text)
        except json.JSONDecodeError as error:
            where = f"line {error.lineno}, column {error.colno}"
            raise ColaError(f"--history is not valid JSON: {error.msg} ({where})") from error
    try:
        return history_spec(config)
    except ColaError as error:
        raise ColaError(f"--history: {error}") from error


def run_history_command(args: argparse.Namespace, spark: SparkSession, store: OutputSpec) -> str:
    """Carry out ``cola history <action>`` on the checked ``store``; returns what to print."""
    if args.action == "exclude":
        marked = exclude_run(spark, store, args.run_id)
        return f"excluded run {args.run_id}: {marked} row{'' if marked == 1 else 's'} no longer count in baselines"
    if args.action == "prune":
        deleted = prune_history(spark, store, args.older_than)
        return f"pruned {deleted} row{'' if deleted == 1 else 's'} older than {args.older_than}"
    if args.action == "html":
        path = checked_page_path(args.path, "PATH")
        rows = index_rows(spark, store, runs=args.runs)
        write_page(path, render_index(rows))
        return f"wrote the index of {len(rows)} rule{'' if len(rows) == 1 else 's'} to {path}"
    frame = _summary(spark, store, args)
    rows = [row.asDict() for row in collected(frame, store)]
    if args.json:
        return "\n".join(json.dumps(row, default=str, sort_keys=False) for row in rows)
    return _table(frame.columns, rows)


def _summary(spark: SparkSession, store: OutputSpec, args: argparse.Namespace) -> DataFrame:
    if args.action == "daily":
        return daily_summary(spark, store, args.dataset, args.days)
    if args.action == "dimensions":
        return dimension_summary(spark, store, args.dataset, args.days)
    if args.action == "trend":
        return rule_trend(spark, store, args.rule_id, args.dataset, args.days)
    return top_offenders(spark, store, args.top, args.dataset, args.days)


def _table(columns: list[str], rows: list[dict[str, Any]]) -> str:
    # The store's codes, names and ids as the rules wrote them, each cell on one line.
    cells = [[("-" if row[c] is None else one_line(row[c])) for c in columns] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) if cells else len(c) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in cells]
    if not cells:
        lines.append("(no rows)")
    return "\n".join(lines)

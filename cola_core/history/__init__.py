"""The history store: appending a run's results, baselines, retention and the summaries.

Code inside the engine imports the module that defines a name; this package re-exports the
public ones so that ``from cola_core.history import history_trends`` keeps working.
"""

from __future__ import annotations

from cola_core.history.append import append_history, history_frame
from cola_core.history.baselines import read_baselines
from cola_core.history.retention import exclude_run, prune_history
from cola_core.history.store import (
    ADDED_COLUMNS,
    FAILED_RECORDS_SCHEMA,
    HISTORY_COLUMNS,
    HISTORY_SCHEMA,
    RUN_KINDS,
    RunInfo,
    check_history_store,
    collected,
    default_dataset,
    failed_records_spec,
    read_history,
)
from cola_core.history.summaries import (
    daily_summary,
    dimension_summary,
    history_trends,
    index_rows,
    rule_trend,
    top_offenders,
)

__all__ = [
    "ADDED_COLUMNS",
    "FAILED_RECORDS_SCHEMA",
    "HISTORY_COLUMNS",
    "HISTORY_SCHEMA",
    "RUN_KINDS",
    "RunInfo",
    "append_history",
    "check_history_store",
    "collected",
    "daily_summary",
    "default_dataset",
    "dimension_summary",
    "exclude_run",
    "failed_records_spec",
    "history_frame",
    "history_trends",
    "index_rows",
    "prune_history",
    "read_baselines",
    "read_history",
    "rule_trend",
    "top_offenders",
]

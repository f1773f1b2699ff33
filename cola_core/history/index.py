"""Which run of a history counts, by the data's date: pure Python over a store's rows.

A history store holds one row per result per *attempt*: Airflow reruns, clears and backfills a
task, so one data interval (one ``data_date``) may have been checked several times, in any
order. What the data's quality was is the verdict of each interval's **latest attempt** (the
newest ``validated_at``, then the greatest ``run_id``); the intervals are ordered by
``data_date``, never by when they ran. The baselines (``cola_core.history.baselines.read_baselines``),
the summaries, the report's trends and the index all read the store that way.

This module holds the part of that reading that needs no Spark: the index and the trends,
built from rows that Spark (``cola_core.history.summaries.index_rows``) or a light reader with no JVM
(the Airflow plugin reads a local parquet store with pyarrow) hands over. Both readers hand it
the columns of :data:`INDEX_COLUMNS`, so both give the same index.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

__all__ = ["INDEX_COLUMNS", "TrendPoint", "index_entries", "latest_attempts", "trend_points", "utc_of_micros"]

# The columns a reader hands over, per history row. Times are microseconds since the epoch
# (``unix_micros``): the same number whatever the reader's time zone. ``data_micros`` is the
# row's data date, or its ``validated_at`` for a row written before the store had one.
INDEX_COLUMNS = (
    "dataset", "rule_id", "code", "check_name", "severity", "metric_value", "run_id", "data_micros",
    "validated_micros", "excluded",
)

# One interval of a rule, as the pages draw it: its data date (tz-aware UTC), what it measured
# (None for a rule that measures no number), and its verdict.
TrendPoint = tuple[dt.datetime | None, float | None, str]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def utc_of_micros(micros: int | None) -> dt.datetime | None:
    """A ``unix_micros`` value as a tz-aware UTC datetime (None for a row without a time)."""
    return None if micros is None else _EPOCH + dt.timedelta(microseconds=int(micros))


def _attempt_order(row: Mapping[str, Any]) -> tuple[int, str]:
    # A row without a time sorts first, so that any timed attempt supersedes it.
    micros = row.get("validated_micros")
    return (-(2**63) if micros is None else int(micros), str(row.get("run_id") or ""))


def latest_attempts(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Per dataset, rule and data date, the row of the latest attempt.

    Excluded rows and rows without a rule id are left out first: a run someone excluded was
    declared not to count (a bad load, since fixed), so an earlier attempt of its interval
    counts instead, if there is one.
    """
    latest: dict[tuple[Any, Any, Any], Mapping[str, Any]] = {}
    for row in rows:
        if row.get("rule_id") is None or row.get("excluded"):
            continue
        key = (row["dataset"], row["rule_id"], row["data_micros"])
        kept = latest.get(key)
        if kept is None or _attempt_order(row) > _attempt_order(kept):
            latest[key] = row
    return list(latest.values())


def _data_order(row: Mapping[str, Any]) -> int:
    micros = row.get("data_micros")
    return -(2**63) if micros is None else int(micros)


def index_entries(rows: Iterable[Mapping[str, Any]], runs: int) -> list[dict[str, Any]]:
    """One entry per dataset and rule, sorted by dataset and rule id.

    Args:
        rows: history rows with the keys of :data:`INDEX_COLUMNS` (any number of attempts).
        runs: the data intervals each trend holds, the newest ones.

    Returns:
        Dicts with ``dataset``, ``rule_id``, and from its newest interval's latest attempt
        ``code``, ``check_name``, ``severity``, ``data_date`` and ``validated_at`` (tz-aware
        UTC); ``trend``, its last ``runs`` intervals oldest first, each a :data:`TrendPoint`;
        and ``current``: False for a rule its dataset's newest data interval did not check (a
        rule since removed or renamed), whose verdict is then only history.
    """
    per_rule: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    dataset_newest: dict[Any, int] = {}
    for row in latest_attempts(rows):
        per_rule.setdefault((row["dataset"], row["rule_id"]), []).append(row)
        dataset_newest[row["dataset"]] = max(dataset_newest.get(row["dataset"], -(2**63)), _data_order(row))
    entries = []
    for (dataset, rule_id), attempts in sorted(per_rule.items(), key=lambda item: (str(item[0][0]), str(item[0][1]))):
        recent = sorted(attempts, key=_data_order)[-runs:]
        latest = recent[-1]
        entries.append({
            "dataset": dataset, "rule_id": rule_id, "code": latest.get("code"), "check_name": latest.get("check_name"),
            "severity": latest.get("severity"), "data_date": utc_of_micros(latest.get("data_micros")),
            "validated_at": utc_of_micros(latest.get("validated_micros")), "trend": trend_points(recent),
            "current": _data_order(latest) == dataset_newest[dataset],
        })
    return entries


def trend_points(rows: Sequence[Mapping[str, Any]]) -> list[TrendPoint]:
    """The rows (one per interval, oldest first) as the pages' trend points."""
    return [
        (utc_of_micros(row.get("data_micros")), cast("float | None", row.get("metric_value")),
         cast(str, row.get("severity")))
        for row in rows
    ]

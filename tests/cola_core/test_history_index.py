"""Which run of a history counts: each data interval's latest attempt, intervals ordered by the
data's date (``cola_core.history.index``, pure Python: the Airflow plugin reads a store with it
and no JVM)."""

from __future__ import annotations

import datetime as dt

from cola_core.history.index import index_entries, latest_attempts, utc_of_micros

UTC = dt.timezone.utc
DAY = 86_400_000_000  # microseconds


def row(rule_id, data_day, validated_day, severity, value=None, *, run_id=None, dataset="orders", excluded=False,
        code=None):
    """A history row as a reader hands it over: times as microseconds since the epoch."""
    return {
        "dataset": dataset, "rule_id": rule_id, "code": code or rule_id.upper(), "check_name": None,
        "severity": severity, "metric_value": value, "run_id": run_id or f"run-{validated_day}",
        "data_micros": data_day * DAY, "validated_micros": validated_day * DAY, "excluded": excluded,
    }


def day(number: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(days=number)


def test_the_latest_attempt_of_each_interval_counts_whatever_order_the_intervals_ran_in():
    rows = [
        row("volume", 1, 10, "pass", 100.0),
        row("volume", 3, 11, "fail", 50.0),   # day 3 ran before day 2
        row("volume", 2, 12, "fail", 60.0),   # day 2 backfilled
        row("volume", 2, 13, "pass", 95.0),   # and rerun: this attempt counts
    ]
    assert sorted((r["data_micros"] // DAY, r["metric_value"]) for r in latest_attempts(rows)) == [
        (1, 100.0), (2, 95.0), (3, 50.0),
    ]
    (entry,) = index_entries(rows, runs=20)
    assert entry == {
        "dataset": "orders", "rule_id": "volume", "code": "VOLUME", "check_name": None, "severity": "fail",
        "data_date": day(3), "validated_at": day(11),
        "trend": [(day(1), 100.0, "pass"), (day(2), 95.0, "pass"), (day(3), 50.0, "fail")], "current": True,
    }


def test_an_excluded_attempt_leaves_the_one_before_it_and_ties_go_to_the_greater_run_id():
    rows = [
        row("volume", 1, 10, "pass", 1.0, run_id="a"),
        row("volume", 1, 10, "fail", 2.0, run_id="b"),  # same time: the greater run id is the later
        row("volume", 2, 11, "pass", 3.0),
        row("volume", 2, 12, "fail", 4.0, excluded=True),  # declared not to count
    ]
    (entry,) = index_entries(rows, runs=20)
    assert entry["trend"] == [(day(1), 2.0, "fail"), (day(2), 3.0, "pass")]
    assert (entry["severity"], entry["validated_at"]) == ("pass", day(11))


def test_a_trend_holds_the_newest_intervals_and_a_rule_missing_from_the_newest_interval_is_not_current():
    rows = [row("volume", d, d, "pass", float(d)) for d in range(1, 6)]
    rows += [row("old_rule", 2, 2, "fail"), row("nulls", 5, 5, "pass", dataset="customers")]
    entries = index_entries(rows, runs=3)
    assert [(e["dataset"], e["rule_id"], e["data_date"], e["current"]) for e in entries] == [
        ("customers", "nulls", day(5), True), ("orders", "old_rule", day(2), False), ("orders", "volume", day(5), True),
    ]
    assert entries[2]["trend"] == [(day(3), 3.0, "pass"), (day(4), 4.0, "pass"), (day(5), 5.0, "pass")]


def test_rows_without_a_rule_id_are_left_out_and_times_are_utc():
    assert index_entries([row("x", 1, 1, "pass") | {"rule_id": None}], runs=20) == []
    assert utc_of_micros(None) is None
    assert utc_of_micros(1_700_000_000_123_456) == dt.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)

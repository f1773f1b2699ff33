"""The monitoring summaries and the HTML report's trends and index: each data interval's latest
attempt counts, excluded runs are left out, and times are UTC wherever the store is read."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from cola_core import Cola
from cola_core.history.store import RunInfo
from cola_core.history.summaries import (
    daily_summary,
    dimension_summary,
    history_trends,
    index_rows,
    rule_trend,
    top_offenders,
)
from cola_helpers import history_day, runs_of

pytestmark = [pytest.mark.spark, pytest.mark.connect]


# -- monitoring, on a hand-built store -----------------------------------------------------------


def test_daily_summary(spark, monitored_store):
    assert [tuple(row) for row in daily_summary(spark, monitored_store).collect()] == [
        (dt.date(2026, 3, 2), "orders", 1, 2, 1, 1, 0, 100.0),
        (dt.date(2026, 3, 1), "orders", 2, 4, 2, 0, 2, 50.0),
    ]


def test_dimension_summary(spark, monitored_store):
    assert [tuple(row) for row in dimension_summary(spark, monitored_store).collect()] == [
        (dt.date(2026, 3, 2), "orders", "Completeness", 1, 1, 0, 0, 100.0),
        (dt.date(2026, 3, 2), "orders", "Validity", 1, 0, 1, 0, 100.0),
        (dt.date(2026, 3, 1), "orders", "Completeness", 2, 0, 0, 2, 0.0),
        (dt.date(2026, 3, 1), "orders", "Validity", 2, 2, 0, 0, 100.0),
    ]


def test_rule_trend(spark, monitored_store):
    assert [tuple(row) for row in rule_trend(spark, monitored_store, "r1", days=None).collect()] == [
        ("orders", "r1", dt.date(2026, 3, 1), "R1", 2, 0, 0, 2, 0.0, 2.0, 2.0),
        ("orders", "r1", dt.date(2026, 3, 2), "R1", 1, 1, 0, 0, 100.0, 0.0, 0.0),
    ]


def test_top_offenders(spark, monitored_store):
    assert [tuple(row) for row in top_offenders(spark, monitored_store, top_n=1).collect()] == [
        ("orders", "r1", "R1", 3, 1, 0, 2, 33.33),
    ]


# -- the report's trends and index --------------------------------------------------------------


def test_the_index_and_trends_leave_out_excluded_runs_and_mark_rules_the_latest_run_dropped(spark, tmp_path):
    store = str(tmp_path / "h")
    kept = {"type": "row_count", "must_be": "> 20", "id": "kept"}
    dropped = {"type": "row_count", "must_be": "> 0", "id": "dropped"}
    # run-3 is a bad load (5 rows) excluded after it ran; run-4 no longer has the rule "dropped".
    runs_of(spark, store, [30, 40, 5], [kept, dropped], exclude={"run-3"})
    runs_of_day4 = RunInfo(dataset="orders", run_id="run-4", validated_at=history_day(4))
    Cola().run(spark.range(50), [kept], history=store, run_info=runs_of_day4)
    when = [history_day(day) for day in (1, 2, 4)]  # tz-aware UTC, as written
    assert history_trends(spark, store, "orders") == {
        "kept": [(when[0], 30.0, "pass"), (when[1], 40.0, "pass"), (when[2], 50.0, "pass")],
        "dropped": [(when[0], 30.0, "pass"), (when[1], 40.0, "pass")],
    }
    rows = index_rows(spark, store)
    assert [(r["rule_id"], r["severity"], r["validated_at"], r["current"], len(r["trend"])) for r in rows] == [
        ("dropped", "pass", when[1], False, 2),
        ("kept", "pass", when[2], True, 3),
    ]
    assert {row["validated_at"].tzinfo for row in rows} == {dt.timezone.utc}


# The history's trends and index read on a host in Paris, its Spark session's time zone left to
# its default (the JVM's, Paris too); what it prints is compared with what was written.
_IN_PARIS = """
import json, sys, time
from cola_core.history.summaries import history_trends, index_rows
from cola_core.report.pages import sparkline
from cola_core.storage.session import spark_session, stop_session

store, remote = sys.argv[1], sys.argv[2] or None
spark, started = spark_session(remote or "local[1]", [("spark.ui.enabled", "false")])
try:
    [trend] = history_trends(spark, store, "orders").values()
    [row] = index_rows(spark, store)
    print(json.dumps({
        "zone": time.strftime("%Z", time.localtime(0)), "session": None if remote else spark.conf.get(
            "spark.sql.session.timeZone"),
        "trend": [point[0].isoformat() for point in trend], "latest": row["validated_at"].isoformat(),
        "tooltips": [line.split("</title>")[0] for line in sparkline(trend).split("<title>")[1:]],
    }))
finally:
    if started:
        stop_session(spark)
"""


def test_trends_and_the_index_give_the_written_utc_times_on_a_host_in_another_time_zone(
    spark, session_args, tmp_path
):
    # collect() gives a timestamp as a naive datetime in the process's local time: on this host
    # 2026-01-15 23:30:15 UTC would come back as 2026-01-16 00:30:15, and the page's own time
    # (tz-aware UTC) would not match its trend's. One winter time, one summer time.
    store = str(tmp_path / "h")
    utc = dt.timezone.utc
    written = [dt.datetime(2026, 1, 15, 23, 30, 15, 250_000, tzinfo=utc), dt.datetime(2026, 7, 1, 6, 0, tzinfo=utc)]
    for number, at in enumerate(written):
        Cola().run(spark.range(3), [{"type": "row_count", "must_be": "> 0", "id": "volume"}], history=store,
                   run_info=RunInfo(dataset="orders", run_id=f"run-{number}", validated_at=at))
    remote = session_args[1] if session_args else ""
    env = {**os.environ, "TZ": "Europe/Paris", "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-c", _IN_PARIS, store, remote], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["zone"] == "CET"  # the process really ran in Paris
    if not remote:
        assert seen["session"] == "Europe/Paris"
    assert [dt.datetime.fromisoformat(text) for text in seen["trend"]] == written
    assert seen["trend"] == ["2026-01-15T23:30:15.250000+00:00", "2026-07-01T06:00:00+00:00"]
    assert seen["latest"] == "2026-07-01T06:00:00+00:00"
    assert seen["tooltips"] == ["2026-01-15 23:30:15+00:00: 3 (pass)", "2026-07-01 06:00:00+00:00: 3 (pass)"]

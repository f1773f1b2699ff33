"""Appending to the history store: one row per result per run, appended by ``run``,
``split_write``, the command line and ``append_history`` itself; its samples beside it;
concurrent runs lose nothing."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from cola_core import Cola
from cola_core.history.append import append_history
from cola_core.history.store import HISTORY_COLUMNS, RunInfo
from cola_helpers import DATA, HISTORY_RULES, ORDERS_ARGV

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def history_rows(spark, path, *columns):
    return sorted(tuple(row) for row in spark.read.parquet(str(path)).select(*columns).collect())


def test_a_run_appends_one_row_per_result_with_what_it_measured(spark, people, tmp_path):
    store = tmp_path / "history"
    at = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
    info = RunInfo(dataset="crm.people", pipeline="nightly", dag_id="d", task_id="t", airflow_run_id="r",
                   run_id="run-1", validated_at=at, data_date=dt.date(2026, 4, 30),
                   data_interval_start=dt.datetime(2026, 4, 29), data_interval_end=dt.datetime(2026, 4, 30),
                   logical_date=dt.datetime(2026, 4, 30), map_index=3)
    results = Cola().run(people, HISTORY_RULES, history=str(store), run_info=info)
    frame = spark.read.parquet(str(store))
    assert tuple(frame.columns) == HISTORY_COLUMNS
    row_count_id = results[1].rule_id
    sql_id = results[2].rule_id
    # Times as collect() gives them: naive, in this (UTC) host's time; a date is its midnight in UTC.
    interval = (dt.datetime(2026, 4, 30), dt.datetime(2026, 4, 29), dt.datetime(2026, 4, 30), dt.datetime(2026, 4, 30),
                3, "check")
    assert sorted(tuple(row) for row in frame.drop("validated_at").collect()) == sorted([
        ("run-1", "nightly", "crm.people", "emails", "not_null(email)", "not_null", None, "Completeness", "fail",
         False, 2, None, None, 3, "d", "t", "r", False, *interval),
        ("run-1", "nightly", "crm.people", row_count_id, "row_count", "row_count", None, None, "pass", True, 0,
         3.0, None, 3, "d", "t", "r", False, *interval),
        ("run-1", "nightly", "crm.people", sql_id, "sql", "sql", None, None, "pass", True, 0, None, None, None,
         "d", "t", "r", False, *interval),
    ])
    assert {row.validated_at for row in frame.collect()} == {at.replace(tzinfo=None)}


def test_runs_append_and_share_a_run_id_within_a_run(spark, people, tmp_path):
    store = str(tmp_path / "history")
    for _ in range(3):
        Cola().run(people, HISTORY_RULES, history=store, dataset="crm.people")
    frame = spark.read.parquet(store)
    assert frame.count() == 9
    by_run = {row.run_id: row["count"] for row in frame.groupBy("run_id").count().collect()}
    assert sorted(by_run.values()) == [3, 3, 3]


def test_samples_go_beside_the_store_and_never_inside_it(spark, people, tmp_path):
    store = tmp_path / "history"
    Cola().run(people, HISTORY_RULES, samples=5, history=str(store), run_info=RunInfo(dataset="p", run_id="run-1"))
    assert spark.read.parquet(str(store)).count() == len(HISTORY_RULES)
    records = spark.read.parquet(str(tmp_path / "history_failed_records"))
    assert sorted((r.run_id, r.rule_id, r.code, json.loads(r.record)["id"]) for r in records.collect()) == [
        ("run-1", "emails", "not_null(email)", 1), ("run-1", "emails", "not_null(email)", 3),
    ]
    assert sorted(os.listdir(tmp_path)) == ["history", "history_failed_records"]


def test_split_write_appends_its_results_once_the_outputs_are_published(spark, people, tmp_path):
    store = str(tmp_path / "history")
    outcome = Cola().split_write(people, HISTORY_RULES[:2], str(tmp_path / "valid"), str(tmp_path / "invalid"),
                                 history=store, dataset="crm.people")
    assert (outcome.valid_count, outcome.invalid_count) == (1, 2)
    assert history_rows(spark, store, "rule_id", "severity", "failed_count") == sorted([
        ("emails", "fail", 2), (outcome.results[1].rule_id, "pass", 0),
    ])


def test_append_history_alone_writes_hand_made_results(spark, tmp_path):
    from cola_core import CheckResult

    store = str(tmp_path / "h")
    result = CheckResult("custom", True, "fine", rule_id="my.rule")
    append_history(spark, store, [result], RunInfo(dataset="d", run_id="r"))
    assert history_rows(spark, store, "run_id", "rule_id", "dataset", "severity", "rows_checked") == [
        ("r", "my.rule", "d", "pass", None),
    ]


def _cola(*args, cwd):
    # As scripts/test runs it: Spark binds to loopback, without warning that it does.
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.Popen(
        [sys.executable, "-m", "cola_core", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env,
    )


def test_several_command_line_runs_at_once_lose_nothing(spark, session_args, tmp_path):
    store = tmp_path / "history"
    rules = str(DATA / "rules_split.json")
    quiet = session_args or ["--conf", "spark.ui.enabled=false"]  # two UIs would warn of their ports
    runs = [_cola("check", "--rules", rules, *ORDERS_ARGV, "--history", str(store), "--data-date", f"2026-03-0{day}",
                  *quiet, cwd=tmp_path)
            for day in (1, 2)]  # two at once race as three do, at two thirds of the cost
    outcomes = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [1, 1], outcomes
    # Each is a first run on a store that does not exist yet: an expected state, which costs no
    # Java stack trace (Spark logged one, at WARN, when asked to read the missing folder).
    jvm_notice = "WARNING: Using incubator modules: jdk.incubator.vector"
    assert [[line for line in err.splitlines() if line != jvm_notice] for _, err in outcomes] == [[], []]
    frame = spark.read.parquet(str(store))
    rules_count = len(json.loads((DATA / "rules_split.json").read_text()))
    assert frame.count() == 2 * rules_count
    assert sorted(row["count"] for row in frame.groupBy("run_id").count().collect()) == [rules_count] * 2
    assert sorted({row.data_date for row in frame.collect()}) == [dt.datetime(2026, 3, day) for day in (1, 2)]
    # The dataset is the source's path when no --dataset is given.
    assert {row.dataset for row in frame.collect()} == {str(DATA / "orders.csv")}
    assert sorted(name for name in os.listdir(tmp_path) if not name.startswith(".")) == ["history"]

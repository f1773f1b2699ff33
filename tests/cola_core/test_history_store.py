"""The history store: one row per result per run, appended by ``run``, ``split_write``, the
command line and the operators; its samples beside it; concurrent runs lose nothing."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from cola_core import Cola, ColaError, ColaOutputError
from cola_core.cli.args import job_from_argv
from cola_core.common.formatting import format_number
from cola_core.history.store import (
    ADDED_COLUMNS,
    HISTORY_COLUMNS,
    HISTORY_SCHEMA,
    RunInfo,
    append_history,
    daily_summary,
    dimension_summary,
    exclude_run,
    history_trends,
    index_rows,
    prune_history,
    read_history,
    rule_trend,
    top_offenders,
)
from cola_core.job.spec import JobSpec
from cola_core.storage.specs import history_spec, parse_source
from cola_helpers import DATA, ORDERS_ARGV

pytestmark = [pytest.mark.spark, pytest.mark.connect]

RULES = [
    {"type": "not_null", "columns": ["email"], "id": "emails", "dimension": "Completeness"},
    {"type": "row_count", "must_be": "> 0"},
    {"type": "sql", "query": "SELECT count(*) > 0 FROM _validation_df"},
]


@pytest.fixture
def people(spark):
    return spark.createDataFrame([(1, None), (2, "b@x.io"), (3, None)], "id int, email string")


def history_rows(spark, path, *columns):
    return sorted(tuple(row) for row in spark.read.parquet(str(path)).select(*columns).collect())


def test_a_run_appends_one_row_per_result_with_what_it_measured(spark, people, tmp_path):
    store = tmp_path / "history"
    at = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
    info = RunInfo(dataset="crm.people", pipeline="nightly", dag_id="d", task_id="t", airflow_run_id="r",
                   run_id="run-1", validated_at=at, data_date=dt.date(2026, 4, 30),
                   data_interval_start=dt.datetime(2026, 4, 29), data_interval_end=dt.datetime(2026, 4, 30),
                   logical_date=dt.datetime(2026, 4, 30), map_index=3)
    results = Cola().run(people, RULES, history=str(store), run_info=info)
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


def test_without_a_data_date_a_run_is_keyed_by_its_own_time_and_a_split_says_so(spark, people, tmp_path):
    store = str(tmp_path / "history")
    at = dt.datetime(2026, 5, 1, 12, 30, tzinfo=dt.timezone.utc)
    Cola().run(people, RULES[:1], history=store, run_info=RunInfo(dataset="p", run_id="run-1", validated_at=at))
    Cola().split_write(people, RULES[:1], str(tmp_path / "v"), str(tmp_path / "i"), history=store, dataset="p",
                       data_date=dt.datetime(2026, 5, 1, 8, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    rows = sorted(spark.read.parquet(store).select("data_date", "run_kind", "map_index").collect())
    assert [tuple(row) for row in rows] == [
        (dt.datetime(2026, 5, 1, 6, 0), "split", None), (dt.datetime(2026, 5, 1, 12, 30), "check", None),
    ]


def test_runs_append_and_share_a_run_id_within_a_run(spark, people, tmp_path):
    store = str(tmp_path / "history")
    for _ in range(3):
        Cola().run(people, RULES, history=store, dataset="crm.people")
    frame = spark.read.parquet(store)
    assert frame.count() == 9
    by_run = {row.run_id: row["count"] for row in frame.groupBy("run_id").count().collect()}
    assert sorted(by_run.values()) == [3, 3, 3]


def test_samples_go_beside_the_store_and_never_inside_it(spark, people, tmp_path):
    store = tmp_path / "history"
    Cola().run(people, RULES, samples=5, history=str(store), run_info=RunInfo(dataset="p", run_id="run-1"))
    assert spark.read.parquet(str(store)).count() == len(RULES)
    records = spark.read.parquet(str(tmp_path / "history_failed_records"))
    assert sorted((r.run_id, r.rule_id, r.code, json.loads(r.record)["id"]) for r in records.collect()) == [
        ("run-1", "emails", "not_null(email)", 1), ("run-1", "emails", "not_null(email)", 3),
    ]
    assert sorted(os.listdir(tmp_path)) == ["history", "history_failed_records"]


def test_split_write_appends_its_results_once_the_outputs_are_published(spark, people, tmp_path):
    store = str(tmp_path / "history")
    outcome = Cola().split_write(people, RULES[:2], str(tmp_path / "valid"), str(tmp_path / "invalid"),
                                 history=store, dataset="crm.people")
    assert (outcome.valid_count, outcome.invalid_count) == (1, 2)
    assert history_rows(spark, store, "rule_id", "severity", "failed_count") == sorted([
        ("emails", "fail", 2), (outcome.results[1].rule_id, "pass", 0),
    ])


def test_a_table_store(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_history_test")
    try:
        Cola().run(people, RULES, history={"table": "cola_history_test"}, dataset="crm.people")
        Cola().run(people, RULES, history={"table": "cola_history_test"}, dataset="crm.people")
        assert spark.table("cola_history_test").count() == 6
        assert read_history(spark, {"table": "cola_history_test"}).count() == 6
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_history_test")


def test_a_store_that_is_not_a_history_is_refused_before_anything_is_written(spark, people, tmp_path, job_counter):
    store = tmp_path / "other"
    spark.range(3).write.parquet(str(store))
    before = sorted(os.listdir(store))
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(people, RULES[:1], str(tmp_path / "v"), str(tmp_path / "i"), history=str(store),
                           dataset="p")
    assert str(raised.value) == (
        f"{store} is not a Cola history store: it lacks {', '.join(HISTORY_COLUMNS)}; it has id, which a history "
        "has not. Use a new path or table for the history, or one Cola wrote"
    )
    assert sorted(os.listdir(store)) == before
    assert sorted(os.listdir(tmp_path)) == ["other"]


def test_a_column_of_another_type_is_named(spark, people, tmp_path):
    store = tmp_path / "history"
    Cola().run(people, RULES[:1], history=str(store), dataset="p")
    spark.read.parquet(str(store)).selectExpr(*[
        "CAST(failed_count AS string) AS failed_count" if c == "failed_count" else c for c in HISTORY_COLUMNS
    ]).write.parquet(str(tmp_path / "retyped"))
    with pytest.raises(ColaOutputError, match=r"is not a Cola history store: failed_count is string, not bigint\."):
        Cola().run(people, RULES[:1], history=str(tmp_path / "retyped"), dataset="p")


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ({"path": "/h", "mode": "overwrite"},
         "a history store is only appended to, but its mode is 'overwrite'; leave 'mode' out or set it to \"append\""),
        ({"path": "/h", "partition_by": ["dataset"]}, "a history store is not partitioned; leave 'partition_by' out"),
        ({"path": "/h", "format": "csv"},
         "a history store on a path is parquet or orc, not 'csv' (a table may be any format)"),
        ({"path": "/h", "format": "json"},
         "a history store on a path is parquet or orc, not 'json' (a table may be any format)"),
        ({"table": "a b"}, "output 'table' must be a table name such as db.orders (or `odd name`), got 'a b'"),
    ],
    ids=["overwrite", "partitioned", "csv", "json", "bad table"],
)
def test_malformed_stores_are_refused_in_pure_python(store, message):
    with pytest.raises(ColaOutputError) as raised:
        history_spec(store)
    assert str(raised.value) == message


def test_a_history_needs_a_dataset_and_a_dataset_needs_a_history(people, tmp_path):
    with pytest.raises(ColaError, match=r"^a history needs 'dataset', the name of what was checked"):
        Cola().run(people, RULES, history=str(tmp_path / "h"))
    with pytest.raises(ColaError, match=r"^'dataset', 'data_date' and 'run_info' say what a history row is about; give"):
        Cola().run(people, RULES, dataset="p")
    assert not (tmp_path / "h").exists()


def test_append_history_alone_writes_hand_made_results(spark, tmp_path):
    from cola_core import CheckResult

    store = str(tmp_path / "h")
    result = CheckResult("custom", True, "fine", rule_id="my.rule")
    append_history(spark, store, [result], RunInfo(dataset="d", run_id="r"))
    assert history_rows(spark, store, "run_id", "rule_id", "dataset", "severity", "rows_checked") == [
        ("r", "my.rule", "d", "pass", None),
    ]


# -- the command line and the job spec --------------------------------------------------------


def test_the_job_spec_carries_the_history_through_its_command_line(tmp_path):
    spec = JobSpec(rules=str(DATA / "rules_split.json"), source=None, history=str(tmp_path / "h"), dataset="x",
                   dag_id="d", task_id="t", airflow_run_id="r")
    assert spec.history.mode == "append"
    argv = dataclasses.replace(spec, source=parse_source({"path": "/in", "format": "csv"})).to_argv()
    again = job_from_argv(argv)
    assert (again.history, again.dataset, again.dag_id, again.task_id, again.airflow_run_id) == (
        spec.history, "x", "d", "t", "r",
    )
    assert job_from_argv(again.to_argv()) == again
    with pytest.raises(ColaError, match=r"^dataset is written beside the results in a history store; give history"):
        JobSpec(rules=(), dataset="x")


def test_the_job_spec_carries_the_data_interval_and_the_task_s_ids_with_or_without_a_history():
    # What the operators give: the task's ids and its DAG run's interval, shown in the report
    # even without a history.
    spec = JobSpec(rules="/r.yaml", source=parse_source({"path": "/in", "format": "csv"}), dag_id="d", task_id="t",
                   airflow_run_id="r", data_date="2024-01-02", data_interval_start="2024-01-01T00:00:00+00:00",
                   data_interval_end="2024-01-02T02:00:00+02:00", logical_date="2024-01-02T00:00:00Z", map_index=2)
    # Every time is kept as the ISO text of its UTC instant; a date is its midnight in UTC.
    assert (spec.data_date, spec.data_interval_start, spec.data_interval_end, spec.logical_date) == (
        "2024-01-02T00:00:00+00:00", "2024-01-01T00:00:00+00:00", "2024-01-02T00:00:00+00:00",
        "2024-01-02T00:00:00+00:00",
    )
    argv = spec.to_argv()
    assert argv[argv.index("--data-date"):argv.index("--fail-exit-code")] == [
        "--data-date", "2024-01-02T00:00:00+00:00", "--data-interval-start", "2024-01-01T00:00:00+00:00",
        "--data-interval-end", "2024-01-02T00:00:00+00:00", "--logical-date", "2024-01-02T00:00:00+00:00",
        "--map-index", "2",
    ]
    assert job_from_argv(argv) == spec
    with pytest.raises(ColaError) as raised:
        job_from_argv([*argv[:argv.index("--data-date")], "--data-date", "2024-02-30"])
    assert str(raised.value) == (
        "--data-date must be an ISO date or timestamp such as 2024-01-31 or 2024-01-31T06:00:00Z: "
        "day is out of range for month"
    )
    with pytest.raises(ColaError, match=r"^map_index must be a whole number, got '2'$"):
        JobSpec(rules=(), map_index="2")


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
    quiet = session_args or ["--conf", "spark.ui.enabled=false"]  # three UIs would warn of their ports
    runs = [_cola("check", "--rules", rules, *ORDERS_ARGV, "--history", str(store), "--data-date", f"2026-03-0{day}",
                  *quiet, cwd=tmp_path)
            for day in (1, 2, 3)]
    outcomes = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [1, 1, 1], outcomes
    # Each is a first run on a store that does not exist yet: an expected state, which costs no
    # Java stack trace (Spark logged one, at WARN, when asked to read the missing folder).
    jvm_notice = "WARNING: Using incubator modules: jdk.incubator.vector"
    assert [[line for line in err.splitlines() if line != jvm_notice] for _, err in outcomes] == [[], [], []]
    frame = spark.read.parquet(str(store))
    rules_count = len(json.loads((DATA / "rules_split.json").read_text()))
    assert frame.count() == 3 * rules_count
    assert sorted(row["count"] for row in frame.groupBy("run_id").count().collect()) == [rules_count] * 3
    assert sorted({row.data_date for row in frame.collect()}) == [dt.datetime(2026, 3, day) for day in (1, 2, 3)]
    # The dataset is the source's path when no --dataset is given.
    assert {row.dataset for row in frame.collect()} == {str(DATA / "orders.csv")}
    assert sorted(name for name in os.listdir(tmp_path) if not name.startswith(".")) == ["history"]


# -- change and anomaly thresholds, against a store built over several runs --------------------


def _day(day: int) -> dt.datetime:
    return dt.datetime(2026, 3, day, 6, 0, tzinfo=dt.timezone.utc)


def runs_of(spark, store, counts, rules, exclude=()):
    """Run ``rules`` once per row count, one day apart; the results of each run, in order."""
    outcomes = []
    for day, rows in enumerate(counts, start=1):
        info = RunInfo(dataset="orders", run_id=f"run-{day}", validated_at=_day(day))
        outcomes.append(Cola().run(spark.range(rows), rules, history=store, run_info=info))
        if f"run-{day}" in exclude:
            exclude_run(spark, store, f"run-{day}")
    return outcomes


def test_relative_and_absolute_change_from_the_previous_run(spark, tmp_path):
    rules = [{"type": "row_count", "must_be": "change between -10% and 10%", "id": "relative"},
             {"type": "row_count", "must_be": "change < 5", "warn": "change between -2 and 2", "id": "absolute"}]
    first, second, third = runs_of(spark, str(tmp_path / "h"), [100, 104, 80], rules)
    assert [(r.severity, r.message, r.baseline) for r in first] == [
        ("pass", "row_count = 100: no baseline yet, so must_be (change between -10% and 10%) passes", None),
        ("pass", "row_count = 100: no baseline yet, so must_be (change < 5) passes", None),
    ]
    assert [(r.severity, r.message, r.baseline, r.metric_value) for r in second] == [
        ("pass", "row_count = 104, change +4% from baseline 100 meets must_be (change between -10% and 10%)",
         100.0, 104),
        ("warn", "row_count = 104, change +4 from baseline 100 violates warn (change between -2 and 2)", 100.0, 104),
    ]
    # change < 5 bounds only increases: a drop of 24 meets it.
    assert [(r.severity, r.message) for r in third] == [
        ("fail", "row_count = 80, change -23.0769% from baseline 104 violates must_be (change between -10% and 10%)"),
        ("warn", "row_count = 80, change -24 from baseline 104 violates warn (change between -2 and 2)"),
    ]
    assert third[0].to_dict()["baseline"] == 104.0


def test_an_average_or_median_baseline_over_the_last_runs_and_an_excluded_run(spark, tmp_path):
    rules = [
        {"type": "row_count", "must_be": "change between -10% and 10%", "baseline": {"runs": 3}, "id": "avg"},
        {"type": "row_count", "must_be": "change between -10% and 10%", "baseline": {"runs": 3, "aggregate": "median"},
         "id": "median"},
    ]
    # run-4 (a bad load of 10 rows) is excluded after it ran: the later baselines skip it.
    *_, fifth = runs_of(spark, str(tmp_path / "h"), [100, 110, 130, 10, 120], rules, exclude={"run-4"})
    assert [(r.baseline, r.severity) for r in fifth] == [(mean := (100 + 110 + 130) / 3, "pass"), (110.0, "pass")]
    assert fifth[0].message == (
        f"row_count = 120, change +{format_number(100 * (120 - mean) / mean)}% from baseline "
        f"{format_number(mean)} meets must_be (change between -10% and 10%)"
    )
    excluded = spark.read.parquet(str(tmp_path / "h")).where("excluded").select("run_id").distinct().collect()
    assert [row.run_id for row in excluded] == ["run-4"]


def test_a_relative_change_from_zero(spark, tmp_path):
    rules = [{"type": "row_count", "must_be": "change < 10%"}]
    _, zero, some = runs_of(spark, str(tmp_path / "h"), [0, 0, 5], rules)
    assert zero[0].message == "row_count = 0, change 0% from baseline 0 meets must_be (change < 10%)"
    assert (some[0].severity, some[0].message) == (
        "fail", "row_count = 5, from baseline 0, which is 0, so there is no relative change violates must_be "
                "(change < 10%)",
    )


def test_the_anomaly_form_warms_up_then_scores_against_the_recent_runs(spark, tmp_path):
    rules = [{"type": "row_count", "must_be": "anomaly < 3"}]
    outcomes = runs_of(spark, str(tmp_path / "h"), [100, 102, 98, 101, 99, 103, 60], rules)
    assert [r[0].message for r in outcomes[:5]] == [
        f"row_count = {rows}: warming up ({n} of 5 earlier runs), so must_be (anomaly < 3) passes"
        for n, rows in enumerate([100, 102, 98, 101, 99])
    ]
    # Median 100, MAD 1 (deviations 0, 2, 2, 1, 1): 103 scores 3 / 1.4826 = 2.0235.
    assert (outcomes[5][0].severity, outcomes[5][0].message) == (
        "pass", "row_count = 103, anomaly score 2.0235 against the last 5 runs (median 100) meets must_be (anomaly < 3)"
    )
    assert outcomes[6][0].severity == "fail"
    assert outcomes[6][0].baseline == 100.5


def test_a_metric_of_another_dataset_is_no_baseline(spark, tmp_path):
    store = str(tmp_path / "h")
    rules = [{"type": "row_count", "must_be": "change < 10%"}]
    Cola().run(spark.range(100), rules, history=store, dataset="a")
    (result,) = Cola().run(spark.range(500), rules, history=store, dataset="b")
    assert result.message == "row_count = 500: no baseline yet, so must_be (change < 10%) passes"


def test_the_baselines_of_a_block_are_one_query(spark, tmp_path, job_counter):
    store = str(tmp_path / "h")
    rules = [{"type": "row_count", "must_be": "change < 10%"}, {"type": "avg", "column": "id", "must_be": "change < 5"},
             {"type": "max", "column": "id", "must_be": "anomaly < 3"}]
    df = spark.range(10)
    Cola().run(df, rules, history=store, dataset="d")
    from cola_core.job.runner import _with_history
    from cola_core.storage.specs import history_spec as spec_of

    checks = Cola().parse(rules)
    with job_counter.count() as counted:
        judged = _with_history(df, checks, spec_of(store), RunInfo(dataset="d"))
    # The store's schema (Spark reads the parquet footers), then the one query of the baselines.
    assert counted.jobs == 2
    assert [check.history_values for check in judged] == [(10.0,), (4.5,), (9.0,)]


def test_a_change_rule_needs_a_history_store(people):
    with pytest.raises(ColaError) as raised:
        Cola().run(people, [{"type": "row_count", "min": 1}, {"type": "row_count", "must_be": "change < 10%"}])
    assert str(raised.value) == (
        "rules[1] (row_count): its thresholds compare with earlier runs, which a history store holds: give one "
        "(history= and dataset=, or cola --history)"
    )


# -- monitoring, on a hand-built store -----------------------------------------------------------


@pytest.fixture
def monitored(spark, tmp_path):
    from cola_core import CheckResult

    store = str(tmp_path / "h")
    days = {
        1: [("r1", "fail", "Completeness", 2.0), ("r2", "pass", "Validity", 1.0)],
        2: [("r1", "pass", "Completeness", 0.0), ("r2", "warn", "Validity", 3.0)],
    }
    for day, results in days.items():
        # Day 1 has two runs, an hour apart: with no data date given, each is keyed by its own time.
        for hour, run in enumerate(("a", "b") if day == 1 else ("c",)):
            made = [CheckResult("x", severity != "fail", "m", int(severity == "fail"), metric, severity,
                                code=rule_id.upper(), dimension=dimension, rule_id=rule_id)
                    for rule_id, severity, dimension, metric in results]
            append_history(spark, store, made, RunInfo(dataset="orders", run_id=f"{run}{day}",
                                                      validated_at=_day(day) + dt.timedelta(hours=hour)))
    return store


def test_daily_summary(spark, monitored):
    assert [tuple(row) for row in daily_summary(spark, monitored).collect()] == [
        (dt.date(2026, 3, 2), "orders", 1, 2, 1, 1, 0, 100.0),
        (dt.date(2026, 3, 1), "orders", 2, 4, 2, 0, 2, 50.0),
    ]


def test_dimension_summary(spark, monitored):
    assert [tuple(row) for row in dimension_summary(spark, monitored).collect()] == [
        (dt.date(2026, 3, 2), "orders", "Completeness", 1, 1, 0, 0, 100.0),
        (dt.date(2026, 3, 2), "orders", "Validity", 1, 0, 1, 0, 100.0),
        (dt.date(2026, 3, 1), "orders", "Completeness", 2, 0, 0, 2, 0.0),
        (dt.date(2026, 3, 1), "orders", "Validity", 2, 2, 0, 0, 100.0),
    ]


def test_rule_trend(spark, monitored):
    assert [tuple(row) for row in rule_trend(spark, monitored, "r1", days=None).collect()] == [
        ("orders", "r1", dt.date(2026, 3, 1), "R1", 2, 0, 0, 2, 0.0, 2.0, 2.0),
        ("orders", "r1", dt.date(2026, 3, 2), "R1", 1, 1, 0, 0, 100.0, 0.0, 0.0),
    ]


def test_top_offenders(spark, monitored):
    assert [tuple(row) for row in top_offenders(spark, monitored, top_n=1).collect()] == [
        ("orders", "r1", "R1", 3, 1, 0, 2, 33.33),
    ]


def test_prune_deletes_what_is_older_than_the_duration(spark, monitored):
    # The store's days are March 1st and 2nd, 2026: a duration reaching a day before them keeps all.
    reach = (dt.datetime.now(dt.timezone.utc) - _day(1)).days + 2
    assert prune_history(spark, monitored, f"{reach}d") == 0
    assert prune_history(spark, monitored, "1d") == 6
    assert spark.read.parquet(monitored).count() == 0
    with pytest.raises(ColaError, match=r"^--older-than must be a duration such as 90d, 12h or 3600s, got '5%'$"):
        prune_history(spark, monitored, "5%")


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"type": "not_null", "columns": ["a"], "must_be": "change < 5"},
         "rules[0] (not_null): 'must_be' judges a metric, and this rule type measures none (it counts offending "
         "rows); a change or bound over time needs a metric rule, such as missing_count or row_count"),
        ({"type": "unique", "columns": ["a"], "tolerance": "change < 5%"},
         "rules[0] (unique): 'tolerance' (change < 5%) compares with earlier runs, but a tolerance is a share of "
         "this run's rows; a change threshold belongs in 'must_be' or 'warn' of a metric rule"),
        ({"type": "row_count", "must_be": "> 1", "baseline": {"runs": 3}},
         "rules[0] (row_count): 'baseline' says which earlier runs a change or anomaly threshold compares with, "
         "but neither 'must_be' nor 'warn' is one (such as \"change between -10% and 10%\")"),
        ({"type": "row_count", "must_be": "change < 1", "baseline": {"runs": 0}},
         "rules[0] (row_count): 'baseline.runs' must be a whole number from 1 to 1000, got 0"),
        ({"type": "row_count", "must_be": "change < 1", "baseline": {"runs": 2, "aggregate": "max"}},
         "rules[0] (row_count): 'baseline.aggregate' must be 'avg' or 'median', got 'max'"),
        ({"type": "row_count", "must_be": "change < 1", "baseline": {"n": 2}},
         "rules[0] (row_count): 'baseline' has unknown keys n; it takes 'runs' and 'aggregate'"),
    ],
    ids=["no metric", "tolerance", "baseline without change", "runs", "aggregate", "unknown key"],
)
def test_change_thresholds_where_they_cannot_apply_are_refused(rule, message):
    from cola_helpers import refused

    assert refused(rule) == message


def test_how_many_earlier_runs_a_rule_needs():
    rules = [{"type": "row_count", "must_be": "change < 5"}, {"type": "avg", "column": "a", "must_be": "anomaly < 3"},
             {"type": "avg", "column": "a", "must_be": "anomaly < 3", "warn": "change < 1%", "baseline": {"runs": 7}},
             {"type": "row_count", "must_be": "> 0"}, {"type": "not_null", "columns": ["a"]}]
    assert [check.history_runs for check in Cola().parse(rules)] == [1, 20, 7, 0, 0]


def test_exclude_and_prune_rewrite_a_table_store(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_history_rewrite")
    store = {"table": "cola_history_rewrite"}
    long_ago = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    try:
        Cola().run(people, RULES[:2], history=store, run_info=RunInfo(dataset="p", run_id="a", validated_at=long_ago))
        Cola().run(people, RULES[:2], history=store, run_info=RunInfo(dataset="p", run_id="b"))
        assert exclude_run(spark, store, "a") == 2
        assert sorted((r.run_id, r.excluded) for r in spark.table("cola_history_rewrite").collect()) == [
            ("a", True), ("a", True), ("b", False), ("b", False),
        ]
        assert prune_history(spark, store, "30d") == 2
        assert sorted(r.run_id for r in spark.table("cola_history_rewrite").collect()) == ["b", "b"]
        # Nothing but the store is left in the catalog: no staging or previous table.
        names = [t.name for t in spark.catalog.listTables() if t.name.startswith(("_cola", "cola_history_rewrite"))]
        assert names == ["cola_history_rewrite"]
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_history_rewrite")


# -- found in review ----------------------------------------------------------------------------


def test_the_failed_records_store_is_checked_before_a_split_is_written(spark, people, tmp_path):
    store = str(tmp_path / "h")
    spark.range(3).write.parquet(store + "_failed_records")
    with pytest.raises(ColaOutputError, match=r"_failed_records is not a Cola history store"):
        Cola().split_write(people, RULES[:1], str(tmp_path / "v"), str(tmp_path / "i"), samples=2, history=store,
                           dataset="p")
    assert sorted(os.listdir(tmp_path)) == ["h_failed_records"]


def test_a_retried_airflow_task_never_compares_with_its_own_earlier_attempt(spark, tmp_path):
    store = str(tmp_path / "h")
    rules = [{"type": "row_count", "must_be": "change between -10% and 10%"}]

    def attempt(rows, day):
        info = RunInfo(dataset="d", dag_id="dag", task_id="task", airflow_run_id=f"scheduled__{day}",
                       data_date=dt.date(2026, 3, day))
        (result,) = Cola().run(spark.range(rows), rules, history=store, run_info=info)
        return result.severity, result.baseline

    assert attempt(100, 1) == ("pass", None)
    assert attempt(50, 2) == ("fail", 100.0)
    # The same data interval again (a retry, a cleared task): still judged against day 1.
    assert attempt(50, 2) == ("fail", 100.0)


def test_a_backfill_and_a_rerun_compare_with_the_data_interval_before_theirs(spark, tmp_path):
    store = str(tmp_path / "h")
    rules = [{"type": "row_count", "must_be": "change between -10% and 10%"}]

    def attempt(rows, day):
        (result,) = Cola().run(spark.range(rows), rules, history=store, dataset="d", data_date=dt.date(2026, 3, day))
        return result.severity, result.baseline

    assert attempt(100, 1) == ("pass", None)
    assert attempt(100, 3) == ("pass", 100.0)  # day 2 is not in yet: day 1 is the interval before
    assert attempt(95, 2) == ("pass", 100.0)  # backfilled after day 3: compared with day 1, never day 3
    assert attempt(90, 2) == ("pass", 100.0)  # rerun: its own interval's first attempt is no baseline
    assert attempt(100, 3) == ("fail", 90.0)  # day 3 again: day 2's latest attempt (90) counts
    # The summaries count each interval once, by its latest attempt.
    assert [(row.data_date, row.runs, row.results) for row in daily_summary(spark, store).collect()] == [
        (dt.date(2026, 3, 3), 1, 1), (dt.date(2026, 3, 2), 1, 1), (dt.date(2026, 3, 1), 1, 1),
    ]
    assert [(row.data_date, row.last_metric) for row in rule_trend(spark, store, days=None).collect()] == [
        (dt.date(2026, 3, 1), 100.0), (dt.date(2026, 3, 2), 90.0), (dt.date(2026, 3, 3), 100.0),
    ]
    # A report's trend ends at its run's data date: a rerun of day 2 draws what its first run did.
    utc = dt.timezone.utc
    (trend,) = history_trends(spark, store, "d", until=dt.datetime(2026, 3, 2, tzinfo=utc)).values()
    assert trend == [(dt.datetime(2026, 3, 1, tzinfo=utc), 100.0, "pass"), (dt.datetime(2026, 3, 2, tzinfo=utc), 90.0,
                                                                             "pass")]


def test_a_split_compares_with_earlier_splits_and_a_check_with_earlier_checks(spark, tmp_path):
    store = str(tmp_path / "h")
    rules = [{"type": "row_count", "must_be": "change between -10% and 10%"}]
    cola = Cola()

    def check(rows, day):
        (result,) = cola.run(spark.range(rows), rules, history=store, dataset="d", data_date=dt.date(2026, 3, day))
        return result.baseline

    def split(rows, day):
        outcome = cola.split_write(spark.range(rows), rules, str(tmp_path / f"v{day}"), str(tmp_path / f"i{day}"),
                                   history=store, dataset="d", data_date=dt.date(2026, 3, day))
        return outcome.results[0].baseline

    assert (check(100, 1), split(100, 1)) == (None, None)
    assert check(80, 2) == 100.0
    # The check of day 2 ran after the split of day 1, yet the split compares with a split.
    assert split(100, 2) == 100.0
    assert check(80, 3) == 80.0


def test_a_quoted_table_store_gets_its_failed_records_beside_it(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_quoted_h")
    spark.sql("DROP TABLE IF EXISTS cola_quoted_h_failed_records")
    try:
        Cola().run(people, RULES[:1], samples=1, history={"table": "`default`.`cola_quoted_h`"}, dataset="p")
        assert spark.table("cola_quoted_h_failed_records").count() == 1
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_quoted_h")
        spark.sql("DROP TABLE IF EXISTS cola_quoted_h_failed_records")


def test_a_reconcile_rule_may_judge_the_change_of_its_difference(spark, tmp_path):
    spark.createDataFrame([(1,)] * 5, "a int").createOrReplaceTempView("five_rows")
    store = str(tmp_path / "h")
    rule = {"type": "reconcile", "aggregate": "count", "reference": {"table": "five_rows"}, "difference": "absolute",
            "must_be": "change between -10% and 10%"}
    first = Cola().run(spark.range(6), [rule], history=store, dataset="d")[0]
    second = Cola().run(spark.range(8), [rule], history=store, dataset="d")[0]
    assert first.message == (
        "reconcile(count) = 1: no baseline yet, so must_be (change between -10% and 10%) passes (data 6, reference 5)"
    )
    assert (second.severity, second.message) == (
        "fail", "reconcile(count) = 3, change +200% from baseline 1 violates must_be (change between -10% and 10%) "
                "(data 8, reference 5)",
    )


def test_a_derived_id_never_takes_an_id_another_rule_declares():
    base = Cola().parse([{"type": "row_count", "must_be": "> 0"}])[0].rule_id
    rules = [{"type": "row_count", "must_be": "> 0"}, {"type": "row_count", "min": 1, "id": base}]
    assert [check.rule_id for check in Cola().parse(rules)] == [f"{base}#2", base]


def test_an_anomaly_needs_at_least_its_warm_up_of_runs():
    from cola_helpers import refused

    assert refused({"type": "row_count", "must_be": "anomaly < 3", "baseline": {"runs": 3}}) == (
        "rules[0] (row_count): 'baseline.runs' is 3, but an anomaly is scored against at least 5 earlier runs"
    )


def test_the_index_and_trends_leave_out_excluded_runs_and_mark_rules_the_latest_run_dropped(spark, tmp_path):
    from cola_core.history.store import history_trends, index_rows

    store = str(tmp_path / "h")
    kept = {"type": "row_count", "must_be": "> 20", "id": "kept"}
    dropped = {"type": "row_count", "must_be": "> 0", "id": "dropped"}
    # run-3 is a bad load (5 rows) excluded after it ran; run-4 no longer has the rule "dropped".
    runs_of(spark, store, [30, 40, 5], [kept, dropped], exclude={"run-3"})
    runs_of_day4 = RunInfo(dataset="orders", run_id="run-4", validated_at=_day(4))
    Cola().run(spark.range(50), [kept], history=store, run_info=runs_of_day4)
    when = [_day(day) for day in (1, 2, 4)]  # tz-aware UTC, as written
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
from cola_core.history.store import history_trends, index_rows
from cola_core.report.page_parts import sparkline
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


# -- stores written before the data's date was recorded ------------------------------------------

FIRST_COLUMNS = [column for column in HISTORY_COLUMNS if column not in ADDED_COLUMNS]


def test_a_path_store_of_an_earlier_cola_is_read_as_keyed_by_run_time_and_appended_to(spark, tmp_path):
    rules = [{"type": "row_count", "must_be": "change between -10% and 10%", "id": "volume"}]
    written = tmp_path / "written"
    Cola().run(spark.range(100), rules, history=str(written), run_info=RunInfo(dataset="d", validated_at=_day(1)))
    # What an earlier Cola left: parts without the added columns.
    store = str(tmp_path / "legacy")
    spark.read.parquet(str(written)).select(*FIRST_COLUMNS).write.parquet(store)
    assert [(r.data_date, r.run_kind, r.map_index) for r in read_history(spark, store).collect()] == [
        (dt.datetime(2026, 3, 1, 6, 0), None, None),
    ]
    # A new run compares with it (a row without a kind counts for both kinds), and appends a
    # part with every column beside the old one; the store reads both.
    outcome = Cola().split_write(spark.range(95), rules, str(tmp_path / "v"), str(tmp_path / "i"), history=store,
                                 dataset="d", data_date=dt.date(2026, 3, 2))
    assert (outcome.results[0].severity, outcome.results[0].baseline) == ("pass", 100.0)
    assert sorted((r.data_date, r.run_kind, r.metric_value) for r in read_history(spark, store).collect()) == [
        (dt.datetime(2026, 3, 1, 6, 0), None, 100.0), (dt.datetime(2026, 3, 2, 0, 0), "split", 95.0),
    ]
    assert [[point[1] for point in entry["trend"]] for entry in index_rows(spark, store)] == [[100.0, 95.0]]


def test_a_table_store_of_an_earlier_cola_gets_the_added_columns_on_its_next_append(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_legacy_history")
    try:
        Cola().run(people, RULES[:2], history={"table": "cola_legacy_history"}, dataset="p")
        legacy = spark.table("cola_legacy_history").select(*FIRST_COLUMNS).collect()
        spark.sql("DROP TABLE cola_legacy_history")
        first_schema = ", ".join(HISTORY_SCHEMA.split(", ")[:len(FIRST_COLUMNS)])
        spark.createDataFrame(legacy, first_schema).write.saveAsTable("cola_legacy_history")
        assert read_history(spark, {"table": "cola_legacy_history"}).count() == 2
        Cola().run(people, RULES[:2], history={"table": "cola_legacy_history"}, dataset="p",
                   data_date=dt.date(2026, 3, 2))
        assert tuple(spark.table("cola_legacy_history").columns) == HISTORY_COLUMNS
        rows = read_history(spark, {"table": "cola_legacy_history"}).collect()
        assert sorted((r.data_date == r.validated_at, r.run_kind) for r in rows) == [
            (False, "check"), (False, "check"), (True, None), (True, None),
        ]
        # Excluding a run rewrites the table with every column.
        assert exclude_run(spark, {"table": "cola_legacy_history"}, rows[0].run_id) == 2
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_legacy_history")


# -- history files are checked, not trusted -----------------------------------------------------


CHANGE = [{"type": "row_count", "must_be": "change < 50%", "id": "volume"}]


def test_a_part_with_a_column_of_another_type_is_refused_before_anything_is_written(spark, tmp_path):
    """The store used to be checked on one part's footer, whichever Spark listed first: a part
    holding metric_value as text was appended to, or not, by the listing order."""
    store = tmp_path / "history"
    Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d")
    retyped = tmp_path / "retyped"
    spark.read.parquet(str(store)).selectExpr(*[
        "CAST(metric_value AS string) AS metric_value" if c == "metric_value" else c for c in HISTORY_COLUMNS
    ]).coalesce(1).write.parquet(str(retyped))
    (written,) = retyped.glob("part-*.parquet")
    written.rename(store / "part-zz-retyped.parquet")  # listed after the run's own part
    before = sorted(p.name for p in store.iterdir())
    for action in (
        lambda: Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d"),
        lambda: Cola().run(spark.range(3), [{"type": "row_count", "min": 1}], history=str(store), dataset="d"),
    ):
        with pytest.raises(ColaOutputError) as raised:
            action()
        assert str(raised.value) == (
            f"cannot read the history store {store}: its part {store}/part-zz-retyped.parquet holds "
            "metric_value as string, where an earlier part holds it as double; a Cola history's parts all have "
            "the history's columns"
        )
    assert sorted(p.name for p in store.iterdir()) == before


def test_an_unreadable_part_is_an_output_error_naming_it_for_every_run_that_reads_the_store(spark, tmp_path):
    """A part whose footer reads but whose pages do not: a plain run appends (its footer checks
    out), but every run that reads the rows (baselines, summaries, the index) met a raw Py4J
    error."""
    from cola_helpers import broken_history_file

    store = tmp_path / "history"
    broken = broken_history_file(store)
    Cola().run(spark.range(3), [{"type": "row_count", "min": 1}], history=str(store), dataset="d")
    for action in (
        lambda: Cola().run(spark.range(3), [{"type": "row_count", "must_be": "change < 50%"}], history=str(store),
                           dataset="orders"),
        lambda: index_rows(spark, str(store)),
        lambda: history_trends(spark, str(store), "orders"),
    ):
        with pytest.raises(ColaOutputError) as raised:
            action()
        assert str(raised.value).startswith(f"cannot read the history store {store}: ")
        assert f"Encountered error while reading file file://{broken}" in str(raised.value)
    # The summaries, as the command line prints them: exit status 2 and the message.
    from cola_core.cli.main import main

    assert main(["history", "daily", "--history", str(store)]) == 2


def test_a_truncated_part_is_an_output_error_naming_it(spark, tmp_path):
    store = tmp_path / "history"
    Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d")
    (part,) = store.glob("part-*")
    part.write_bytes(part.read_bytes()[:40])  # cut short: its footer is gone
    with pytest.raises(ColaOutputError) as raised:
        Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d")
    assert str(raised.value).startswith(f"cannot read the history store {store}: its part {part} cannot be read: ")

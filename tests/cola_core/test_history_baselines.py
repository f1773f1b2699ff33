"""The baselines of change and anomaly thresholds, against a store built over several runs: the
latest earlier data interval, like with like (a retry, a backfill, a split); the rules that
cannot have one."""

from __future__ import annotations

import datetime as dt

import pytest

from cola_core import Cola, ColaError
from cola_core.common.formatting import format_number
from cola_core.history.store import RunInfo
from cola_core.history.summaries import daily_summary, history_trends, rule_trend
from cola_helpers import runs_of

pytestmark = [pytest.mark.spark, pytest.mark.connect]


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
    from cola_core.job.blocks import with_history_baselines
    from cola_core.storage.specs import history_spec as spec_of

    checks = Cola().parse(rules)
    with job_counter.count() as counted:
        judged = with_history_baselines(df, checks, spec_of(store), RunInfo(dataset="d"))
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


def test_an_anomaly_needs_at_least_its_warm_up_of_runs():
    from cola_helpers import refused

    assert refused({"type": "row_count", "must_be": "anomaly < 3", "baseline": {"runs": 3}}) == (
        "rules[0] (row_count): 'baseline.runs' is 3, but an anomaly is scored against at least 5 earlier runs"
    )

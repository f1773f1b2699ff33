"""Metric rules (``checks/metrics.py``) on hand-built DataFrames: every metric, warn levels,
and the "nothing measured" cases (the validity settings are ``test_checks_conditions``'s).

Results are compared whole (``CheckResult`` equality covers every field but ``failed_rows``).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from decimal import Decimal

import pytest

from cola_core import Cola, ColaRuleError
from cola_core.common.formatting import format_number
from cola_helpers import metric, refused, run_one

pytestmark = [pytest.mark.spark, pytest.mark.connect]


# -- row_count (metric form) -------------------------------------------------------------


def test_row_count_metric_meets_warns_and_violates(three_rows):
    assert run_one(three_rows, {"type": "row_count", "must_be": "> 0"}) == metric(
        "row_count", True, "row_count = 3 meets must_be (> 0)", 0, 3, code="row_count"
    )
    assert run_one(three_rows, {"type": "row_count", "must_be": "> 0", "warn": ">= 10"}) == metric(
        "row_count", True, "row_count = 3 violates warn (>= 10)", 0, 3, "warn", code="row_count"
    )
    assert run_one(three_rows, {"type": "row_count", "must_be": "between 5 and 10"}) == metric(
        "row_count", False, "row_count = 3 violates must_be (between 5 and 10)", 1, 3, code="row_count"
    )


def test_row_count_metric_on_an_empty_dataframe_measures_zero(spark):
    empty = spark.createDataFrame([], "id int")
    assert run_one(empty, {"type": "row_count", "must_be": "> 0"}) == metric(
        "row_count", False, "row_count = 0 violates must_be (> 0)", 1, 0, code="row_count"
    )


def test_legacy_check_wrapper_is_the_same_rule_named_by_its_metric(three_rows):
    legacy = run_one(three_rows, {"type": "check", "metric": "row_count", "must_be": "= 3"})
    canonical = run_one(three_rows, {"type": "row_count", "must_be": "= 3"})
    assert legacy == canonical == metric("row_count", True, "row_count = 3 meets must_be (= 3)", 0, 3, code="row_count")


def test_a_bare_number_threshold_means_equality(three_rows):
    assert run_one(three_rows, {"type": "row_count", "must_be": 3}).passed is True
    assert run_one(three_rows, {"type": "row_count", "must_be": "4"}) == metric(
        "row_count", False, "row_count = 3 violates must_be (4)", 1, 3, code="row_count"
    )


# -- distinct_count ----------------------------------------------------------------------


@pytest.fixture
def letters(spark):
    return spark.createDataFrame(
        [("a", 1), ("a", 1), ("b", 1), (None, 2), (None, 2)], "letter string, n int"
    )


def test_distinct_count_counts_null_as_one_value(letters):
    assert run_one(letters, {"type": "distinct_count", "column": "letter", "must_be": "= 3"}) == metric(
        "distinct_count", True, "distinct_count(letter) = 3 meets must_be (= 3)", 0, 3, code="distinct_count(letter)"
    )


def test_distinct_count_over_columns_and_over_the_whole_row(letters):
    assert run_one(letters, {"type": "distinct_count", "columns": ["letter", "n"], "must_be": "> 5"}) == metric(
        "distinct_count", False, "distinct_count(letter,n) = 3 violates must_be (> 5)", 1, 3,
        code="distinct_count(letter,n)",
    )
    assert run_one(letters, {"type": "distinct_count", "must_be": "= 3"}).metric_value == 3
    assert run_one(letters, {"type": "distinct_count", "must_be": "= 3"}).code == "distinct_count"


def test_distinct_count_on_an_empty_dataframe_is_zero(spark):
    empty = spark.createDataFrame([], "letter string")
    assert run_one(empty, {"type": "distinct_count", "column": "letter", "must_be": "= 0"}).metric_value == 0


# -- missing_count / missing_percent -----------------------------------------------------


@pytest.fixture
def cpfs(spark):
    # 25 rows, 2 of them NULL: missing_percent is exactly 8.
    values = [f"{n:011d}" for n in range(23)] + [None, None]
    return spark.createDataFrame([(v,) for v in values], "cpf string")


def test_missing_percent_seed_example_message(cpfs):
    result = run_one(cpfs, {"type": "missing_percent", "column": "cpf", "must_be": "< 5%"})
    assert result == metric(
        "missing_percent", False, "missing_percent(cpf) = 8 violates must_be (< 5%)", 2, 8.0,
        code="missing_percent(cpf)",
    )
    assert str(result) == "[FAIL] check: missing_percent(cpf) = 8 violates must_be (< 5%)"


def test_missing_percent_warn_keeps_passed_true_with_no_failed_rows(cpfs):
    result = run_one(
        cpfs, {"type": "missing_percent", "name": "cpf completeness", "column": "cpf", "must_be": "< 10%", "warn": "= 0"}
    )
    assert result == metric(
        "missing_percent", True, "missing_percent(cpf) = 8 violates warn (= 0)", 0, 8.0, "warn",
        "cpf completeness", "missing_percent(cpf)",
    )
    assert str(result) == "[WARN] cpf completeness: missing_percent(cpf) = 8 violates warn (= 0)"


def test_missing_percent_prints_up_to_four_decimals(spark):
    df = spark.createDataFrame([("a",), (None,), ("c",)], "cpf string")
    result = run_one(df, {"type": "missing_percent", "column": "cpf", "must_be": "< 5"})
    assert result.message == "missing_percent(cpf) = 33.3333 violates must_be (< 5)"
    assert result.metric_value == pytest.approx(100 / 3)
    assert result.failed_count == 1


def test_missing_count_with_missing_values(spark):
    df = spark.createDataFrame([("a",), ("",), ("N/A",), (None,), ("n/a",)], "cpf string")
    plain = run_one(df, {"type": "missing_count", "column": "cpf", "must_be": "= 0"})
    assert plain == metric("missing_count", False, "missing_count(cpf) = 1 violates must_be (= 0)", 1, 1,
                           code="missing_count(cpf)")
    sentinels = run_one(df, {"type": "missing_count", "column": "cpf", "missing_values": ["", "N/A"], "must_be": "<= 3"})
    assert sentinels == metric("missing_count", True, "missing_count(cpf) = 3 meets must_be (<= 3)", 0, 3,
                               code="missing_count(cpf)")


def test_missing_values_that_cannot_be_of_the_column_type_are_ignored(spark):
    # Under ANSI Spark, comparing an int column with 'N/A' would fail the whole job.
    df = spark.createDataFrame([(1,), (-1,), (None,), (7,)], "age int")
    result = run_one(df, {"type": "missing_count", "column": "age", "missing_values": ["", "N/A", -1, "7"],
                          "must_be": "= 0"})
    assert result.metric_value == 3  # NULL, -1 and 7 (the text '7' is the number 7)


def test_missing_percent_is_zero_on_an_empty_dataframe(spark):
    empty = spark.createDataFrame([], "cpf string")
    assert run_one(empty, {"type": "missing_percent", "column": "cpf", "must_be": "< 5%"}) == metric(
        "missing_percent", True, "missing_percent(cpf) = 0 meets must_be (< 5%)", 0, 0.0, code="missing_percent(cpf)"
    )


def test_missing_percent_of_an_all_null_column_is_100(spark):
    df = spark.createDataFrame([(None,), (None,)], "cpf string")
    assert run_one(df, {"type": "missing_percent", "column": "cpf", "must_be": "< 5%"}) == metric(
        "missing_percent", False, "missing_percent(cpf) = 100 violates must_be (< 5%)", 2, 100.0,
        code="missing_percent(cpf)",
    )


# -- duplicate_count / duplicate_percent -------------------------------------------------


def test_duplicate_count_with_columns_is_rows_minus_distinct_like_unique(spark):
    df = spark.createDataFrame([(1, "a"), (1, "b"), (2, "c"), (None, "d"), (None, "e")], "id int, name string")
    duplicate, unique = Cola().run(
        df, [{"type": "duplicate_count", "column": "id", "must_be": "= 0"}, {"type": "unique", "columns": ["id"]}]
    )
    assert duplicate == metric(
        "duplicate_count", False, "duplicate_count(id) = 2 violates must_be (= 0)", 2, 2, code="duplicate_count(id)"
    )
    assert unique.failed_count == duplicate.failed_count == 2


def test_duplicate_count_without_columns_is_over_the_whole_row(spark):
    df = spark.createDataFrame([(1, "a"), (1, "a"), (1, "b"), (None, None), (None, None)], "id int, name string")
    assert run_one(df, {"type": "duplicate_count", "must_be": "<= 2"}) == metric(
        "duplicate_count", True, "duplicate_count = 2 meets must_be (<= 2)", 0, 2, code="duplicate_count"
    )


def test_duplicate_percent_is_over_the_row_count(spark):
    df = spark.createDataFrame([(1,), (1,), (2,)], "id int")
    assert run_one(df, {"type": "duplicate_percent", "columns": ["id"], "must_be": "< 5%"}) == metric(
        "duplicate_percent", False, "duplicate_percent(id) = 33.3333 violates must_be (< 5%)", 1, pytest.approx(100 / 3),
        code="duplicate_percent(id)",
    )


def test_duplicate_percent_is_zero_on_an_empty_dataframe(spark):
    empty = spark.createDataFrame([], "id int")
    assert run_one(empty, {"type": "duplicate_percent", "must_be": "= 0"}) == metric(
        "duplicate_percent", True, "duplicate_percent = 0 meets must_be (= 0)", 0, 0.0, code="duplicate_percent"
    )


def test_distinct_metrics_refuse_column_and_columns_together():
    assert refused({"type": "duplicate_count", "column": "a", "columns": ["b"], "must_be": "= 0"}) == (
        "rules[0] (duplicate_count): give 'column' or 'columns', not both"
    )


# -- min, max, avg, mean, sum, stddev ----------------------------------------------------


@pytest.fixture
def amounts(spark):
    return spark.createDataFrame([(1,), (2,), (3,), (4,), (None,)], "amount int")


@pytest.mark.parametrize(
    ("rule_type", "must_be", "value", "shown"),
    [
        ("min", "= 1", 1, "1"),
        ("max", "= 4", 4, "4"),
        ("avg", "between 2 and 3", 2.5, "2.5"),
        ("mean", "between 2 and 3", 2.5, "2.5"),
        ("sum", "= 10", 10, "10"),
        # Sample standard deviation: sqrt(5/3); the population one would be sqrt(5/4).
        ("stddev", "> 1.2", math.sqrt(5 / 3), "1.291"),
    ],
)
def test_column_statistics_ignore_nulls(amounts, rule_type, must_be, value, shown):
    result = run_one(amounts, {"type": rule_type, "column": "amount", "must_be": must_be})
    assert result == metric(
        rule_type, True, f"{rule_type}(amount) = {shown} meets must_be ({must_be})", 0, pytest.approx(value),
        code=f"{rule_type}(amount)",
    )


def test_integral_averages_print_without_decimals(spark):
    df = spark.createDataFrame([(7,), (9,)], "amount int")
    result = run_one(df, {"type": "avg", "column": "amount", "must_be": "< 5"})
    assert result == metric("avg", False, "avg(amount) = 8 violates must_be (< 5)", 1, 8.0, code="avg(amount)")


def test_sum_of_longs_is_exact_and_of_decimals_is_a_float(spark):
    longs = spark.createDataFrame([(9007199254740993,), (0,)], "n bigint")
    assert run_one(longs, {"type": "sum", "column": "n", "must_be": "> 0"}).metric_value == 9007199254740993
    # Past the bigint range an ANSI sum would fail the job; the metric still measures it.
    huge = spark.createDataFrame([(2**63 - 1,), (2**63 - 1,)], "n bigint")
    assert run_one(huge, {"type": "sum", "column": "n", "must_be": "> 0"}).metric_value == 2 * (2**63 - 1)
    decimals = spark.createDataFrame([(Decimal("1.25"),), (Decimal("2.50"),)], "price decimal(10,2)")
    result = run_one(decimals, {"type": "sum", "column": "price", "must_be": "= 3.75"})
    assert result == metric("sum", True, "sum(price) = 3.75 meets must_be (= 3.75)", 0, 3.75, code="sum(price)")
    assert type(result.metric_value) is float


@pytest.mark.parametrize("rule_type", ["min", "max", "avg", "mean", "sum", "stddev"])
def test_statistics_of_nothing_fail_saying_nothing_was_measured(spark, rule_type):
    empty = spark.createDataFrame([], "amount double")
    nulls = spark.createDataFrame([(None,), (None,)], "amount double")
    for df, why in ((empty, "the DataFrame is empty"), (nulls, "amount has no non-NULL values")):
        assert run_one(df, {"type": rule_type, "column": "amount", "must_be": "> 0"}) == metric(
            rule_type, False, f"{rule_type}(amount): nothing was measured ({why}), so must_be (> 0) is not met",
            1, None, code=f"{rule_type}(amount)",
        )


def test_stddev_of_a_single_value_measures_nothing(spark):
    df = spark.createDataFrame([(5.0,), (None,)], "amount double")
    assert run_one(df, {"type": "stddev", "column": "amount", "must_be": "< 1"}) == metric(
        "stddev", False,
        "stddev(amount): nothing was measured (amount has 1 of the 2 non-NULL values needed), so must_be (< 1) is not met",
        1, None, code="stddev(amount)",
    )


def test_a_nan_result_is_not_a_measurement(spark):
    df = spark.createDataFrame([(1.0,), (float("nan"),)], "amount double")
    assert run_one(df, {"type": "avg", "column": "amount", "must_be": "!= 0"}) == metric(
        "avg", False,
        "avg(amount): nothing was measured (the column holds NaN, so the result is NaN), so must_be (!= 0) is not met",
        1, None, code="avg(amount)",
    )
    # Spark orders NaN above every number, so min still measures the smallest real value.
    assert run_one(df, {"type": "min", "column": "amount", "must_be": "= 1"}).passed is True


def test_statistics_on_a_non_numeric_column_are_a_rule_error_before_any_job(spark, job_counter):
    df = spark.createDataFrame([("12",)], "amount string")
    with job_counter.count() as jobs, pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [{"type": "row_count"}, {"type": "avg", "column": "amount", "must_be": "> 0"}])
    assert str(raised.value) == "rules[1] (avg): avg needs a numeric column, but amount is string; cast it first"
    assert jobs.jobs == 0


def test_non_freshness_metrics_refuse_durations():
    assert refused({"type": "avg", "column": "a", "must_be": "< 1d"}) == (
        "rules[0] (avg): 'must_be' (< 1d) uses a duration unit, which only a freshness rule measures; "
        "write a plain number"
    )


# -- freshness ---------------------------------------------------------------------------


def _age_bounds(newest: dt.datetime, before: float, after: float) -> tuple[float, float]:
    return before - newest.timestamp() - 1e-6, after - newest.timestamp() + 1e-6


def test_freshness_of_an_old_timestamp_violates_a_day(spark):
    newest = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
    df = spark.createDataFrame([(dt.datetime(1999, 6, 1, tzinfo=dt.timezone.utc),), (newest,), (None,)], "updated_at timestamp")
    before = time.time()
    result = run_one(df, {"type": "freshness", "column": "updated_at", "must_be": "< 1d"})
    after = time.time()
    low, high = _age_bounds(newest, before, after)
    assert low <= result.metric_value <= high
    assert result == metric(
        "freshness", False, f"freshness(updated_at) = {format_number(result.metric_value)} violates must_be (< 1d)",
        1, result.metric_value, code="freshness(updated_at)",
    )
    assert re.fullmatch(r"freshness\(updated_at\) = \d+(\.\d{1,4})? violates must_be \(< 1d\)", result.message)


def test_freshness_relative_to_now_meets_and_warns(spark):
    newest = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)
    df = spark.createDataFrame([(newest - dt.timedelta(days=3),), (newest,)], "updated_at timestamp")
    before = time.time()
    met = run_one(df, {"type": "freshness", "column": "updated_at", "must_be": "< 3h"})
    warned = run_one(df, {"type": "freshness", "column": "updated_at", "must_be": "<= 1d", "warn": "< 1h"})
    after = time.time()
    low, high = _age_bounds(newest, before, after)
    assert low <= met.metric_value <= high and low <= warned.metric_value <= high
    assert (met.passed, met.severity, met.failed_count) == (True, "pass", 0)
    assert met.message == f"freshness(updated_at) = {format_number(met.metric_value)} meets must_be (< 3h)"
    assert (warned.passed, warned.severity, warned.failed_count) == (True, "warn", 0)
    assert warned.message == f"freshness(updated_at) = {format_number(warned.metric_value)} violates warn (< 1h)"


def test_freshness_of_dates_and_iso_strings_reads_midnight_in_the_session_time_zone(spark):
    day = dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=2)
    midnight = dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)  # the session time zone is UTC
    dates = spark.createDataFrame([(day,), (None,)], "loaded_on date")
    texts = spark.createDataFrame([(day.isoformat(),), ("not a date",)], "loaded_on string")
    for df in (dates, texts):
        before = time.time()
        result = run_one(df, {"type": "freshness", "column": "loaded_on", "must_be": "< 3d"})
        after = time.time()
        low, high = _age_bounds(midnight, before, after)
        assert low <= result.metric_value <= high
        assert result.passed is True


def test_freshness_in_the_future_is_negative(spark):
    tomorrow = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    df = spark.createDataFrame([(tomorrow,)], "updated_at timestamp")
    result = run_one(df, {"type": "freshness", "column": "updated_at", "must_be": "< 1h"})
    assert result.passed is True and -86400 <= result.metric_value < -86000


def test_freshness_of_nothing_fails_saying_nothing_was_measured(spark):
    cases = [
        (spark.createDataFrame([], "updated_at timestamp"), "the DataFrame is empty"),
        (spark.createDataFrame([(None,), (None,)], "updated_at timestamp"), "updated_at has no timestamps"),
        (spark.createDataFrame([("soon",)], "updated_at string"), "updated_at has no timestamps"),
    ]
    for df, why in cases:
        assert run_one(df, {"type": "freshness", "column": "updated_at", "must_be": "< 1d"}) == metric(
            "freshness", False,
            f"freshness(updated_at): nothing was measured ({why}), so must_be (< 1d) is not met",
            1, None, code="freshness(updated_at)",
        )


def test_freshness_on_a_number_column_is_a_rule_error(spark):
    df = spark.createDataFrame([(1700000000,)], "updated_at bigint")
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [{"type": "freshness", "column": "updated_at", "must_be": "< 1d"}])
    assert str(raised.value) == (
        "rules[0] (freshness): freshness needs a date, timestamp or ISO-text column, but updated_at is bigint"
    )


# -- one block: every metric in one run, same answers ------------------------------------


def test_a_block_of_metrics_gives_each_rule_its_own_result_in_order(spark):
    df = spark.createDataFrame([(1, "a@x.com", 10.0), (2, None, 20.0), (2, "bad", None)], "id int, email string, amount double")
    rules = [
        {"type": "row_count", "must_be": "= 3"},
        {"type": "missing_count", "column": "email", "must_be": "= 0", "name": "emails"},
        {"type": "invalid_count", "column": "email", "valid_format": "email", "must_be": "= 0"},
        {"type": "duplicate_count", "column": "id", "must_be": "= 0"},
        {"type": "avg", "column": "amount", "must_be": "= 15"},
        {"type": "stddev", "column": "amount", "must_be": "> 7"},
    ]
    results = Cola().run(df, rules)
    assert [str(r) for r in results] == [
        "[PASS] check: row_count = 3 meets must_be (= 3)",
        "[FAIL] emails: missing_count(email) = 1 violates must_be (= 0)",
        "[FAIL] check: invalid_count(email) = 1 violates must_be (= 0)",
        "[FAIL] check: duplicate_count(id) = 1 violates must_be (= 0)",
        "[PASS] check: avg(amount) = 15 meets must_be (= 15)",
        "[PASS] check: stddev(amount) = 7.0711 meets must_be (> 7)",
    ]
    assert [r.failed_count for r in results] == [0, 1, 1, 1, 0, 0]

"""The classic checks on hand-built DataFrames: not_null, unique, range, regex, row_count.

Every test compares the whole ``CheckResult`` (rule_type, passed, message, failed_count,
metric_value, severity, check_name, code), so a change to any field shows up here.
"""

from __future__ import annotations

import datetime as dt

import pytest

from cola_core import CheckResult, Cola, ColaRuleError
from cola_helpers import refused, run_one, sorted_rows

pytestmark = [pytest.mark.spark, pytest.mark.connect]


# -- not_null ----------------------------------------------------------------------------


@pytest.fixture
def people(spark):
    return spark.createDataFrame(
        [(1, "a@x.com", 1.5), (2, None, float("nan")), (None, None, None), (4, "", 2.0)],
        "id int, email string, score double",
    )


def test_not_null_failed_count_is_the_total_of_nulls_across_columns(people):
    result = run_one(people, {"type": "not_null", "columns": ["id", "email"]})
    assert result == CheckResult(
        "not_null", False, "not_null(id,email): 3 NULL values (id: 1, email: 2)", 3, code="not_null(id,email)"
    )
    assert result.severity == "fail" and result.metric_value is None
    assert str(result) == "[FAIL] check: not_null(id,email): 3 NULL values (id: 1, email: 2)"


def test_not_null_over_several_columns_carries_its_counts_per_column_as_data(people, spark):
    failed = run_one(people, {"type": "not_null", "columns": ["id", "email"]})
    assert failed.details == {"columns": {"id": 1, "email": 2}}
    assert failed.to_dict()["details"] == {"columns": {"id": 1, "email": 2}}
    df = spark.createDataFrame([("", float("nan"))], "email string, score double")
    passed = run_one(df, {"type": "not_null", "columns": ["email", "score"]})
    assert passed.details == {"columns": {"email": 0, "score": 0}}
    # One column: failed_count says it all, so there are no details.
    single = run_one(people, {"type": "not_null", "columns": ["id"]})
    assert single.details is None and "details" not in single.to_dict()


def test_not_null_counts_nulls_not_rows(spark):
    # Row 2 is NULL in both columns: two NULLs, one row.
    df = spark.createDataFrame([(1, "a"), (None, None)], "id int, email string")
    result = run_one(df, {"type": "not_null", "columns": ["id", "email"]})
    assert result.failed_count == 2


def test_not_null_empty_string_and_nan_are_values(spark):
    df = spark.createDataFrame([("", float("nan")), ("x", 1.0)], "email string, score double")
    result = run_one(df, {"type": "not_null", "columns": ["email", "score"]})
    assert result == CheckResult(
        "not_null", True, "not_null(email,score): no NULL values", 0, code="not_null(email,score)"
    )
    assert str(result) == "[PASS] check: not_null(email,score): no NULL values"


def test_not_null_one_null_reads_singular_and_name_labels_the_result(people):
    result = run_one(people, {"type": "not_null", "columns": ["id"], "name": "ids present"})
    assert result == CheckResult(
        "not_null", False, "not_null(id): 1 NULL value (id: 1)", 1, check_name="ids present", code="not_null(id)"
    )
    assert str(result) == "[FAIL] ids present: not_null(id): 1 NULL value (id: 1)"


def test_not_null_declared_code_is_on_the_result(people):
    result = run_one(people, {"type": "not_null", "columns": ["email"], "code": "EMAIL_REQUIRED"})
    assert result.code == "EMAIL_REQUIRED"
    assert result.message == "not_null(email): 2 NULL values (email: 2)"


def test_not_null_on_an_empty_dataframe_passes(spark):
    df = spark.createDataFrame([], "id int")
    assert run_one(df, {"type": "not_null", "columns": ["id"]}) == CheckResult(
        "not_null", True, "not_null(id): no NULL values", 0, code="not_null(id)"
    )


def test_not_null_on_an_all_null_column_counts_every_row(spark):
    df = spark.createDataFrame([(1, None), (2, None), (3, None)], "id int, email string")
    assert run_one(df, {"type": "not_null", "columns": ["email"]}) == CheckResult(
        "not_null", False, "not_null(email): 3 NULL values (email: 3)", 3, code="not_null(email)"
    )


def test_not_null_columns_must_be_a_list():
    assert refused({"type": "not_null", "columns": "id"}) == (
        "rules[0] (not_null): 'columns' must be a non-empty list of column names "
        "(it is always a list, even for one column), got 'id'"
    )


# -- unique ------------------------------------------------------------------------------


def test_unique_failed_count_is_rows_minus_distinct_keys(spark):
    df = spark.createDataFrame([(1, 1), (1, 2), (1, 2), (2, 1)], "order_id int, line_number int")
    result = run_one(df, {"type": "unique", "columns": ["order_id", "line_number"]})
    assert result == CheckResult(
        "unique",
        False,
        "unique(order_id,line_number): 1 duplicate row (4 rows, 3 distinct)",
        1,
        code="unique(order_id,line_number)",
    )


def test_unique_is_over_the_tuple_not_each_column(spark):
    # Each column repeats a value, but no (order_id, line_number) pair does.
    df = spark.createDataFrame([(1, 1), (1, 2), (2, 1)], "order_id int, line_number int")
    result = run_one(df, {"type": "unique", "columns": ["order_id", "line_number"]})
    assert result == CheckResult(
        "unique", True, "unique(order_id,line_number): all 3 rows are unique", 0, code="unique(order_id,line_number)"
    )


@pytest.mark.parametrize("strategy", ["separate", "inline"])
def test_unique_null_keys_are_equal_to_each_other(spark, strategy):
    df = spark.createDataFrame([(None, None), (None, None), (None, 1), (1, None)], "a int, b int")
    one_column = run_one(df, {"type": "unique", "columns": ["a"]}, distinct_strategy=strategy)
    assert one_column == CheckResult(
        "unique", False, "unique(a): 2 duplicate rows (4 rows, 2 distinct)", 2, code="unique(a)"
    )
    two_columns = run_one(df, {"type": "unique", "columns": ["a", "b"]}, distinct_strategy=strategy)
    assert two_columns == CheckResult(
        "unique", False, "unique(a,b): 1 duplicate row (4 rows, 3 distinct)", 1, code="unique(a,b)"
    )


def test_unique_on_an_empty_dataframe_passes(spark):
    df = spark.createDataFrame([], "id int")
    assert run_one(df, {"type": "unique", "columns": ["id"]}) == CheckResult(
        "unique", True, "unique(id): all 0 rows are unique", 0, code="unique(id)"
    )


def test_unique_on_an_all_null_column_counts_every_row_but_one(spark):
    df = spark.createDataFrame([(None,), (None,), (None,)], "id int")
    assert run_one(df, {"type": "unique", "columns": ["id"]}).failed_count == 2


# -- range -------------------------------------------------------------------------------


@pytest.fixture
def amounts(spark):
    return spark.createDataFrame([(0,), (5,), (10,), (11,), (-1,), (None,)], "amount int")


def test_range_is_inclusive_at_both_ends_and_nulls_pass(amounts):
    result = run_one(amounts, {"type": "range", "column": "amount", "min": 0, "max": 10})
    assert result == CheckResult(
        "range", False, "range(amount,0,10): 2 values out of range (between 0 and 10)", 2, code="range(amount,0,10)"
    )


def test_range_with_only_min_leaves_the_max_empty_in_the_code(amounts):
    result = run_one(amounts, {"type": "range", "column": "amount", "min": 0})
    assert result == CheckResult(
        "range", False, "range(amount,0,): 1 value out of range (>= 0)", 1, code="range(amount,0,)"
    )


def test_range_with_only_max_leaves_the_min_empty_in_the_code(amounts):
    result = run_one(amounts, {"type": "range", "column": "amount", "max": 11})
    assert result == CheckResult(
        "range", True, "range(amount,,11): all values in range (<= 11)", 0, code="range(amount,,11)"
    )


def test_range_fractional_bounds_print_without_needless_decimals(spark):
    df = spark.createDataFrame([(0.25,), (0.5,), (2.0,)], "ratio double")
    result = run_one(df, {"type": "range", "column": "ratio", "min": 0.5, "max": 2.0})
    assert result == CheckResult(
        "range", False, "range(ratio,0.5,2): 1 value out of range (between 0.5 and 2)", 1, code="range(ratio,0.5,2)"
    )


def test_range_nan_lies_in_no_interval(spark):
    # Spark orders NaN above every number, so a bare comparison would let it pass a min-only
    # rule and fail a max-only one. NaN is not a number in any interval: out of range both ways.
    df = spark.createDataFrame([(1.0,), (float("nan"),), (None,)], "score double")
    assert run_one(df, {"type": "range", "column": "score", "min": 0}).failed_count == 1
    assert run_one(df, {"type": "range", "column": "score", "max": 5}).failed_count == 1


def test_range_on_an_empty_dataframe_and_an_all_null_column_passes(spark):
    empty = spark.createDataFrame([], "amount int")
    nulls = spark.createDataFrame([(None,), (None,)], "amount int")
    expected = CheckResult(
        "range", True, "range(amount,0,10): all values in range (between 0 and 10)", 0, code="range(amount,0,10)"
    )
    assert run_one(empty, {"type": "range", "column": "amount", "min": 0, "max": 10}) == expected
    assert run_one(nulls, {"type": "range", "column": "amount", "min": 0, "max": 10}) == expected


def test_range_on_dates_with_iso_bounds(spark):
    df = spark.createDataFrame(
        [(dt.date(2023, 12, 31),), (dt.date(2024, 1, 1),), (dt.date(2024, 1, 31),), (dt.date(2024, 2, 1),), (None,)],
        "day date",
    )
    result = run_one(df, {"type": "range", "column": "day", "min": "2024-01-01", "max": "2024-01-31"})
    assert result == CheckResult(
        "range",
        False,
        "range(day,2024-01-01,2024-01-31): 2 values out of range (between 2024-01-01 and 2024-01-31)",
        2,
        code="range(day,2024-01-01,2024-01-31)",
    )


def test_range_accepts_python_dates_as_bounds(spark):
    df = spark.createDataFrame([(dt.date(2024, 1, 1),), (dt.date(2025, 1, 1),)], "day date")
    result = run_one(df, {"type": "range", "column": "day", "max": dt.date(2024, 6, 30)})
    assert result == CheckResult(
        "range", False, "range(day,,2024-06-30): 1 value out of range (<= 2024-06-30)", 1, code="range(day,,2024-06-30)"
    )


def test_range_on_timestamps_compares_to_the_second(spark):
    df = spark.createDataFrame(
        [(dt.datetime(2024, 1, 31, 23, 59, 59),), (dt.datetime(2024, 2, 1, 0, 0, 0),), (None,)], "at timestamp"
    )
    result = run_one(df, {"type": "range", "column": "at", "max": "2024-01-31 23:59:59"})
    assert result == CheckResult(
        "range",
        False,
        "range(at,,2024-01-31 23:59:59): 1 value out of range (<= 2024-01-31 23:59:59)",
        1,
        code="range(at,,2024-01-31 23:59:59)",
    )


def test_range_a_date_bound_on_a_timestamp_column_means_midnight(spark):
    df = spark.createDataFrame(
        [(dt.datetime(2024, 1, 31, 0, 0, 0),), (dt.datetime(2024, 1, 31, 0, 0, 1),)], "at timestamp"
    )
    assert run_one(df, {"type": "range", "column": "at", "max": "2024-01-31"}).failed_count == 1


def test_range_a_timestamp_bound_on_a_date_column_is_not_truncated(spark):
    # 2024-01-01 is midnight, before noon: out of range (a cast of the bound to date would
    # have truncated it to 2024-01-01 and let the row pass).
    df = spark.createDataFrame([(dt.date(2024, 1, 1),), (dt.date(2024, 1, 2),)], "day date")
    assert run_one(df, {"type": "range", "column": "day", "min": "2024-01-01 12:00:00"}).failed_count == 1


def test_range_bounds_with_a_time_zone_are_instants(spark):
    df = spark.createDataFrame(
        [(dt.datetime(2024, 1, 1, 9, 59, 59),), (dt.datetime(2024, 1, 1, 10, 0, 1),)], "at timestamp"
    )
    rule = {"type": "range", "column": "at", "max": "2024-01-01T12:00:00+02:00"}  # 10:00 UTC
    assert run_one(df, rule).failed_count == 1
    assert run_one(df, {"type": "range", "column": "at", "min": "2024-01-01T10:00:00Z"}).failed_count == 1


def test_range_on_a_timestamp_ntz_column(spark):
    df = spark.createDataFrame([(dt.datetime(2024, 1, 1, 10),), (dt.datetime(2024, 3, 1),)], "at timestamp_ntz")
    assert run_one(df, {"type": "range", "column": "at", "min": "2024-01-01", "max": "2024-02-01"}).failed_count == 1


def test_range_on_strings_holding_numbers_or_dates(spark):
    # A present value that is not a number (or not a date) cannot be in the interval.
    numbers = spark.createDataFrame([("5",), ("50",), ("abc",), (None,)], "amount string")
    assert run_one(numbers, {"type": "range", "column": "amount", "min": 0, "max": 10}).failed_count == 2
    days = spark.createDataFrame([("2024-01-15",), ("2023-05-01",), ("soon",), (None,)], "day string")
    assert run_one(days, {"type": "range", "column": "day", "min": "2024-01-01"}).failed_count == 2


def test_range_bounds_of_the_wrong_kind_for_the_column_are_a_rule_error_before_any_job(spark, job_counter):
    df = spark.createDataFrame([(dt.date(2024, 1, 1), 5)], "day date, amount int")
    with job_counter.count() as jobs, pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [{"type": "row_count"}, {"type": "range", "column": "day", "min": 0}])
    assert str(raised.value) == "rules[1] (range): numeric bounds need a numeric column, but day is date"
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [{"type": "range", "column": "amount", "max": "2024-01-01"}])
    assert str(raised.value) == "rules[0] (range): date bounds need a date or timestamp column, but amount is int"
    assert jobs.jobs == 0


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ({"type": "range", "column": "a"}, "needs at least one of 'min' or 'max', e.g. "
                                           '{"type": "range", "column": "a" ...'),
        ({"type": "range", "column": "a", "min": 10, "max": 1}, "'min' (10) is greater than 'max' (1)"),
        (
            {"type": "range", "column": "a", "min": "2024-02-01", "max": "2024-01-01"},
            "'min' (2024-02-01) is greater than 'max' (2024-01-01)",
        ),
        (
            {"type": "range", "column": "a", "min": 0, "max": "2024-01-01"},
            "'min' (0) and 'max' (2024-01-01) must both be numbers or both be dates",
        ),
        (
            {"type": "range", "column": "a", "min": "yesterday"},
            "'min' is 'yesterday', which is neither a number nor an ISO date like '2024-01-31'",
        ),
        (
            {"type": "range", "column": "a", "max": "2024-02-30"},
            "'max' is '2024-02-30', which is not a real date (day is out of range for month)",
        ),
        (
            # 12:00 at +02:00 is 10:00 UTC, after 09:00 UTC.
            {"type": "range", "column": "a", "min": "2024-01-01T12:00:00+02:00", "max": "2024-01-01T09:00:00Z"},
            "'min' (2024-01-01T12:00:00+02:00) is greater than 'max' (2024-01-01T09:00:00Z)",
        ),
        (
            # Spark reads a zone only after the seconds; refused here rather than mid-job.
            {"type": "range", "column": "a", "min": "2024-01-01T10:00Z"},
            "'min' is '2024-01-01T10:00Z', which is neither a number nor an ISO date like '2024-01-31'",
        ),
    ],
)
def test_range_malformed_rules(rule, reason):
    message = refused(rule)
    if reason.endswith("..."):
        assert message.startswith("rules[0] (range): needs at least one of 'min' or 'max'")
    else:
        assert message == f"rules[0] (range): {reason}"


# -- regex -------------------------------------------------------------------------------


def test_regex_nulls_fail_and_the_match_is_partial_unless_anchored(spark):
    df = spark.createDataFrame([("12345678901",), ("1234567890",), ("x12345678901",), (None,)], "document string")
    anchored = run_one(df, {"type": "regex", "column": "document", "pattern": "^[0-9]{11}$"})
    assert anchored == CheckResult(
        "regex",
        False,
        "regex(document,^[0-9]{11}$): 3 values do not match (NULL counts as not matching)",
        3,
        code="regex(document,^[0-9]{11}$)",
    )
    # rlike finds the pattern anywhere: only the NULL fails.
    partial = run_one(df, {"type": "regex", "column": "document", "pattern": "[0-9]{10}"})
    assert partial.message == "regex(document,[0-9]{10}): 1 value does not match (NULL counts as not matching)"


def test_regex_with_null_is_valid_leaves_nulls_out_in_the_result_and_the_split(spark):
    # Seed 004's regex_check: NULLs are excluded.
    df = spark.createDataFrame([("12345678901",), ("123",), (None,)], "document string")
    rule = {"type": "regex", "column": "document", "pattern": "^[0-9]{11}$", "null_is_valid": True}
    assert run_one(df, rule) == CheckResult(
        "regex", False, "regex(document,^[0-9]{11}$): 1 value does not match", 1, code="regex(document,^[0-9]{11}$)"
    )
    valid, invalid = Cola().split(df, [rule])
    assert sorted_rows(row.document for row in valid.collect()) == sorted_rows(["12345678901", None])
    assert [row.document for row in invalid.collect()] == ["123"]
    assert run_one(df.where("document IS NULL OR document = '12345678901'"), rule).message == (
        "regex(document,^[0-9]{11}$): all present values match"
    )


def test_regex_passes_when_every_value_matches(spark):
    df = spark.createDataFrame([("abc",), ("xbz",)], "code string")
    assert run_one(df, {"type": "regex", "column": "code", "pattern": "b"}) == CheckResult(
        "regex", True, "regex(code,b): all values match", 0, code="regex(code,b)"
    )


def test_regex_on_an_empty_dataframe_passes_and_on_an_all_null_column_fails_every_row(spark):
    empty = spark.createDataFrame([], "code string")
    assert run_one(empty, {"type": "regex", "column": "code", "pattern": "x"}).passed is True
    nulls = spark.createDataFrame([(None,), (None,)], "code string")
    assert run_one(nulls, {"type": "regex", "column": "code", "pattern": "x"}).failed_count == 2


def test_regex_on_a_number_column_matches_its_text(spark):
    df = spark.createDataFrame([(123,), (12,)], "n int")
    assert run_one(df, {"type": "regex", "column": "n", "pattern": "^[0-9]{3}$"}).failed_count == 1


def test_regex_java_only_syntax_runs_on_spark(spark):
    df = spark.createDataFrame([("Ana",), ("ana",), ("1.5",), ("105",)], "value string")
    # \p{Lu}: a Unicode upper-case letter; \Q...\E: a literal; \z: the end of input.
    assert run_one(df, {"type": "regex", "column": "value", "pattern": r"^\p{Lu}"}).failed_count == 3
    assert run_one(df, {"type": "regex", "column": "value", "pattern": r"^\Q1.5\E\z"}).failed_count == 3
    assert run_one(df, {"type": "regex", "column": "value", "pattern": r"^[a-z]++$"}).failed_count == 3
    assert run_one(df, {"type": "regex", "column": "value", "pattern": r"^(?<first>\w)\w*$"}).failed_count == 1


def test_regex_that_cannot_compile_is_refused_with_a_caret():
    assert refused({"type": "regex", "column": "c", "pattern": "^([0-9]{3}$"}) == (
        "rules[0] (regex): 'pattern' is not a valid regex (missing ), unterminated subpattern at position 1)\n"
        "    ^([0-9]{3}$\n"
        "     ^"
    )


def test_regex_java_only_syntax_does_not_hide_another_error():
    # \p{L} is fine for Spark, but the bracket that follows is never closed.
    assert refused({"type": "regex", "column": "c", "pattern": r"\p{L}[a-"}) == (
        "rules[0] (regex): 'pattern' is not a valid regex (unterminated character set at position 5)\n"
        "    \\p{L}[a-\n"
        "         ^"
    )


def test_regex_java_set_operations_are_accepted_and_run(spark):
    df = spark.createDataFrame([("b",), ("a",)], "letter string")
    # A consonant: a-z intersected with not-a-vowel, which Python's re cannot express.
    assert run_one(df, {"type": "regex", "column": "letter", "pattern": "^[a-z&&[^aeiou]]$"}).failed_count == 1


def test_regex_with_a_repetition_too_large_is_refused():
    assert refused({"type": "regex", "column": "c", "pattern": "a{99999999999}"}) == (
        "rules[0] (regex): 'pattern' is not a valid regex (the repetition number is too large)"
    )


def test_regex_python_only_syntax_is_refused_because_spark_cannot_run_it():
    assert refused({"type": "regex", "column": "c", "pattern": "(?P<year>[0-9]{4})"}) == (
        "rules[0] (regex): 'pattern' uses '(?P<', which is Python-only syntax; "
        "Spark's Java regex needs (?<name>...)\n"
        "    (?P<year>[0-9]{4})\n"
        "    ^"
    )


# -- row_count (bounds form; the metric form is in test_checks_metrics) ------------------


def test_row_count_min_defaults_to_zero(spark):
    empty = spark.createDataFrame([], "id int")
    result = run_one(empty, {"type": "row_count"})
    assert result == CheckResult("row_count", True, "row_count = 0 is within bounds (min 0)", 0, code="row_count")
    assert str(result) == "[PASS] check: row_count = 0 is within bounds (min 0)"


def test_row_count_bounds_are_inclusive(three_rows):
    assert run_one(three_rows, {"type": "row_count", "min": 3, "max": 3}) == CheckResult(
        "row_count", True, "row_count = 3 is within bounds (min 3, max 3)", 0, code="row_count"
    )


def test_row_count_below_min_and_above_max_fail_with_one_problem(three_rows):
    assert run_one(three_rows, {"type": "row_count", "min": 4}) == CheckResult(
        "row_count", False, "row_count = 3 is below min 4", 1, code="row_count"
    )
    assert run_one(three_rows, {"type": "row_count", "min": 1, "max": 2}) == CheckResult(
        "row_count", False, "row_count = 3 is above max 2", 1, code="row_count"
    )


def test_row_count_seed_guard_against_an_empty_load(spark):
    empty = spark.createDataFrame([], "id int")
    result = run_one(empty, {"type": "row_count", "min": 1, "name": "not empty"})
    assert str(result) == "[FAIL] not empty: row_count = 0 is below min 1"


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        (
            {"type": "row_count", "min": 1, "must_be": "> 0"},
            "mixes the bounds form (min) with the metric form (must_be); "
            'use either {"min": 1, "max": 100} or {"must_be": "between 1 and 100"}',
        ),
        (
            {"type": "row_count", "max": 10, "warn": "> 1", "must_be": "> 0"},
            "mixes the bounds form (max) with the metric form (must_be, warn); "
            'use either {"min": 1, "max": 100} or {"must_be": "between 1 and 100"}',
        ),
        ({"type": "row_count", "warn": "> 1"}, "'warn' needs 'must_be' next to it"),
        ({"type": "row_count", "min": 5, "max": 1}, "'min' (5) is greater than 'max' (1)"),
        ({"type": "row_count", "min": -1}, "'min' must be a whole number >= 0, got -1"),
    ],
)
def test_row_count_malformed_rules(rule, reason):
    assert refused(rule) == f"rules[0] (row_count): {reason}"

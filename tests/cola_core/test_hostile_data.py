"""Bad data is measured, never a crash: impossible dates, values followed by a line
terminator, and numbers beyond what a bigint literal holds (issue 10).

Spark 4 runs in ANSI mode, where a plain cast of ``'2022-02-30'`` fails the whole job with
``CAST_INVALID_INPUT``; every test here ran into such a failure, or into a wrong answer,
before the checks read text with try-cast semantics and anchored their formats with ``\\z``.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from cola_core import CheckResult, Cola, ColaRuleError
from cola_helpers import refused, run_one

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def count_of(df, rule) -> int:
    return run_one(df, rule).failed_count


# -- impossible dates --------------------------------------------------------------------


@pytest.fixture
def text_dates(spark):
    return spark.createDataFrame(
        [("2022-02-30",), ("2022-01-05",), ("2021-12-31",), ("not a date",), ("2023-02-29 10:00:00",), (None,)],
        "d string",
    )


def test_range_with_date_bounds_counts_impossible_dates_as_out_of_range(text_dates):
    rule = {"type": "range", "column": "d", "min": "2022-01-01", "max": "2023-12-31"}
    assert run_one(text_dates, rule) == CheckResult(
        "range", False, "range(d,2022-01-01,2023-12-31): 4 values out of range (between 2022-01-01 and 2023-12-31)",
        4, code="range(d,2022-01-01,2023-12-31)",
    )
    valid, invalid = Cola().split(text_dates, [rule])
    assert sorted(row.d for row in invalid.collect()) == ["2021-12-31", "2022-02-30", "2023-02-29 10:00:00", "not a date"]
    assert sorted((row.d or "") for row in valid.collect()) == ["", "2022-01-05"]


def test_range_with_a_timestamp_bound_on_impossible_text(text_dates):
    rule = {"type": "range", "column": "d", "max": "2030-01-01 00:00:00"}
    assert count_of(text_dates, rule) == 3  # 2022-02-30, 'not a date', 2023-02-29 10:00:00


def test_freshness_ignores_impossible_dates(text_dates):
    result = run_one(text_dates, {"type": "freshness", "column": "d", "must_be": "> 1d"})
    assert result.passed is True and result.failed_count == 0
    # The newest real instant is 2022-01-05; 2023-02-29 10:00:00 names no day.
    newest = dt.datetime(2022, 1, 5, tzinfo=dt.timezone.utc)
    age = (dt.datetime.now(dt.timezone.utc) - newest).total_seconds()
    assert result.metric_value == pytest.approx(age, abs=120)


def test_freshness_of_only_impossible_dates_measures_nothing(spark):
    df = spark.createDataFrame([("2022-02-30",), ("2022-13-01",), ("2023-02-29T10:00:00",)], "d string")
    assert run_one(df, {"type": "freshness", "column": "d", "must_be": "< 1d"}) == CheckResult(
        "freshness", False, "freshness(d): nothing was measured (d has no timestamps), so must_be (< 1d) is not met",
        1, code="freshness(d)",
    )


@pytest.fixture
def typed_dates(spark):
    return spark.createDataFrame(
        [(dt.date(2022, 1, 5), dt.datetime(2022, 1, 5, 10)), (dt.date(2022, 3, 1), dt.datetime(2022, 3, 1)), (None, None)],
        "d date, ts timestamp",
    )


@pytest.mark.parametrize(
    ("column", "values", "invalid"),
    [
        ("d", ["2022-01-05", "2022-02-30"], 1),
        ("d", ["2022-02-30"], 2),
        ("ts", ["2022-01-05 10:00:00", "2023-02-29 10:00:00"], 1),
        ("ts", ["2022-02-30T00:00:00"], 2),
    ],
)
def test_valid_values_on_date_columns_ignore_impossible_rule_dates(typed_dates, column, values, invalid):
    rule = {"type": "invalid_count", "column": column, "valid_values": values, "must_be": "= 0"}
    assert count_of(typed_dates, rule) == invalid


@pytest.mark.parametrize(("column", "values"), [("d", ["2022-02-30", "2022-03-01"]), ("ts", ["2022-02-30 00:00:00"])])
def test_missing_values_on_date_columns_ignore_impossible_rule_dates(typed_dates, column, values):
    rule = {"type": "missing_count", "column": column, "missing_values": values, "must_be": "= 0"}
    # NULL is missing; '2022-03-01' is too on the date column, and '2022-02-30' matches nothing.
    assert count_of(typed_dates, rule) == (2 if column == "d" else 1)


def test_castable_to_date_counts_impossible_dates(text_dates):
    assert count_of(text_dates, {"type": "castable", "column": "d", "to": "date"}) == 3


@pytest.mark.parametrize(
    ("fmt", "values", "invalid"),
    [
        ("date", ["2024-02-29", "2022-02-30", "2023-02-29", "2022-13-01", "2022-04-31", "2022-04-30"], 4),
        (
            "timestamp",
            ["2024-02-29 23:59:59", "2022-02-30 10:00:00", "2023-02-29T00:00:00Z", "2022-06-31T10:00+05:30",
             "2022-06-30T10:00+05:30"],
            3,
        ),
    ],
)
def test_calendar_formats_refuse_impossible_dates(spark, fmt, values, invalid):
    df = spark.createDataFrame([(v,) for v in values], "v string")
    assert count_of(df, {"type": "invalid_count", "column": "v", "valid_format": fmt, "must_be": "= 0"}) == invalid


# -- trailing line terminators -----------------------------------------------------------

# One value each format accepts; every named format must be here (see the test below).
ACCEPTED = {
    "email": "user@example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "phone": "+55 (11) 98765-4321",
    "integer": "42",
    "decimal": "3.14",
    "number": "1e-3",
    "percentage": "12%",
    "date": "2024-02-29",
    "timestamp": "2024-01-31 23:59:59",
    "ip": "192.168.1.1",
    "ipv4": "10.0.0.255",
    "url": "https://example.com/a",
    "boolean": "true",
    "alphanumeric": "abc123",
    "credit_card": "4111 1111 1111 1111",
    "cpf": "123.456.789-09",
    "cnpj": "12.345.678/0001-95",
}
# Every line terminator Java's '$' matches just before, at the end of the text.
TERMINATORS = ["\n", "\r\n", "\r", "\u0085", "\u2028", "\u2029"]


def test_every_named_format_is_probed_for_line_terminators():
    from cola_core.checks.conditions import NAMED_FORMATS

    assert sorted(ACCEPTED) == sorted(NAMED_FORMATS)


@pytest.mark.parametrize("fmt", sorted(ACCEPTED))
def test_named_formats_refuse_a_trailing_line_terminator(spark, fmt):
    values = [ACCEPTED[fmt], *(ACCEPTED[fmt] + ending for ending in TERMINATORS)]
    df = spark.createDataFrame([(v,) for v in values], "v string")
    rule = {"type": "invalid_count", "column": "v", "valid_format": fmt, "must_be": "= 0"}
    valid, invalid = Cola().split(df, [rule])
    assert [row.v for row in valid.collect()] == [ACCEPTED[fmt]]
    assert sorted(row.v for row in invalid.collect()) == sorted(values[1:])
    assert count_of(df, rule) == len(TERMINATORS)


def test_a_user_pattern_anchored_with_dollar_or_backslash_z_refuses_a_trailing_terminator(spark):
    df = spark.createDataFrame([("abc",), ("abc\n",), ("abc\r\n",), ("x\r",)], "v string")
    # Java's '$' would let 'abc\n' and 'abc\r\n' through; Cola runs a user's ending '$' as '\z'.
    assert count_of(df, {"type": "regex", "column": "v", "pattern": "^[a-z]+$"}) == 3
    assert count_of(df, {"type": "regex", "column": "v", "pattern": r"^[a-z]+\z"}) == 3
    assert count_of(df, {"type": "invalid_count", "column": "v", "valid_regex": r"^[a-z]+\z", "must_be": "= 0"}) == 3


# -- numbers beyond a bigint -------------------------------------------------------------


@pytest.fixture
def longs(spark):
    return spark.createDataFrame([(2**63 - 1,), (-(2**63),), (0,), (None,)], "n bigint")


@pytest.mark.parametrize(
    ("bounds", "failed"),
    [
        ({"min": 2**63}, 3),
        ({"max": 2**63}, 0),
        ({"min": -(2**63) - 1}, 0),
        ({"max": -(2**63) - 1}, 3),
        ({"min": -(10**38) + 1, "max": 10**38 - 1}, 0),
        ({"min": 2**63 - 1, "max": 2**64}, 2),
        ({"max": 1e300}, 0),
        ({"min": -1e300, "max": -1e299}, 3),
    ],
)
def test_range_bounds_beyond_bigint_compare_exactly(longs, bounds, failed):
    assert count_of(longs, {"type": "range", "column": "n", **bounds}) == failed


def test_a_range_bound_beyond_bigint_reads_in_the_message(longs):
    assert run_one(longs, {"type": "range", "column": "n", "min": 2**63}) == CheckResult(
        "range", False, "range(n,9223372036854775808,): 3 values out of range (>= 9223372036854775808)", 3,
        code="range(n,9223372036854775808,)",
    )


def test_huge_bounds_on_decimal_and_string_columns(spark):
    df = spark.createDataFrame(
        [(Decimal(2**64 + 1), str(2**64 + 1)), (Decimal(2**64), str(2**64)), (Decimal(1), "1")], "d decimal(38,0), s string"
    )
    assert count_of(df, {"type": "range", "column": "d", "max": 2**64}) == 1
    assert count_of(df, {"type": "range", "column": "d", "min": 2**64}) == 1
    # Numbers held as text are read as doubles, so 2**64 + 1 is 2**64 there.
    assert count_of(df, {"type": "range", "column": "s", "min": 2**64}) == 1


@pytest.mark.parametrize(
    ("settings", "invalid"),
    [
        ({"valid_max": 2**63 - 1}, 0),
        ({"valid_min": -(2**63), "valid_max": -1}, 2),
        ({"valid_values": [2**63 - 1, 0]}, 1),
        ({"invalid_values": [-(2**63)]}, 1),
    ],
)
def test_validity_numbers_at_the_bigint_limits(longs, settings, invalid):
    rule = {"type": "invalid_count", "column": "n", "must_be": "= 0", **settings}
    assert count_of(longs, rule) == invalid


@pytest.mark.parametrize(("key", "value"), [("valid_min", 2**63), ("valid_max", -(2**63) - 1)])
def test_validity_bounds_beyond_bigint_are_rule_errors(key, value):
    rule = {"type": "invalid_count", "column": "n", "must_be": "= 0", key: value}
    assert refused(rule) == (
        f"rules[0] (invalid_count): '{key}' is {value}, outside the 64-bit range Spark takes for it "
        "(-9223372036854775808 to 9223372036854775807)"
    )


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            {"type": "range", "column": "n", "min": 10**38},
            "rules[0] (range): 'min' is a whole number of more than 38 digits; no Spark type holds it "
            "(the widest, a decimal, has 38 digits)",
        ),
        (
            {"type": "range", "column": "n", "max": -(10**5000)},
            "rules[0] (range): 'max' is a whole number of more than 38 digits; no Spark type holds it "
            "(the widest, a decimal, has 38 digits)",
        ),
        ({"type": "range", "column": "n", "max": float("nan")}, "rules[0] (range): 'max' is nan; a number in a rule must be finite"),
        ({"type": "range", "column": "n", "min": float("inf")}, "rules[0] (range): 'min' is inf; a number in a rule must be finite"),
        (
            {"type": "invalid_count", "column": "n", "valid_max": float("-inf"), "must_be": "= 0"},
            "rules[0] (invalid_count): 'valid_max' is -inf; a number in a rule must be finite",
        ),
    ],
)
def test_numbers_spark_cannot_take_are_rule_errors(rule, message):
    assert refused(rule) == message


def test_a_json_1e400_bound_is_refused_as_infinite():
    import json

    rule = json.loads('{"type": "range", "column": "n", "max": 1e400}')
    assert refused(rule) == "rules[0] (range): 'max' is inf; a number in a rule must be finite"


# -- numbers held as text ----------------------------------------------------------------

# Java's '$' matches before a final line terminator and Java's '\s' is ASCII only, so the
# first three once passed the shape test and then failed the job in the cast to double.
NUMERIC_TEXTS = ["1\u2028", "1\x85", "1\u2029", "1\n", "1\r\n", " 1 ", "1e5", "\u0661\u0662", "1"]


@pytest.fixture
def numeric_texts(spark):
    return spark.createDataFrame([(v,) for v in NUMERIC_TEXTS], "s string")


def test_range_on_numbers_held_as_text_never_crashes(numeric_texts):
    rule = {"type": "range", "column": "s", "min": 0, "max": 10}
    valid, invalid = Cola().split(numeric_texts, [rule])
    # ASCII whitespace around a number is Spark's to trim; a Unicode terminator, an exponent
    # beyond the bounds and Arabic-Indic digits are out of range.
    assert sorted(row.s for row in valid.collect()) == sorted(["1\n", "1\r\n", " 1 ", "1"])
    assert sorted(row.s for row in invalid.collect()) == sorted(["1\u2028", "1\x85", "1\u2029", "1e5", "\u0661\u0662"])
    assert run_one(numeric_texts, rule) == CheckResult(
        "range", False, "range(s,0,10): 5 values out of range (between 0 and 10)", 5, code="range(s,0,10)"
    )


@pytest.mark.parametrize(
    ("settings", "invalid"),
    [({"valid_min": 0}, 4), ({"valid_max": 10}, 5), ({"valid_min": 0, "valid_max": 1e6}, 4)],
)
def test_validity_bounds_on_numbers_held_as_text_never_crash(numeric_texts, settings, invalid):
    rule = {"type": "invalid_count", "column": "s", "must_be": "= 0", **settings}
    assert count_of(numeric_texts, rule) == invalid


@pytest.mark.parametrize(
    ("values", "kept"),
    [
        (["1\u2028", "1\x85", "1\u2029", "\u0661\u0662", "1 x", "0x10"], []),
        (["1\n", " 1 ", "1\r\n", "\t1\n\n"], [1, 1, 1, 1]),
        (["1e5", "-0", "1.0"], [100000, 0, 1]),
    ],
)
def test_rule_texts_compare_as_numbers_only_when_spark_reads_them_so(values, kept):
    from pyspark.sql.types import DoubleType, LongType

    from cola_core.checks.conditions import comparable_values

    assert comparable_values(values, LongType()) == kept
    assert all(type(number) is int for number in comparable_values(values, LongType()))
    assert comparable_values(values, DoubleType()) == [float(v) for v in kept]
    # A bigint holds no fraction; a double does.
    assert comparable_values(["2.50"], LongType()) == []
    assert comparable_values(["2.50"], DoubleType()) == [2.5]


def test_integer_text_in_valid_values_compares_exactly_on_a_bigint_column(spark):
    df = spark.createDataFrame([(2**53,), (2**53 + 1,), (None,)], "n bigint")
    rule = {"type": "invalid_count", "column": "n", "valid_values": [str(2**53 + 1)], "must_be": "= 0"}
    valid, invalid = Cola().split(df, [rule])
    assert [row.n for row in invalid.collect()] == [2**53]
    assert [row.n for row in valid.collect()] == [2**53 + 1, None]
    missing = {"type": "missing_count", "column": "n", "missing_values": [str(2**53 + 1)], "must_be": "= 0"}
    assert count_of(df, missing) == 2


def test_decimal_text_in_valid_values_compares_exactly_on_a_decimal_column(spark):
    df = spark.createDataFrame([(Decimal("0.1"),), (Decimal("0.3"),)], "d decimal(10,2)")
    rule = {"type": "invalid_count", "column": "d", "valid_values": ["0.10", "1e40", "0.123"], "must_be": "= 0"}
    assert count_of(df, rule) == 1


def test_comparable_values_keep_integer_text_exact():
    from pyspark.sql.types import DecimalType, LongType

    from cola_core.checks.conditions import comparable_values

    assert comparable_values(["9007199254740993", "-9007199254740993"], LongType()) == [2**53 + 1, -(2**53 + 1)]
    assert comparable_values(["0.10", "0.123", "1e40", str(10**38), "1" * 39 + ".5"], DecimalType(10, 2)) == [
        Decimal("0.10")
    ]
    assert comparable_values([str(10**38 - 1)], DecimalType(38, 0)) == [10**38 - 1]


# -- date bounds with whitespace ---------------------------------------------------------


@pytest.mark.parametrize("bound", ["2022-01-01\n", " 2022-01-01", "2022-01-01 ", "2022-01-01\r\n", "\t2022-01-01 10:00:00"])
def test_a_date_bound_with_surrounding_whitespace_is_a_rule_error(bound):
    assert refused({"type": "range", "column": "d", "min": bound}) == (
        f"rules[0] (range): 'min' is {bound!r}, which has leading or trailing whitespace; "
        "write the date or timestamp alone, like '2024-01-31'"
    )


# -- compact numbers in messages -----------------------------------------------------------


def test_a_huge_float_bound_reads_compactly(longs):
    assert run_one(longs, {"type": "range", "column": "n", "min": -1e308, "max": 1e308}) == CheckResult(
        "range", True, "range(n,-1e+308,1e+308): all values in range (between -1e+308 and 1e+308)",
        code="range(n,-1e+308,1e+308)",
    )


def test_a_zone_offset_spark_cannot_read_is_a_rule_error():
    assert refused({"type": "range", "column": "d", "min": "2022-01-01 10:00:00+19:00"}) == (
        "rules[0] (range): 'min' is '2022-01-01 10:00:00+19:00', which is not a real date "
        "(the zone offset +19:00 is beyond Spark's largest, +-18:00)"
    )


@pytest.mark.parametrize(
    ("number", "text"),
    [(1e308, "1e+308"), (-1.5e20, "-1.5e+20"), (1e16, "1e+16"), (9999999999999998.0, "9999999999999998"),
     (Decimal(2**64), "18446744073709551616"), (Decimal("1e30"), "1000000000000000000000000000000"),
     (Decimal("2.5"), "2.5"), (12.34567, "12.3457")],
)
def test_format_number_is_compact_and_exact_for_whole_decimals(number, text):
    from cola_core.common.formatting import format_number

    assert format_number(number) == text


# -- hardening, round three: odd columns, time, inputs that change, long values -------------


@pytest.fixture
def addresses(spark):
    return spark.createDataFrame(
        [(1, ("Lisbon", "1000")), (2, (None, "2000"))], "id int, address struct<city: string, zip: string>"
    )


@pytest.mark.parametrize(
    "rule",
    [
        {"type": "not_null", "columns": ["address.*"]},
        {"type": "range", "column": "address.*", "min": 0},
        {"type": "regex", "column": "address.*", "pattern": "^[0-9]+$"},
        {"type": "missing_count", "column": "address.*", "must_be": "= 0"},
        {"type": "not_null", "columns": ["`address`.*"]},
    ],
)
def test_a_star_path_is_a_rule_error_before_any_job_in_run_split_and_split_write(addresses, rule, tmp_path):
    name = rule.get("column") or rule["columns"][0]
    message = (
        f"rules[0] ({rule['type']}): column {name!r} is a star path, not the name of a column or of one nested "
        "field; name each column (for several, list them in 'columns' or use 'targets')"
    )
    for action in (
        lambda: Cola().run(addresses, [rule]),
        lambda: Cola().split(addresses, [rule]),
        lambda: Cola().split_write(addresses, [rule], str(tmp_path / "v"), str(tmp_path / "i")),
    ):
        assert refused_with(action) == message
    assert not (tmp_path / "v").exists() and not (tmp_path / "i").exists()
    # The nested field itself is a name.
    (result,) = Cola().run(addresses, [{"type": "not_null", "columns": ["address.city"]}])
    assert result.message == "not_null(address.city): 1 NULL value (address.city: 1)"


def refused_with(action) -> str:
    from cola_core import ColaError

    with pytest.raises(ColaError) as raised:
        action()
    return str(raised.value)


def test_repeated_column_names_are_measured_by_run_and_refused_by_a_split_naming_them(spark, tmp_path):
    df = spark.createDataFrame([(1, 2, 3), (4, 5, None)], "a int, A int, b int")
    (result,) = Cola().run(df, [{"type": "not_null", "columns": ["b"]}])
    assert result.failed_count == 1
    message = (
        "the DataFrame has more than one column named 'a' (its columns: a, A, b); a split keeps every column of "
        "every row, so each must have its own name: rename or drop the repeated ones (df.toDF(*names) or a select) "
        "before splitting"
    )
    rules = [{"type": "not_null", "columns": ["b"]}]
    assert refused_with(lambda: Cola().split(df, rules)) == message
    assert refused_with(lambda: Cola().split_write(df, rules, str(tmp_path / "v"), str(tmp_path / "i"))) == message
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_lazy_split_partitions_rows_under_a_rule_on_the_time(spark):
    """current_timestamp() is taken once per query: valid and invalid, collected on each side
    of the rule's instant, saw two times, and every row went to both outputs."""
    import time

    instant = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=8)  # the split is done by then
    rule = {"type": "expression", "expression": f"current_timestamp() < TIMESTAMP '{instant.isoformat()}'"}
    split = Cola().split(spark.range(10), [rule])
    valid = [row.id for row in split.valid.collect()]
    time.sleep(max(0.0, (instant - dt.datetime.now(dt.timezone.utc)).total_seconds()) + 0.5)
    invalid = [row.id for row in split.invalid.collect()]
    assert (sorted(valid), invalid) == (list(range(10)), [])


def test_the_lazy_split_partitions_an_input_that_is_not_the_same_twice(spark):
    """A Python UDF that draws anew on every evaluation: each output computed from the input
    again lost some rows and duplicated others."""
    import random

    from pyspark.sql import functions as F

    draw = F.udf(lambda: random.random(), "double").asNondeterministic()
    df = spark.range(2000).withColumn("score", draw())
    split = Cola().split(df, [{"type": "range", "column": "score", "max": 0.5}])
    for _ in range(2):  # each collect reads what the split kept, not a new draw
        valid = [row.id for row in split.valid.collect()]
        invalid = [row.id for row in split.invalid.collect()]
        assert sorted(valid + invalid) == list(range(2000))


def test_a_long_value_of_the_data_is_cut_in_a_message_and_in_a_sample(spark):
    """A sql rule once echoed a 30-million-character value into its message, its results file
    and its XCom. A constant that large is refused before Spark (test_guards_sqlsize.py); one the
    data holds is measured, and cut where a result shows it."""
    df = spark.createDataFrame([(1, "y" * 3_000_000)], "id int, s string")
    sql, regex = Cola().run(df, [{"type": "sql", "query": "SELECT max(s) FROM _validation_df"},
                                 {"type": "regex", "column": "s", "pattern": "^x"}], samples=2)
    assert (sql.severity, len(sql.message)) == ("fail", 2_022)
    assert sql.message.endswith("y" * 10 + "… [cut: 29 characters]")
    assert regex.samples == [{"id": 1, "s": "y" * 1_000 + "… [cut: 2,999,000 characters]"}]


@pytest.mark.parametrize("key", ["valid_values", "invalid_values", "missing_values"])
def test_a_list_larger_than_the_driver_can_plan_is_refused_before_spark(key):
    """The issue's 7 MB file holds one rule of 999,000 valid_values, whose plan exhausts the
    driver's memory after minutes; one value over the bound is refused in pure Python, naming the
    rule (and its list is never written into the message)."""
    from cola_core.language.params import MAX_LIST_VALUES

    values = [f"code-{number}" for number in range(MAX_LIST_VALUES + 1)]
    rules = [{"type": "not_null", "columns": ["id"]}, {"type": "invalid_count", "column": "code", key: values, "valid_min_length": 1, "must_be": "= 0"}]
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse(rules)
    assert str(raised.value) == (
        f"rules[1] (invalid_count): '{key}' holds 10,001 values; a rule may list at most 10,000, so that the driver "
        "can plan it: check a larger set against a table of the values with a foreign_key rule"
    )
    assert len(Cola().parse([{"type": "invalid_count", "column": "code", key: values[:-1], "valid_min_length": 1, "must_be": "= 0"}])) == 1
    schema = Cola().rules_schema()
    assert '"maxItems": 10000' in json.dumps(schema)

"""Suggestions pass on the data they came from, whatever its shape (issue 44): each test
profiles a DataFrame, suggests, runs the suggestions on the same DataFrame and reads their
YAML back through the rules file reader."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from cola_core import Cola
from cola_core.errors import ColaError
from cola_core.language.files import read_rules_file
from cola_core.ruleset.suggestions import Suggestions, suggestions_yaml


def _suggested(df: Any, tmp_path: Any, **options: Any) -> Suggestions:
    """The suggestions for ``df``, after asserting that every one passes on it and that their
    YAML reads back as exactly them."""
    rules = Cola().suggest(df, **options)
    results = Cola().run(df, rules)
    assert [(r.check_name, r.passed, r.message) for r in results if not r.passed] == []
    assert len(results) == len(rules)
    path = tmp_path / "suggested.yaml"
    path.write_text(suggestions_yaml(rules), encoding="utf-8")
    assert read_rules_file(path) == list(rules)
    return rules


def _today() -> dt.date:
    # The run's freshness is measured by the clock: the data date is today's, in UTC.
    return dt.datetime.now(dt.timezone.utc).date()


def test_a_negative_zero_is_the_zero_unique_sees(spark, tmp_path):
    df = spark.createDataFrame([(0.0,), (-0.0,), (1.0,)], "x double")
    rules = _suggested(df, tmp_path)
    assert [rule["type"] for rule in rules] == ["row_count", "not_null", "range"]
    assert Cola().profile(df).columns[0].top_values == (("0.0", 2), ("1.0", 1))


def test_a_timestamp_ntz_column_is_profiled_and_suggested(spark, tmp_path):
    today = _today()
    df = spark.sql(
        f"SELECT TIMESTAMP_NTZ'{today} 10:00:00' AS t UNION ALL SELECT TIMESTAMP_NTZ'2024-01-01 00:00:00'"
    )
    column = Cola().profile(df).columns[0]
    assert (column.minimum, column.maximum) == (dt.datetime(2024, 1, 1), dt.datetime.combine(today, dt.time(10)))
    assert column.mean == dt.datetime(2024, 1, 1) + (dt.datetime.combine(today, dt.time(10)) - dt.datetime(2024, 1, 1)) / 2
    rules = _suggested(df, tmp_path, data_date=today)
    assert [rule["type"] for rule in rules] == ["row_count", "freshness", "not_null", "unique"]
    assert rules[1]["must_be"] == "< 2d"


@pytest.mark.parametrize(("type_name", "values"), [
    ("decimal(38,18)", [Decimal("9999999999999999999.5"), Decimal("9999999999999999998.25")]),
    ("decimal(38,0)", [Decimal("9" * 38), Decimal(10**37)]),
])
def test_a_decimal_whose_exact_average_overflows_has_a_mean(spark, tmp_path, type_name, values):
    df = spark.createDataFrame([(value,) for value in values], f"x {type_name}")
    column = Cola().profile(df).columns[0]
    assert column.mean == pytest.approx((float(values[0]) + float(values[1])) / 2)
    rules = _suggested(df, tmp_path)
    assert [rule["type"] for rule in rules] == ["row_count", "not_null", "unique", "range"]


def test_a_margin_stops_at_the_decimal_type_s_largest_value(spark, tmp_path):
    top = 10**38 - 1
    df = spark.createDataFrame([(Decimal(top),), (Decimal(-top),)], "x decimal(38,0)")
    rules = _suggested(df, tmp_path, strictness="margin")
    assert rules[-1] == {"type": "range", "column": "x", "min": -top, "max": top,
                         "name": f"values from {-top} to {top} when profiled"}
    small = spark.createDataFrame([(Decimal("99.9"),), (Decimal("-99.9"),)], "x decimal(3,1)")
    assert _suggested(small, tmp_path, strictness="margin")[-1]["max"] == 119.89


def test_the_first_instant_of_the_calendar_is_profiled(spark, tmp_path):
    df = spark.sql("SELECT TIMESTAMP'0001-01-01 00:00:00' AS t UNION ALL SELECT current_timestamp() AS t")
    column = Cola().profile(df).columns[0]
    assert column.minimum == dt.datetime(1, 1, 1)
    rules = _suggested(df, tmp_path, data_date=_today())
    assert [rule["type"] for rule in rules] == ["row_count", "freshness", "not_null", "unique"]


@pytest.mark.parametrize("odd", ["\x80", "\x85", "\u2028", "\x7f", "\ufeff", "\x9f"])
def test_text_yaml_cannot_read_as_itself_is_escaped(spark, tmp_path, odd):
    df = spark.createDataFrame([(f"a{odd}",), (f"b{odd}c",)] * 2, f"`s{odd}` string")
    rules = _suggested(df, tmp_path)
    assert rules[-1]["valid_values"] == [f"a{odd}", f"b{odd}c"]
    assert rules[-1]["column"] == f"s{odd}"
    assert odd not in suggestions_yaml(rules)


def test_two_columns_of_one_name_get_no_rule_and_say_why(spark, tmp_path):
    df = spark.createDataFrame([(1, 2), (2, 3)], "a int, A int")
    rules = _suggested(df, tmp_path)
    assert list(rules) == [{"type": "row_count", "must_be": "between 1 and 3", "name": "2 rows when profiled"}]
    why = ("2 columns are named 'a', 'A', so a rule naming {} fails as ambiguous: rename them apart "
           "(DataFrame.toDF) and suggest again")
    assert rules.skipped == (
        f"not_null(a): {why.format(repr('a'))}", f"unique(a): {why.format(repr('a'))}",
        f"range(a): {why.format(repr('a'))}", f"not_null(A): {why.format(repr('A'))}",
        f"unique(A): {why.format(repr('A'))}", f"range(A): {why.format(repr('A'))}",
    )
    text = suggestions_yaml(rules)
    assert "# Not suggested, although the profile pointed at them:\n  # not_null(a): 2 columns" in text
    with pytest.raises(ColaError, match=r"2 columns of the DataFrame are named 'a', 'A': a rule naming 'a' could"):
        Cola().profile(df, columns=["a"])


def test_a_float_bound_without_a_point_reads_back_as_a_number(spark, tmp_path):
    df = spark.createDataFrame([(1e19,), (2e19,)], "x double")
    rules = _suggested(df, tmp_path)
    assert (rules[-1]["min"], rules[-1]["max"]) == (1e19, 2e19)
    assert "min: 1.0e+19" in suggestions_yaml(rules)


def test_order_ids_get_no_format_and_names_read_as_english(spark, tmp_path):
    ids = spark.createDataFrame([(f"20261204-{n:06d}", "paid") for n in range(1, 41)], "order_id string, status string")
    rules = _suggested(ids, tmp_path)
    assert [(rule["type"], rule.get("column", rule.get("columns"))) for rule in rules] == [
        ("row_count", None), ("not_null", ["order_id"]), ("unique", ["order_id"]), ("not_null", ["status"]),
        ("invalid_count", "status"), ("invalid_percent", "status"),
    ]
    assert rules[4]["name"] == "1 distinct value"
    assert rules[5]["valid_format"] == "alphanumeric"
    digits = spark.createDataFrame([("12345678901",), ("23456789012",)], "cpf_text string")
    assert _suggested(digits, tmp_path)[-1]["valid_format"] == "integer"  # phone- and cpf-shaped: a shape
    one = spark.createDataFrame([(1,)], "n int")
    assert [rule["name"] for rule in _suggested(one, tmp_path)][:2] == ["1 row when profiled", "0 NULLs in 1 row"]


def test_volume_has_a_margin_and_freshness_is_taken_at_the_data_date(spark, tmp_path):
    df = spark.createDataFrame([(dt.datetime(2026, 12, 3, 18, 0),)] * 40, "t timestamp")
    rules = Cola().suggest(df, data_date=dt.date(2026, 12, 3))
    assert rules[:2] == [
        {"type": "row_count", "must_be": "between 36 and 44", "name": "40 rows when profiled"},
        {"type": "freshness", "column": "t", "must_be": "< 2d",
         "name": "the newest t was 0.25 days old at the end of the data date"},
    ]
    # The same data suggests the same bounds on any later day: a rerun or a backfill.
    assert Cola().suggest(df, data_date=dt.date(2026, 12, 3)) == rules
    assert Cola().suggest(df, strictness="margin", data_date=dt.date(2026, 12, 3))[0]["must_be"] == "between 32 and 48"
    undated = Cola().suggest(df)
    assert [rule["type"] for rule in undated] == ["row_count", "not_null"]
    assert undated.skipped == (
        "freshness(t): no data date to take the newest value's age at (give data_date, --data-date, or now); "
        "an age by the clock would break the next day and any backfill",
    )
    assert "# Not suggested, although the profile pointed at them:\n  # freshness(t): no data date" in (
        suggestions_yaml(undated))

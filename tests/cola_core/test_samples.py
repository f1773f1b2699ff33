"""Samples stay strict JSON for every Spark type, and every value stays readable.

A real ``Cola().run(df, rules, samples=3)`` over one row of each awkward type; the summary
must go through ``json.dumps(..., allow_nan=False)`` and the results writer, and the
values must read as the documented forms (README, "Samples").
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from cola_core import Cola
from cola_core._format import iso_duration, json_safe
from cola_core.report import results_text, summarise

pytestmark = pytest.mark.spark

AWKWARD = """SELECT CAST(NULL AS INT) AS id,
  INTERVAL '1 02:03:04.5' DAY TO SECOND AS day_time,
  INTERVAL '-1 00:00:01' DAY TO SECOND AS negative_day_time,
  INTERVAL '1-2' YEAR TO MONTH AS year_month,
  INTERVAL '-3' MONTH AS negative_months,
  array(INTERVAL '2' YEAR) AS interval_list,
  named_struct('every', INTERVAL '5' MONTH, 'n', 1) AS interval_struct,
  map(INTERVAL '1' YEAR, 1) AS interval_keys,
  make_interval(0, 1, 0, 2, 0, 0, 3) AS calendar,
  map(1, 'a', 2, 'b') AS int_keys,
  map(named_struct('x', 1), 'a') AS struct_keys,
  map(DATE'2024-01-01', 1.5D) AS date_keys,
  X'CAFE' AS blob,
  CAST(1.5 AS DECIMAL(10, 2)) AS small_decimal,
  CAST('12345678901234567890.123456789012345678' AS DECIMAL(38, 18)) AS wide_decimal,
  CAST('NaN' AS DOUBLE) AS nan, CAST('Infinity' AS DOUBLE) AS inf, CAST('-Infinity' AS FLOAT) AS minus_inf,
  array(array(1, 2), array(3)) AS nested,
  named_struct('a', array(named_struct('b', X'01', 'c', CAST('NaN' AS DOUBLE)))) AS deep,
  DATE'2024-02-29' AS day, TIMESTAMP'2024-01-01 10:00:00' AS at,
  TIMESTAMP_NTZ'2024-01-01 10:00:00.123' AS local_at,
  parse_json('{"a": [1, 2.5, "x", null]}') AS variant
"""
EXPECTED = {
    "id": None,
    "day_time": "P1DT2H3M4.5S",
    "negative_day_time": "-P1DT0H0M1S",
    "year_month": "P1Y2M",
    "negative_months": "-P0Y3M",
    "interval_list": ["P2Y0M"],
    "interval_struct": {"every": "P0Y5M", "n": 1},
    "interval_keys": {"P1Y0M": 1},
    "calendar": "1 months 2 days 3 seconds",
    "int_keys": {"1": "a", "2": "b"},
    "struct_keys": {'{"x": 1}': "a"},
    "date_keys": {"2024-01-01": 1.5},
    "blob": "cafe",
    "small_decimal": 1.5,
    "wide_decimal": "12345678901234567890.123456789012345678",
    "nan": "NaN",
    "inf": "Infinity",
    "minus_inf": "-Infinity",
    "nested": [[1, 2], [3]],
    "deep": {"a": [{"b": "01", "c": "NaN"}]},
    "day": "2024-02-29",
    "at": "2024-01-01T10:00:00",
    "local_at": "2024-01-01T10:00:00.123000",
    "variant": {"a": [1, 2.5, "x", None]},
}


def test_samples_of_every_spark_type_are_strict_json(spark):
    df = spark.sql(AWKWARD)
    results = Cola().run(df, [{"type": "not_null", "columns": ["id"]}], samples=3)

    assert results[0].samples == [EXPECTED]
    summary = summarise(results)
    text = json.dumps(summary, allow_nan=False)
    assert json.loads(text)["results"][0]["samples"] == [EXPECTED]
    assert json.loads(results_text(summary)) == summary


def test_samples_keep_their_rows_and_columns_when_types_are_plain(spark):
    df = spark.createDataFrame([(1, "a"), (None, "b"), (None, "c")], "id int, name string")
    results = Cola().run(df, [{"type": "not_null", "columns": ["id"]}], samples=3)
    assert results[0].samples == [{"id": None, "name": "b"}, {"id": None, "name": "c"}]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (dt.timedelta(days=1, seconds=7384, microseconds=500000), "P1DT2H3M4.5S"),
        (-dt.timedelta(seconds=1.25), "-P0DT0H0M1.25S"),
        (dt.timedelta(microseconds=1), "P0DT0H0M0.000001S"),
        (dt.timedelta(0), "P0DT0H0M0S"),
    ],
)
def test_day_time_intervals_are_iso_durations(value, shown):
    assert iso_duration(value) == shown
    assert json_safe(value) == shown


def test_json_safe_forms():
    assert json_safe(
        {2: Decimal("2"), True: b"\x00\xff", dt.time(10, 11, 12): float("-inf"), "s": (1, float("nan"))}
    ) == {"2": 2, "true": "00ff", "10:11:12": "-Infinity", "s": [1, "NaN"]}
    assert json_safe(Decimal("0.1")) == 0.1
    assert json_safe(Decimal("0.12345678901234567890")) == "0.12345678901234567890"
    assert json_safe(object.__new__(type("Geometry", (), {"__str__": lambda self: "POINT (1 2)"}))) == "POINT (1 2)"

"""Samples stay strict JSON for every Spark type, and every value stays readable.

A real ``Cola().run(df, rules, samples=3)`` over one row of each awkward type; the summary
must go through ``json.dumps(..., allow_nan=False)`` and the results writer, and the
values must read as the documented forms (README, "Samples").
"""

from __future__ import annotations

import json

import pytest

from cola_core import Cola
from cola_core.report.results import results_text, summarise
from cola_helpers import run_all

pytestmark = [pytest.mark.spark, pytest.mark.connect]

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


# -- types that break PySpark's collect or its decoding ---------------------------------------


def _one_sample(spark, select: str, nulls: int) -> dict:
    df = spark.sql(f"SELECT CAST(NULL AS INT) AS id, {select} UNION ALL SELECT 1{', NULL' * nulls}")
    results = Cola().run(df, [{"type": "not_null", "columns": ["id"]}], samples=2)
    summary = summarise(results)
    assert json.loads(results_text(summary))["results"][0]["samples"] == results[0].samples
    (sample,) = results[0].samples
    return sample


def test_maps_whose_keys_hold_arrays_are_collected_as_entries(spark):
    # Collected as it is, a map with array keys is ``TypeError: unhashable type: 'list'``
    # inside PySpark's collect. Keys read as their JSON text, the way struct keys do.
    select = """map(array(1), 1) AS m,
      map(array(1, 2), 'a', array(3), 'b') AS wide_keys,
      map(named_struct('a', array(1), 'b', X'01'), array(INTERVAL '1' YEAR)) AS struct_keys,
      array(map(array(DATE'2024-01-01'), named_struct('v', parse_json('[1, {"x": null}]')))) AS nested"""
    assert _one_sample(spark, select, 4) == {
        "id": None,
        "m": {"[1]": 1},
        "wide_keys": {"[1, 2]": "a", "[3]": "b"},
        "struct_keys": {'{"a": [1], "b": "01"}': ["P1Y0M"]},
        "nested": [{'["2024-01-01"]': {"v": [1, {"x": None}]}}],
    }


def test_variants_are_written_by_spark_and_very_deep_ones_stay_text(spark):
    # PySpark's VariantVal.toJson recurses once per level: 500 deep is a RecursionError.
    select = """parse_json(repeat('[', 500) || repeat(']', 500)) AS deep,
      parse_json(repeat('[', 100) || '"]["' || repeat(']', 100)) AS at_the_limit,
      named_struct('v', parse_json(repeat('{"a":', 101) || '1' || repeat('}', 101))) AS deep_in_struct,
      map('k', parse_json('{"n": 1.5, "s": "x"}')) AS variant_values,
      CAST(NULL AS VARIANT) AS no_variant,
      parse_json('null') AS json_null"""
    at_the_limit: object = ["]["]
    for _ in range(99):
        at_the_limit = [at_the_limit]
    assert _one_sample(spark, select, 6) == {
        "id": None,
        "deep": "[" * 500 + "]" * 500,
        "at_the_limit": at_the_limit,
        "deep_in_struct": {"v": '{"a":' * 101 + "1" + "}" * 101},
        "variant_values": {"k": {"n": 1.5, "s": "x"}},
        "no_variant": None,
        "json_null": None,
    }


# -- internal column names never meet the user's ----------------------------------------------


@pytest.mark.parametrize("name", ["__cola_rule", "__cola_order", "__cola_rank"])
def test_a_column_named_like_an_internal_one_comes_through_untouched(spark, name):
    df = spark.createDataFrame([(1, "a"), (None, "b"), (None, "c"), (None, "d")], f"id int, `{name}` string")
    results = Cola().run(
        df, [{"type": "not_null", "columns": ["id"]}, {"type": "unique", "columns": [name]}], samples=2
    )
    assert [(r.passed, r.failed_count) for r in results] == [(False, 3), (True, 0)]
    assert results[0].samples == [{"id": None, name: "b"}, {"id": None, name: "c"}]


# -- how many samples, in one job --------------------------------------------------------------


def test_samples_collects_up_to_n_rows_per_failed_row_rule_in_one_job(order_lines, job_counter):
    rules = [
        {"type": "not_null", "columns": ["email"]},
        {"type": "unique", "columns": ["id"]},
        {"type": "range", "column": "amount", "min": 0},
        {"type": "row_count", "min": 1},
        {"type": "not_null", "columns": ["id"]},
    ]
    with job_counter.count() as plain:
        run_all(order_lines, *rules)
    with job_counter.count() as sampled:
        results = run_all(order_lines, *rules, samples=1)
    assert sampled.jobs == plain.jobs + 1
    assert [[(s["id"], s["line"]) for s in r.samples] if r.samples is not None else None for r in results] == [
        [(1, 2)], [(1, 1)], [(1, 2)], None, None,
    ]
    assert results[0].samples == [
        {"id": 1, "line": 2, "status": "live", "amount": -4.0, "email": None, "qty": "x", "starts": 5, "ends": 4,
         "dt": "2024-01-01"}
    ]
    (two,) = run_all(order_lines, {"type": "unique", "columns": ["id"]}, samples=2)
    assert [(s["id"], s["line"]) for s in two.samples] == [(1, 1), (1, 2)]


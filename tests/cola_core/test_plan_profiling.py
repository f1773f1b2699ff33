"""Cola().profile: every column's statistics in one planned scan, one job for the columns of
few values, and one per possible key; exact values on small frames, and the job counts."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cola_core import Cola
from cola_core.errors import ColaError

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def orders(spark):
    rows = [
        (1, "a@b.com", 1.5, dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 12), "x", True),
        (2, "c@d.org", float("nan"), dt.date(2024, 1, 3), dt.datetime(2024, 1, 2, 12), "y", False),
        (3, None, float("inf"), None, None, "x", None),
        (4, "bad", 3.5, dt.date(2024, 1, 2), dt.datetime(2024, 1, 3, 12), None, True),
    ]
    schema = "id long, email string, v double, d date, t timestamp, s string, b boolean"
    return spark.createDataFrame(rows, schema).selectExpr("*", "array(id) AS tags", "struct(id) AS nested")


@pytest.mark.connect
def test_a_profile_measures_every_column_in_its_own_terms(orders):
    profile = Cola().profile(orders)
    assert profile.rows == 4 and profile.sample is None and profile.distinct_error == 0.01
    columns = {c["name"]: c for c in profile.to_dict()["columns"]}
    assert list(columns) == ["id", "email", "v", "d", "t", "s", "b", "tags", "nested"]
    common = {"rows": 4, "distinct_exact": True, "minimum": None, "maximum": None, "mean": None, "stddev": None,
              "nan": None, "infinite": None, "min_length": None, "max_length": None, "formats": {}, "skipped": None,
              "top_values_cut": False}
    assert columns["id"] == {**common, "name": "id", "type": "bigint", "kind": "number", "nulls": 0, "null_percent": 0.0,
                             "distinct": 4, "minimum": 1, "maximum": 4, "mean": 2.5, "stddev": 1.2909944487358056,
                             "top_values": [["1", 1], ["2", 1], ["3", 1], ["4", 1]]}
    # NaN and infinity are values, counted apart and left out of the bounds and moments.
    assert columns["v"] == {**common, "name": "v", "type": "double", "kind": "number", "nulls": 0, "null_percent": 0.0,
                            "distinct": 4, "minimum": 1.5, "maximum": 3.5, "mean": 2.5, "stddev": 1.4142135623730951,
                            "nan": 1, "infinite": 1, "top_values": [["1.5", 1], ["3.5", 1], ["Infinity", 1], ["NaN", 1]]}
    # Formats count what an invalid_count rule with that valid_format accepts.
    assert columns["email"] == {**common, "name": "email", "type": "string", "kind": "text", "nulls": 1,
                                "null_percent": 25.0, "distinct": 3, "min_length": 3, "max_length": 7,
                                "formats": {"email": 2, "alphanumeric": 1},
                                "top_values": [["a@b.com", 1], ["bad", 1], ["c@d.org", 1]]}
    # Dates average to a date and spread in days; timestamps to a timestamp, in seconds.
    assert columns["d"] == {**common, "name": "d", "type": "date", "kind": "date", "nulls": 1, "null_percent": 25.0,
                            "distinct": 3, "minimum": "2024-01-01", "maximum": "2024-01-03", "mean": "2024-01-02",
                            "stddev": 1.0, "top_values": [["2024-01-01", 1], ["2024-01-02", 1], ["2024-01-03", 1]]}
    assert (columns["t"]["mean"], columns["t"]["stddev"]) == ("2024-01-02T12:00:00", 86400.0)
    assert columns["b"]["top_values"] == [["true", 2], ["false", 1]]
    assert columns["s"]["top_values"] == [["x", 2], ["y", 1]]
    # A collection gets counts only; a struct is listed and skipped with the reason.
    assert columns["tags"] == {**common, "name": "tags", "type": "array<bigint>", "kind": "collection", "nulls": 0,
                               "null_percent": 0.0, "distinct": None, "distinct_exact": False, "top_values": None}
    assert columns["nested"]["skipped"] == "a struct column has no statistics a rule could check; profile its fields"
    assert columns["nested"]["nulls"] is None
    json.dumps(profile.to_dict(), allow_nan=False)  # strict JSON


def test_the_profile_is_one_scan_and_one_job_for_the_columns_of_few_values(spark, orders, job_counter):
    if not hasattr(spark, "_jvm"):
        pytest.skip("job counts are read from the classic session's status tracker")
    with job_counter.count() as counted:
        Cola().profile(orders)
    assert counted.jobs == 2


def test_a_possible_key_is_counted_exactly_and_only_it(spark, job_counter):
    # 40 rows: id is a key, code repeats one value (39 distinct), x is a double (never a key).
    df = spark.createDataFrame(
        [(n, f"c{min(n, 38)}", n / 3) for n in range(40)], "id int, code string, x double"
    )
    with job_counter.count() as counted:
        profile = Cola().profile(df)
    id_, code, x = profile.columns
    assert (id_.distinct, id_.distinct_exact, id_.top_values) == (40, True, None)
    assert (code.distinct, code.distinct_exact) == (39, True)
    assert x.distinct_exact is False and x.distinct is not None and abs(x.distinct - 40) <= 2
    if hasattr(spark, "_jvm"):
        assert counted.jobs == 3  # the scan, and one exact count per possible key


@pytest.mark.connect
def test_chosen_columns_a_sample_and_an_empty_table(spark, orders):
    chosen = Cola().profile(orders, columns=["s", "id"])
    assert [c.name for c in chosen.columns] == ["s", "id"]
    # A name finds its column as a rule's does: exactly, else ignoring case.
    assert [c.name for c in Cola().profile(orders, columns=["S", "Id", "s"]).columns] == ["s", "id"]
    sampled = [Cola().profile(orders, sample=0.5).to_dict() for _ in range(2)]
    assert sampled[0] == sampled[1] and sampled[0]["sample"] == 0.5
    empty = Cola().profile(orders.where("id < 0"), columns=["id", "email"])
    assert empty.rows == 0
    assert [(c.nulls, c.null_percent, c.distinct, c.minimum, c.mean, c.top_values) for c in empty.columns] == [
        (0, 0.0, 0, None, None, ()), (0, 0.0, 0, None, None, ()),
    ]


def test_a_long_value_is_shown_cut_and_never_suggested_as_a_valid_value(spark):
    long_a, long_b = "a" * 1000, "a" * 999 + "b"  # the same first 200 characters
    df = spark.createDataFrame([(long_a,), (long_a,), (long_b,), (long_b,)], "note string")
    (note,) = Cola().profile(df).columns
    shown = "a" * 200 + "… [cut: 800 characters]"
    assert (note.top_values, note.top_values_cut, note.distinct, note.max_length) == (
        ((shown, 2), (shown, 2)), True, 2, 1000,
    )
    assert [rule["type"] for rule in Cola().suggest(df)] == ["row_count", "not_null", "invalid_percent"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"columns": ["id", "nope"]}, "no column 'nope' in the DataFrame; its columns are id, email, v, d, t, s, b, tags, nested"),
        ({"columns": "id"}, "columns must be a list of column names, got 'id'"),
        ({"sample": 0}, "sample must be a fraction of the rows above 0 and at most 1, got 0"),
        ({"sample": 1.5}, "sample must be a fraction of the rows above 0 and at most 1, got 1.5"),
        ({"sample": True}, "sample must be a fraction of the rows above 0 and at most 1, got True"),
    ],
)
def test_a_bad_argument_is_refused_before_any_spark_work(spark, orders, job_counter, kwargs, message):
    with job_counter.count() as counted, pytest.raises(ColaError) as raised:
        Cola().profile(orders, **kwargs)
    assert str(raised.value) == message
    if hasattr(spark, "_jvm"):
        assert counted.jobs == 0


def test_a_column_of_any_name_is_profiled(spark):
    # The scan is SQL text over positional names, so a name SQL text could not hold as it is
    # (a dollar sign, a backquote, a dot) is profiled like any other.
    df = spark.createDataFrame([(1, "x", 1.5), (2, None, 2.5), (2, "y", None)], "`a$b` int, `we``ird` string, `x.y` double")
    profile = Cola().profile(df)
    assert [(c.name, c.nulls, c.distinct, c.minimum, c.maximum) for c in profile.columns] == [
        ("a$b", 0, 2, 1, 2), ("we`ird", 1, 2, None, None), ("x.y", 1, 2, 1.5, 2.5),
    ]
    assert profile.column("we`ird").top_values == (("x", 1), ("y", 1))


def test_the_distinct_estimate_counts_the_empty_string_and_never_null(spark):
    # 27 rows: NULL, '', and 'v1' to 'v24' with 'v1' twice. 25 distinct present values, above
    # the columns of few values and not a key, so the count is the estimate's, not an exact
    # count; a sketch fed the text itself would skip '' (24), and a hash of NULL would add one.
    values = [None, "", *(f"v{n}" for n in range(1, 25)), "v1"]
    text = Cola().profile(spark.createDataFrame([(value,) for value in values], "s string")).column("s")
    assert (text.nulls, text.distinct, text.distinct_exact, text.top_values) == (1, 25, False, None)

"""Every rule type works on columns whose names hold a dot, a space or a backtick (issue 10).

``F.col("a.b")`` reads field ``b`` of a struct ``a``, and ``F.col("we`ird")`` is a syntax
error, so each check must resolve names through ``cola_core.common.columns.column_of``. The table
below holds one rule per registered type: a new type without a row here fails
``test_every_rule_type_is_covered``, so it cannot ship without being tried on such names.

Each DataFrame also holds a struct column ``a`` whose field ``b`` differs from the top-level
``a.b``: a rule naming ``a.b`` reads the top-level column (the exact name wins), so a check
that let Spark parse the name would read the struct and give other numbers.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from cola_core import Cola
from cola_core.common.columns import quote
from cola_helpers import run_one

pytestmark = pytest.mark.spark

NAMES = ["a.b", "first name", "we`ird", "x.`y` z"]
_views = itertools.count(1)


class Case(NamedTuple):
    """One rule over the hostile column ``n`` (ints 1, 2, 2, NULL) or ``t`` (ISO text), and
    what it must give: failed_count for row rules, metric_value for metric rules, and the
    rows ``split`` quarantines (None for aggregate rules)."""

    rule: Callable[[str, str, str], dict[str, Any]]
    failed: int | None = None
    metric: float | None = None
    passed: bool = True
    quarantined: int | None = None


def _ref(view: str) -> dict[str, Any]:
    return {"table": view}


# Per rule type: (n, t, reference view) -> rule. n holds 1, 2, 2, NULL; t holds
# '2024-01-01 00:00:00', '2024-01-02 00:00:00', 'nope', NULL.
CASES: dict[str, Case] = {
    "not_null": Case(lambda n, t, v: {"columns": [n, t]}, failed=2, passed=False, quarantined=1),
    "unique": Case(lambda n, t, v: {"columns": [n]}, failed=1, passed=False, quarantined=2),
    "range": Case(lambda n, t, v: {"column": n, "min": 2}, failed=1, passed=False, quarantined=1),
    "regex": Case(lambda n, t, v: {"column": n, "pattern": r"^2\z"}, failed=2, passed=False, quarantined=2),
    "row_count": Case(lambda n, t, v: {"must_be": "= 4"}, metric=4),
    "schema": Case(lambda n, t, v: {"required_columns": [n, t], "column_types": {n: "int", t: "string"}}, failed=0),
    "sql": Case(lambda n, t, v: {"failed_rows": f"SELECT * FROM _validation_df WHERE {quote(n)} = 1"}, failed=1, passed=False),
    "expression": Case(lambda n, t, v: {"expression": f"{quote(n)} > 1"}, failed=2, passed=False, quarantined=2),
    "castable": Case(lambda n, t, v: {"column": t, "to": "timestamp"}, failed=1, passed=False, quarantined=1),
    "values_present": Case(lambda n, t, v: {"column": n, "values": [1, 2, 3]}, failed=1, passed=False),
    "foreign_key": Case(
        lambda n, t, v: {"column": n, "reference": _ref(v), "reference_columns": [n]}, failed=2, passed=False,
        quarantined=2,
    ),
    "reconcile": Case(
        lambda n, t, v: {"aggregate": "sum", "column": n, "reference": _ref(v), "reference_column": n,
                         "difference": "absolute", "must_be": "= 2"},
        metric=2,
    ),
    # The view holds key 1 three times: n = 1 is a duplicate key, the two 2s are missing.
    "reference_match": Case(
        lambda n, t, v: {"keys": [n], "columns": [t], "reference": _ref(v), "reference_columns": [n]},
        failed=3, passed=False, metric=3, quarantined=3,
    ),
    "distinct_count": Case(lambda n, t, v: {"column": n, "must_be": "= 3"}, metric=3),
    "duplicate_count": Case(lambda n, t, v: {"columns": [n], "must_be": "= 1"}, metric=1),
    "duplicate_percent": Case(lambda n, t, v: {"column": n, "must_be": "= 25%"}, metric=25),
    "missing_count": Case(lambda n, t, v: {"column": n, "missing_values": [1], "must_be": "= 2"}, metric=2, quarantined=2),
    "missing_percent": Case(lambda n, t, v: {"column": t, "must_be": "= 25%"}, metric=25, quarantined=1),
    "invalid_count": Case(lambda n, t, v: {"column": n, "valid_values": [2], "must_be": "= 1"}, metric=1, quarantined=1),
    "invalid_percent": Case(
        lambda n, t, v: {"column": t, "valid_format": "timestamp", "must_be": "= 25%"}, metric=25, quarantined=1
    ),
    "min": Case(lambda n, t, v: {"column": n, "must_be": "= 1"}, metric=1),
    "max": Case(lambda n, t, v: {"column": n, "must_be": "= 2"}, metric=2),
    "avg": Case(lambda n, t, v: {"column": n, "must_be": "between 1.6 and 1.7"}, metric=5 / 3),
    "mean": Case(lambda n, t, v: {"column": n, "must_be": "between 1.6 and 1.7"}, metric=5 / 3),
    "sum": Case(lambda n, t, v: {"column": n, "must_be": "= 5"}, metric=5),
    "stddev": Case(lambda n, t, v: {"column": n, "must_be": "< 1"}, metric=math.sqrt(1 / 3)),
    "freshness": Case(lambda n, t, v: {"column": t, "must_be": "> 1d"}, metric=-1.0),  # metric checked by hand
    "check": Case(lambda n, t, v: {"metric": "missing_count", "column": n, "must_be": "= 1"}, metric=1, quarantined=1),
}


def test_every_rule_type_is_covered():
    assert sorted(CASES) == sorted(Cola().available)


@pytest.fixture(scope="module")
def frames(spark):
    """name -> (DataFrame with columns name, name + ' t' and a struct a, reference view)."""
    built = {}
    for name in NAMES:
        text = f"{name} t"
        df = spark.createDataFrame(
            [
                (1, "2024-01-01 00:00:00", (7,)),
                (2, "2024-01-02 00:00:00", (7,)),
                (2, "nope", (7,)),
                (None, None, (7,)),
            ],
            f"{quote(name)} int, {quote(text)} string, a struct<b: int>",
        )
        view = f"cola_names_reference_{next(_views)}"
        spark.createDataFrame([(1,), (1,), (1,)], f"{quote(name)} int").createOrReplaceTempView(view)
        built[name] = (df, text, view)
    return built


def _rule(rule_type: str, name: str, text: str, view: str) -> dict[str, Any]:
    return {"type": rule_type, **CASES[rule_type].rule(name, text, view)}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rule_type", sorted(CASES))
def test_run_reads_the_exact_top_level_column(frames, rule_type, name):
    df, text, view = frames[name]
    case = CASES[rule_type]
    result = run_one(df, _rule(rule_type, name, text, view))
    assert result.passed is case.passed, result.message
    if case.failed is not None:
        assert result.failed_count == case.failed, result.message
    if rule_type == "freshness":
        age = (dt.datetime.now(dt.timezone.utc) - dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc)).total_seconds()
        assert result.metric_value == pytest.approx(age, abs=120)
    elif case.metric is not None:
        assert result.metric_value == pytest.approx(case.metric), result.message


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rule_type", sorted(t for t, case in CASES.items() if case.quarantined is not None))
def test_split_quarantines_by_the_exact_top_level_column(frames, rule_type, name):
    df, text, view = frames[name]
    valid, invalid = Cola().split(df, [_rule(rule_type, name, text, view)], annotate="codes")
    assert invalid.count() == CASES[rule_type].quarantined
    assert valid.count() == 4 - CASES[rule_type].quarantined
    assert valid.columns == df.columns


def test_the_same_block_runs_every_type_at_once(frames):
    # One block, one scan: names must also survive the planner's aliasing and distinct sets.
    df, text, view = frames["a.b"]
    rules = [_rule(rule_type, "a.b", text, view) for rule_type in sorted(CASES)]
    results = Cola().run(df, rules)
    assert [r.passed for r in results] == [CASES[t].passed for t in sorted(CASES)]


@pytest.fixture
def nested(spark):
    return spark.createDataFrame(
        [((1, "x"),), ((2, "y"),), ((2, None),), ((None, "z"),)], "address struct<number: int, city: string>"
    )


@pytest.mark.parametrize(
    ("rule", "failed", "metric"),
    [
        ({"type": "not_null", "columns": ["address.number", "address.city"]}, 2, None),
        ({"type": "range", "column": "address.number", "min": 2}, 1, None),
        ({"type": "regex", "column": "address.city", "pattern": r"^[xy]\z"}, 2, None),
        ({"type": "unique", "columns": ["address.number"]}, 1, None),
        ({"type": "castable", "column": "address.city", "to": "int"}, 3, None),
        ({"type": "values_present", "column": "address.number", "values": [1, 3]}, 1, None),
        ({"type": "sum", "column": "address.number", "must_be": "= 5"}, 0, 5),
        ({"type": "missing_count", "column": "address.city", "must_be": "= 1"}, 0, 1),
        ({"type": "invalid_count", "column": "address.city", "valid_values": ["x"], "must_be": "= 2"}, 0, 2),
        ({"type": "distinct_count", "column": "address.number", "must_be": "= 3"}, 0, 3),
    ],
)
def test_nested_struct_fields_keep_working(nested, rule, failed, metric):
    result = run_one(nested, rule)
    assert (result.failed_count, result.metric_value) == (failed, metric), result.message


def test_a_name_differing_only_in_case_reads_the_top_level_column(spark):
    df = spark.createDataFrame([(1, (5,)), (None, (5,))], "`A.B` int, a struct<b: int>")
    assert run_one(df, {"type": "not_null", "columns": ["a.b"]}).failed_count == 1
    assert run_one(df, {"type": "sum", "column": "a.b", "must_be": "= 1"}).metric_value == 1

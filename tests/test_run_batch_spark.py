"""Parity: every rule run alone gives the same result as inside one block.

Each rule is run on its own (one rule per ``Cola().run``) and again inside a block holding
every rule, under both distinct strategies. Verdict, message, failed_count, severity,
metric_value, check_name and code must match field by field, so the single-scan planner
and a rule's own run cannot drift.

Freshness is the one rule whose value moves: it is measured against each query's own
``current_timestamp()``. The data is pinned in 2020, years away from every threshold, so
the verdict and severity cannot flip between two runs seconds apart; metric_value is
allowed to grow by the wall-clock time between the two runs (never to shrink), and the
message is compared exactly once the measured number in it is masked. Every other field
of a freshness result is compared exactly.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any

import pytest

from cola_core import BaseCheck, CheckResult, Cola
from cola_core.common.formatting import format_number
from cola_helpers import NoFutureDateCheck

pytestmark = [pytest.mark.spark, pytest.mark.connect]

UTC = dt.timezone.utc


class ShortStatusCheck(BaseCheck):
    """A custom check that only implements ``run(df)``: it keeps its own action."""

    def run(self, df):
        from pyspark.sql import functions as F

        failed = df.where(F.length(self.params["column"]) < 3).count()
        return CheckResult("short_status", failed == 0, f"{failed} short values", failed)


def make_cola(distinct_strategy: str = "separate") -> Cola:
    cola = Cola(distinct_strategy=distinct_strategy)
    cola.register("no_future_date", NoFutureDateCheck)
    cola.register("short_status", ShortStatusCheck)
    return cola


SCHEMA = (
    "id bigint, email string, cpf string, amount double, status string, age int, "
    "created_at timestamp, delivered_on date, note double, seen_at timestamp"
)


def _row(id_, email, cpf, amount, status, age, day, delivered=None):
    created = dt.datetime(2020, 1, day, 12, 0, tzinfo=UTC)
    return (id_, email, cpf, amount, status, age, created, delivered or dt.date(2020, 2, day), None, None)


ROWS = [
    _row(1, "ana@example.com", "12345678901", 10.5, "paid", 30, 1),
    _row(2, "bob@example.com", "98765432100", 250.0, "pending", 41, 2),
    _row(3, "carla@example.com", None, -3.0, "shipped", 0, 3),
    _row(3, "carla@example.com", "123", 99.99, "paid", 120, 4),
    _row(4, "not-an-email", "", None, "??", None, 5),
    _row(5, None, "11122233344", 1000.0, "cancelled", 65, 6, dt.date(2999, 1, 1)),
    _row(None, "eve@example", "55566677788", 0.0, "PAID ", 18, 7),
    _row(None, "fred@example.com", "N/A", 42.0, "paid", 99, 8),
    _row(9, "gil@example.com", "00011122233", 7.25, "shipped", 23, 9),
    _row(10, "", "99988877766", 13.0, "paid", 77, 10),
]

STATUS_REFERENCE = "SELECT * FROM VALUES ('paid'), ('pending'), ('shipped'), ('cancelled') AS t(status)"

# Order 2 is 0.01 off (within its tolerance), order 3 is held twice, 9's status differs in case.
MATCH_REFERENCE = ("SELECT * FROM VALUES (1, 10.5, 'paid'), (2, 250.01, 'pending'), (3, 0.0, 'paid'), (3, 1.0, 'x'), "
                   "(9, 7.25, 'SHIPPED') AS t(id, amount, status)")

# (label, rule). Every rule type, passing and failing, and each metric in its variants.
RULES: list[tuple[str, dict[str, Any]]] = [
    ("not_null one column", {"type": "not_null", "columns": ["id"]}),
    ("not_null two columns", {"type": "not_null", "columns": ["id", "email"], "name": "keys"}),
    ("not_null passing", {"type": "not_null", "columns": ["created_at"]}),
    ("unique one column", {"type": "unique", "columns": ["id"]}),
    ("unique two columns", {"type": "unique", "columns": ["id", "email"]}),
    ("unique passing", {"type": "unique", "columns": ["created_at"]}),
    ("range both bounds", {"type": "range", "column": "age", "min": 1, "max": 99, "code": "AGE_RANGE"}),
    ("range min only", {"type": "range", "column": "amount", "min": 0}),
    ("range dates", {"type": "range", "column": "created_at", "min": "2020-01-01", "max": "2020-12-31"}),
    ("regex", {"type": "regex", "column": "cpf", "pattern": "^[0-9]{11}$"}),
    ("regex passing", {"type": "regex", "column": "status", "pattern": "."}),
    ("row_count bounds", {"type": "row_count", "min": 1}),
    ("row_count bounds failing", {"type": "row_count", "min": 1, "max": 5}),
    ("row_count metric", {"type": "row_count", "must_be": "> 0", "warn": "> 100"}),
    ("row_count metric failing", {"type": "row_count", "must_be": "between 20 and 30"}),
    ("schema passing", {"type": "schema", "required_columns": ["id", "email"], "column_types": {"id": "long"}}),
    ("schema failing", {"type": "schema", "required_columns": ["zip"], "forbidden_columns": ["cpf"]}),
    ("sql query passing", {"type": "sql", "query": "SELECT count(*) = 10 FROM _validation_df"}),
    ("sql query failing", {"type": "sql", "query": "SELECT min(amount) >= 0 FROM _validation_df",
                           "error_message": "negative amounts"}),
    ("sql failed_rows", {"type": "sql", "failed_rows": "SELECT id, amount FROM _validation_df WHERE amount < 0"}),
    ("sql failed_rows none", {"type": "sql", "failed_rows": "SELECT * FROM _validation_df WHERE age > 500"}),
    ("sql own view", {"type": "sql", "view_name": "orders_view",
                      "query": "SELECT count(DISTINCT status) = 6 FROM orders_view"}),
    ("missing_count", {"type": "missing_count", "column": "cpf", "must_be": "= 0"}),
    ("missing_percent", {"type": "missing_percent", "column": "cpf", "must_be": "< 50%", "warn": "= 0"}),
    ("missing with missing_values", {"type": "missing_percent", "column": "cpf", "missing_values": ["", "N/A"],
                                     "must_be": "< 25%"}),
    ("missing numeric with missing_values", {"type": "missing_count", "column": "age", "missing_values": [0, "N/A"],
                                             "must_be": "<= 2"}),
    ("invalid email format", {"type": "invalid_percent", "column": "email", "valid_format": "email",
                              "must_be": "< 5%"}),
    ("invalid valid_values", {"type": "invalid_count", "column": "status",
                              "valid_values": ["paid", "pending", "shipped", "cancelled"], "must_be": "= 0"}),
    ("invalid invalid_values", {"type": "invalid_count", "column": "status", "invalid_values": ["??"],
                                "must_be": "<= 1"}),
    ("invalid min and max", {"type": "invalid_count", "column": "amount", "valid_min": 0, "valid_max": 500,
                             "must_be": "< 3", "warn": "= 0"}),
    ("invalid length with missing", {"type": "invalid_percent", "column": "cpf", "valid_length": 11,
                                     "missing_values": ["N/A"], "must_be": "< 10%"}),
    ("invalid several settings", {"type": "invalid_count", "column": "email", "valid_regex": "@",
                                  "valid_min_length": 5, "valid_max_length": 16, "missing_values": [""],
                                  "must_be": "= 0"}),
    ("distinct_count column", {"type": "distinct_count", "column": "status", "must_be": "= 6"}),
    ("distinct_count columns", {"type": "distinct_count", "columns": ["id", "email"], "must_be": "> 20"}),
    ("distinct_count whole row", {"type": "distinct_count", "must_be": "= 10"}),
    ("duplicate_count column", {"type": "duplicate_count", "column": "id", "must_be": "= 0"}),
    ("duplicate_count whole row", {"type": "duplicate_count", "must_be": "= 0"}),
    ("duplicate_percent columns", {"type": "duplicate_percent", "columns": ["status"], "must_be": "< 50%",
                                   "warn": "< 10%"}),
    ("freshness passing", {"type": "freshness", "column": "created_at", "must_be": "< 36500d"}),
    ("freshness warn", {"type": "freshness", "column": "created_at", "must_be": "< 36500d", "warn": "< 30d"}),
    ("freshness failing", {"type": "freshness", "column": "created_at", "must_be": "< 1d"}),
    ("freshness nothing measured", {"type": "freshness", "column": "seen_at", "must_be": "< 1d"}),
    ("stddev", {"type": "stddev", "column": "amount", "must_be": "< 1000"}),
    ("mean", {"type": "mean", "column": "amount", "must_be": "between 100 and 200"}),
    ("avg", {"type": "avg", "column": "amount", "must_be": "> 0", "warn": "> 500"}),
    ("min", {"type": "min", "column": "amount", "must_be": ">= 0"}),
    ("max", {"type": "max", "column": "age", "must_be": "<= 120"}),
    ("sum", {"type": "sum", "column": "amount", "must_be": "> 0"}),
    ("min nothing measured", {"type": "min", "column": "note", "must_be": ">= 0"}),
    ("legacy check wrapper", {"type": "check", "metric": "missing_percent", "column": "cpf", "must_be": "< 5%"}),
    ("legacy check duplicate", {"type": "check", "metric": "duplicate_count", "columns": ["id"], "must_be": "= 0"}),
    ("targets", {"type": "regex", "targets": [{"column": "cpf", "pattern": "^[0-9]{11}$"},
                                              {"column": "status", "pattern": "^[a-z]+$"}]}),
    ("expression", {"type": "expression", "expression": "age >= 18 OR age IS NULL"}),
    ("castable", {"type": "castable", "column": "cpf", "to": "bigint"}),
    ("values_present", {"type": "values_present", "column": "status", "values": ["paid", "refunded"]}),
    ("custom with aggregations", {"type": "no_future_date", "column": "delivered_on"}),
    ("custom with run only", {"type": "short_status", "column": "status"}),
    ("foreign_key", {"type": "foreign_key", "column": "status", "reference": {"query": STATUS_REFERENCE}}),
    ("foreign_key columns", {"type": "foreign_key", "columns": ["id", "status"], "reference_columns": ["k", "s"],
                             "reference": {"query": "SELECT * FROM VALUES (1, 'paid'), (2, 'pending') AS t(k, s)"}}),
    ("reference_match", {"type": "reference_match", "keys": ["id"], "columns": ["amount", "status"],
                         "absolute_difference": {"amount": 0.01}, "reference": {"query": MATCH_REFERENCE}}),
    ("reference_match scoped", {"type": "reference_match", "keys": ["id"], "reference_keys": ["k"],
                                "columns": ["amount"], "reference_columns": ["a"], "relative_difference": {"amount": 1},
                                "missing": "ignore", "where": "age > 20",
                                "reference": {"query": "SELECT id AS k, amount AS a FROM VALUES (1, 10.6), (2, 247.5) "
                                                       "AS t(id, amount)"}}),
    ("reconcile count", {"type": "reconcile", "aggregate": "count", "must_be": "< 1%",
                         "reference": {"query": "SELECT * FROM range(10)"}}),
    ("reconcile sum", {"type": "reconcile", "aggregate": "sum", "column": "amount", "reference_column": "total",
                       "difference": "absolute", "must_be": "< 1", "warn": "= 0",
                       "reference": {"query": "SELECT 1400 AS total"}}),
    # Rule options: a scope, a tolerance, a warn severity and a dimension, on scanned rules.
    ("where not_null", {"type": "not_null", "columns": ["cpf"], "where": "status = 'paid'"}),
    ("where unique", {"type": "unique", "columns": ["id"], "where": "amount > 0"}),
    ("where duplicate_count", {"type": "duplicate_count", "columns": ["status"], "where": "age < 60",
                               "must_be": "= 0"}),
    ("where missing_percent", {"type": "missing_percent", "column": "email", "where": "id IS NOT NULL",
                               "must_be": "= 0"}),
    ("where custom with aggregations", {"type": "no_future_date", "column": "delivered_on", "where": "id > 4"}),
    ("tolerance", {"type": "regex", "column": "cpf", "pattern": "^[0-9]{11}$", "tolerance": "< 50%"}),
    ("severity warn", {"type": "range", "column": "age", "min": 18, "severity": "warn", "dimension": "validity"}),
]

COMPARED_FIELDS = (
    "rule_type", "passed", "message", "failed_count", "severity", "metric_value", "check_name", "code", "dimension",
)


@pytest.fixture(scope="module")
def orders(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


@pytest.fixture(scope="module")
def alone(orders) -> dict[str, tuple[float, list[CheckResult]]]:
    """Each rule through its own ``Cola().run``: label -> (start time, its results)."""
    cola = make_cola()
    runs = {}
    for label, rule in RULES:
        started = time.time()
        runs[label] = (started, cola.run(orders, [rule]))
    return runs


@pytest.fixture(scope="module", params=["separate", "inline"])
def block(request, orders) -> tuple[float, dict[str, list[CheckResult]]]:
    """Every rule in one block: (end time, label -> its results), cut by the alone counts."""
    results = make_cola(request.param).run(orders, [rule for _, rule in RULES])
    finished = time.time()
    assert len(results) == len(RULES) + 1  # the targets rule expands into two
    by_label, at = {}, 0
    for label, rule in RULES:
        width = len(rule.get("targets", [None]))
        by_label[label] = results[at : at + width]
        at += width
    return finished, by_label


@pytest.mark.parametrize("label", [label for label, _ in RULES])
def test_rule_alone_equals_rule_in_block(label, alone, block):
    started, expected = alone[label]
    finished, actual = block
    assert len(actual[label]) == len(expected)
    for want, got in zip(expected, actual[label], strict=True):
        for name in COMPARED_FIELDS:
            want_value, got_value = getattr(want, name), getattr(got, name)
            if want.rule_type == "freshness" and want.metric_value is not None:
                if name == "metric_value":
                    # Measured later, the block sees an older newest value, by at most the time between.
                    assert 0 <= got_value - want_value <= finished - started + 1, label
                    continue
                if name == "message":
                    want_value = want_value.replace(format_number(want.metric_value), "<age>")
                    got_value = got_value.replace(format_number(got.metric_value), "<age>")
            if name == "code" and got.rule_id != want.rule_id:
                # A rule measuring what an earlier rule of the block measures has its rule id
                # and its default code told apart, each with a "#n" (README: Codes).
                assert re.fullmatch(r"#\d+", got.rule_id.removeprefix(want.rule_id)), label
                assert re.fullmatch(r"#\d+", got_value.removeprefix(want_value)), f"{label}: {name} differs"
                continue
            assert got_value == want_value, f"{label}: {name} differs"


def test_sql_failed_rows_are_the_same_rows(alone, block):
    _, expected = alone["sql failed_rows"]
    _, actual = block
    want = sorted(tuple(r) for r in expected[0].failed_rows.collect())
    got = sorted(tuple(r) for r in actual["sql failed_rows"][0].failed_rows.collect())
    assert got == want == [(3, -3.0)]


def test_the_block_covers_every_registered_type_and_outcome(alone):
    """Guards the parity test itself: a new rule type, or a lost outcome, fails here."""
    covered = {rule["type"] for _, rule in RULES}
    assert covered == set(make_cola().available)
    severities = {result.severity for _, results in alone.values() for result in results}
    assert severities == {"pass", "warn", "fail"}


def test_a_few_results_exactly(alone):
    """Spot values, so that parity cannot hold by both paths being equally wrong."""

    def only(label: str) -> CheckResult:
        (result,) = alone[label][1]
        return result

    assert only("unique one column").failed_count == 2  # 3 twice, and NULL twice (NULL equals NULL)
    assert only("duplicate_count column").metric_value == 2
    assert only("distinct_count whole row").metric_value == 10
    assert only("distinct_count columns").metric_value == 9
    assert only("not_null two columns").failed_count == 3
    assert only("missing with missing_values").metric_value == 30
    assert only("custom with aggregations").failed_count == 1
    assert only("custom with aggregations").code == "no_future_date(delivered_on)"
    assert only("custom with run only").failed_count == 1
    assert only("foreign_key").failed_count == 2  # '??' and 'PAID '
    # 3 twice (a duplicate reference key), 4, 5 and 10 missing, 9's status; the NULL ids name nothing.
    assert only("reference_match").message == (
        "reference_match(amount,status): 6 rows do not match the reference (status: 1, missing: 3, "
        "duplicate_key: 2; 3 compared); 2 rows have keys the reference holds more than once, so nothing says "
        "which reference row to compare with"
    )
    # 10.5 is within 1% of 10.6 (0.106), 250.0 is 1.0101% off 247.5; 3, 5, 9 and 10 are ignored.
    assert only("reference_match scoped").message == (
        "reference_match(amount): 1 row does not match the reference (amount: 1; 2 compared); "
        "4 rows not in the reference, ignored"
    )
    assert only("where duplicate_count").metric_value == 1  # 'shipped' twice among ages under 60
    assert only("where unique").failed_count == 0  # the two ids 3 differ in sign of amount
    assert only("freshness warn").severity == "warn"
    assert only("freshness failing").severity == "fail"

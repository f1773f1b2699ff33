"""``BaseCheck`` (``checks/base.py``): how a check applies the rule's options (``where``,
``severity``, ``tolerance``, ``dimension``), what each check states it can do, and that a
check is built once and never changes."""

from __future__ import annotations

import pytest

from cola_core import CheckResult, Cola, ColaRuleError

from cola_helpers import codes_of, run_all


# -- where: the rule sees only the rows in its scope ------------------------------------------


@pytest.mark.spark
def test_where_scopes_counts_percentages_and_statistics(order_lines):
    live = "status = 'live'"
    results = run_all(
        order_lines,
        {"type": "not_null", "columns": ["email"], "where": live},
        {"type": "missing_percent", "column": "email", "must_be": "< 50%", "where": live},
        {"type": "row_count", "min": 4, "where": live},
        {"type": "avg", "column": "amount", "must_be": "> 0", "where": live},
        {"type": "unique", "columns": ["id", "line"], "where": "status = 'deleted'"},
        {"type": "duplicate_count", "columns": ["id", "line"], "must_be": "= 0", "where": live},
    )
    assert [(r.severity, r.failed_count, r.metric_value, r.message) for r in results] == [
        ("fail", 1, None, "not_null(email): 1 NULL value (email: 1)"),
        ("pass", 0, 100 / 3, "missing_percent(email) = 33.3333 meets must_be (< 50%)"),
        ("fail", 1, None, "row_count = 3 is below min 4"),
        ("pass", 0, 56 / 3, "avg(amount) = 18.6667 meets must_be (> 0)"),
        ("fail", 1, None, "unique(id,line): 1 duplicate row (2 rows, 1 distinct)"),
        ("pass", 0, 0, "duplicate_count(id,line) = 0 meets must_be (= 0)"),
    ]


@pytest.mark.spark
def test_rows_outside_the_scope_are_never_quarantined_by_that_rule(order_lines):
    valid, invalid = Cola().split(
        order_lines,
        [
            {"type": "not_null", "columns": ["email"], "where": "status = 'live'"},
            {"type": "unique", "columns": ["id", "line"], "where": "status = 'deleted'"},
            {"type": "range", "column": "amount", "min": 0, "where": "id > 1"},
        ],
        annotate="dq",
    )
    assert codes_of(invalid) == [(1, 2, ("not_null(email)",)), (2, 1, ("unique(id,line)",)), (2, 1, ("unique(id,line)",))]
    assert sorted((r.id, r.line) for r in valid.collect()) == [(1, 1), (3, 1)]


@pytest.mark.spark
def test_a_scoped_block_is_still_one_scan(order_lines, job_counter):
    rules = [
        {"type": "not_null", "columns": ["email"], "where": "status = 'live'"},
        {"type": "avg", "column": "amount", "must_be": "> 0", "where": "status = 'live'"},
        {"type": "missing_count", "column": "email", "must_be": "= 0", "where": "amount > 0"},
        {"type": "row_count", "min": 1},
        {"type": "expression", "expression": "ends > starts", "where": "status = 'live'"},
        {"type": "castable", "column": "qty", "to": "int"},
        {"type": "values_present", "column": "dt", "values": ["2024-01-01"], "where": "id = 1"},
    ]
    with job_counter.count() as counted:
        run_all(order_lines, *rules)
    assert counted.jobs == 1


@pytest.mark.spark
def test_a_condition_spark_cannot_evaluate_is_a_rule_error_before_any_job(order_lines, job_counter):
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as raised:
        run_all(order_lines, {"type": "row_count"}, {"type": "not_null", "columns": ["id"], "where": "statuz = 'live'"})
    assert counted.jobs == 0
    assert str(raised.value).startswith(
        "rules[1] (not_null): Spark cannot evaluate \"statuz = 'live'\" on this DataFrame: [UNRESOLVED_COLUMN"
    )



# -- severity, tolerance, dimension: finish() -------------------------------------------------


@pytest.mark.spark
def test_a_warn_rule_that_fails_is_a_warn_and_keeps_its_count(order_lines):
    (result,) = run_all(order_lines, {"type": "range", "column": "amount", "min": 0, "severity": "warn", "name": "amounts"})
    assert result == CheckResult(
        "range", True, "range(amount,0,): 1 value out of range (>= 0)", 1, None, "warn", "amounts", code="range(amount,0,)"
    )
    assert str(result) == "[WARN] amounts: range(amount,0,): 1 value out of range (>= 0)"
    (metric,) = run_all(order_lines, {"type": "missing_count", "column": "email", "must_be": "= 0", "severity": "warn"})
    assert (metric.severity, metric.passed, metric.metric_value) == ("warn", True, 2)


@pytest.mark.spark
def test_tolerance_passes_a_row_rule_under_its_share_and_still_quarantines(order_lines):
    within, beyond = run_all(
        order_lines,
        {"type": "not_null", "columns": ["email"], "tolerance": "< 50%"},
        {"type": "not_null", "columns": ["email"], "tolerance": "< 10%"},
    )
    assert (within.severity, within.failed_count, within.message) == (
        "pass", 2, "not_null(email): 2 NULL values (email: 2); 40% of rows, within tolerance (< 50%)"
    )
    assert (beyond.severity, beyond.message) == (
        "fail", "not_null(email): 2 NULL values (email: 2); 40% of rows, beyond tolerance (< 10%)"
    )
    _, invalid = Cola().split(order_lines, [{"type": "not_null", "columns": ["email"], "tolerance": "< 50%"}])
    assert invalid.count() == 2


@pytest.mark.spark
def test_tolerance_is_a_share_of_the_rows_in_scope(order_lines):
    (result,) = run_all(order_lines, {"type": "not_null", "columns": ["email"], "tolerance": "<= 50%", "where": "id < 3"})
    assert result.message == "not_null(email): 2 NULL values (email: 2); 50% of rows, within tolerance (<= 50%)"


@pytest.mark.spark
def test_dimension_is_carried_into_the_result(order_lines):
    (result,) = run_all(order_lines, {"type": "not_null", "columns": ["id"], "dimension": "Completeness"})
    assert (result.dimension, result.to_dict()["dimension"]) == ("Completeness", "Completeness")


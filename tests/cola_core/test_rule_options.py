"""Options every rule may carry (where, severity, tolerance, dimension), the quarantine key,
samples, and the expression / castable / values_present rules."""

from __future__ import annotations

import datetime as dt

import pytest

from cola_core import CheckResult, Cola, ColaRuleError

pytestmark = pytest.mark.spark

ORDERS_SCHEMA = "id int, line int, status string, amount double, email string, qty string, starts int, ends int, dt date"


@pytest.fixture(scope="module")
def orders(spark):
    rows = [
        (1, 1, "live", 10.0, "a@x.io", "3", 1, 2, dt.date(2024, 1, 1)),
        (1, 2, "live", -4.0, None, "x", 5, 4, dt.date(2024, 1, 1)),
        (2, 1, "deleted", None, None, "7", 1, None, dt.date(2024, 1, 2)),
        (2, 1, "deleted", 30.0, "c@x.io", None, 2, 3, dt.date(2024, 1, 2)),
        (3, 1, "live", 50.0, "d@x.io", "4.5", 3, 9, dt.date(2024, 1, 4)),
    ]
    return spark.createDataFrame(rows, ORDERS_SCHEMA)


def run(df, *rules, **options):
    return Cola().run(df, list(rules), **options)


def codes(df, column="dq", key="id"):
    return sorted((row[key], row["line"], tuple(row[column])) for row in df.collect())


# -- where ---------------------------------------------------------------------------------


def test_where_scopes_counts_percentages_and_statistics(orders):
    live = "status = 'live'"
    results = run(
        orders,
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


def test_rows_outside_the_scope_are_never_quarantined_by_that_rule(orders):
    valid, invalid = Cola().split(
        orders,
        [
            {"type": "not_null", "columns": ["email"], "where": "status = 'live'"},
            {"type": "unique", "columns": ["id", "line"], "where": "status = 'deleted'"},
            {"type": "range", "column": "amount", "min": 0, "where": "id > 1"},
        ],
        annotate="dq",
    )
    assert codes(invalid) == [(1, 2, ("not_null(email)",)), (2, 1, ("unique(id,line)",)), (2, 1, ("unique(id,line)",))]
    assert sorted((r.id, r.line) for r in valid.collect()) == [(1, 1), (3, 1)]


def test_a_scoped_block_is_still_one_scan(orders, job_counter):
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
        run(orders, *rules)
    assert counted.jobs == 1


def test_a_condition_spark_cannot_evaluate_is_a_rule_error_before_any_job(orders, job_counter):
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as raised:
        run(orders, {"type": "row_count"}, {"type": "not_null", "columns": ["id"], "where": "statuz = 'live'"})
    assert counted.jobs == 0
    assert str(raised.value).startswith(
        "rules[1] (not_null): Spark cannot evaluate \"statuz = 'live'\" on this DataFrame: [UNRESOLVED_COLUMN"
    )


# -- severity, tolerance, dimension ---------------------------------------------------------


def test_a_warn_rule_that_fails_is_a_warn_and_keeps_its_count(orders):
    (result,) = run(orders, {"type": "range", "column": "amount", "min": 0, "severity": "warn", "name": "amounts"})
    assert result == CheckResult(
        "range", True, "range(amount,0,): 1 value out of range (>= 0)", 1, None, "warn", "amounts", code="range(amount,0,)"
    )
    assert str(result) == "[WARN] amounts: range(amount,0,): 1 value out of range (>= 0)"
    (metric,) = run(orders, {"type": "missing_count", "column": "email", "must_be": "= 0", "severity": "warn"})
    assert (metric.severity, metric.passed, metric.metric_value) == ("warn", True, 2)


def test_warn_rules_never_quarantine_and_their_codes_go_to_a_warnings_column(orders):
    rules = [
        {"type": "not_null", "columns": ["email"]},
        {"type": "range", "column": "amount", "min": 0, "severity": "warn"},
        {"type": "castable", "column": "qty", "to": "int", "severity": "warn"},
    ]
    valid, invalid = Cola().split(orders, rules, annotate="dq")
    assert invalid.columns[-2:] == ["dq", "dq_warnings"]
    assert valid.columns[-1] == "dq_warnings"
    assert sorted((r.id, r.line, tuple(r.dq), tuple(r.dq_warnings)) for r in invalid.collect()) == [
        (1, 2, ("not_null(email)",), ("range(amount,0,)", "castable(qty,int)")),
        (2, 1, ("not_null(email)",), ()),
    ]
    assert sorted((r.id, r.line, tuple(r.dq_warnings)) for r in valid.collect()) == [
        (1, 1, ()), (2, 1, ()), (3, 1, ("castable(qty,int)",)),
    ]
    plain_valid, _ = Cola().split(orders, [{"type": "not_null", "columns": ["email"]}], annotate="dq")
    assert plain_valid.schema == orders.schema


def test_tolerance_passes_a_row_rule_under_its_share_and_still_quarantines(orders):
    within, beyond = run(
        orders,
        {"type": "not_null", "columns": ["email"], "tolerance": "< 50%"},
        {"type": "not_null", "columns": ["email"], "tolerance": "< 10%"},
    )
    assert (within.severity, within.failed_count, within.message) == (
        "pass", 2, "not_null(email): 2 NULL values (email: 2); 40% of rows, within tolerance (< 50%)"
    )
    assert (beyond.severity, beyond.message) == (
        "fail", "not_null(email): 2 NULL values (email: 2); 40% of rows, beyond tolerance (< 10%)"
    )
    _, invalid = Cola().split(orders, [{"type": "not_null", "columns": ["email"], "tolerance": "< 50%"}])
    assert invalid.count() == 2


def test_tolerance_is_a_share_of_the_rows_in_scope(orders):
    (result,) = run(orders, {"type": "not_null", "columns": ["email"], "tolerance": "<= 50%", "where": "id < 3"})
    assert result.message == "not_null(email): 2 NULL values (email: 2); 50% of rows, within tolerance (<= 50%)"


def test_dimension_is_carried_into_the_result(orders):
    (result,) = run(orders, {"type": "not_null", "columns": ["id"], "dimension": "Completeness"})
    assert (result.dimension, result.to_dict()["dimension"]) == ("Completeness", "Completeness")


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"type": "not_null", "columns": ["id"], "severity": "critical"},
         "rules[0] (not_null): 'severity' must be 'fail' or 'warn', got 'critical' "
         "(a 'warn' rule is reported but never fails the block nor quarantines a row)"),
        ({"type": "schema", "required_columns": ["id"], "where": "id > 0"},
         "rules[0] (schema): 'where' does not apply to a schema rule; it reads no rows"),
        ({"type": "sql", "query": "SELECT true", "where": "id > 0"},
         "rules[0] (sql): 'where' does not apply to a sql rule; put the condition in the query's own WHERE"),
        ({"type": "not_null", "columns": ["id"], "where": "id > 0; DROP TABLE t"},
         "rules[0] (not_null): 'where' must be one SQL expression such as \"amount > 0\", but holds a ';'"),
        ({"type": "missing_count", "column": "id", "must_be": "0", "tolerance": "< 1%"},
         "rules[0] (missing_count): 'tolerance' applies to row rules that count offending rows (not_null, unique, "
         "range, regex, expression, castable, foreign_key); a metric rule sets its limit with 'must_be'"),
        ({"type": "not_null", "columns": ["id"], "tolerance": "< 1d"},
         "rules[0] (not_null): 'tolerance' (< 1d) is a share of rows, such as '< 1%', not a duration"),
        ({"type": "not_null", "columns": ["id"], "tolerance": "lots"},
         "rules[0] (not_null): 'tolerance' is not a valid threshold: unexpected 'l'; a threshold looks like "
         "'< 5%', '>= 10', 'between 1 and 2' or '< 1d'\n    lots\n    ^"),
        ({"type": "not_null", "columns": ["id"], "dimension": ""},
         "rules[0] (not_null): 'dimension' must be a non-empty string, got ''"),
        ({"type": "castable", "column": "qty", "to": "varchar"},
         "rules[0] (castable): 'to' is 'varchar'; it must be one of boolean, tinyint, smallint, int, bigint, float, "
         "double, decimal(p,s), date, timestamp"),
        ({"type": "expression", "expression": "a > b", "null_is_valid": "yes"},
         "rules[0] (expression): 'null_is_valid' must be true or false, got 'yes'"),
        ({"type": "values_present", "column": "dt", "values": []},
         "rules[0] (values_present): 'values' must be a non-empty list of values, got []"),
    ],
)
def test_malformed_options_and_new_rules_are_refused(rule, message):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    assert str(raised.value) == message


# -- quarantine key and samples ------------------------------------------------------------


def test_quarantine_key_pulls_in_every_row_of_a_rejected_order(orders):
    valid, invalid = Cola().split(
        orders, [{"type": "range", "column": "amount", "min": 0}], annotate="dq", quarantine_key=["id"]
    )
    assert codes(invalid) == [(1, 1, ("quarantine_key(id)",)), (1, 2, ("range(amount,0,)",))]
    assert sorted((r.id, r.line) for r in valid.collect()) == [(2, 1), (2, 1), (3, 1)]


def test_quarantine_key_ignores_keys_with_a_null(spark):
    df = spark.createDataFrame([(None, -1), (None, 5), (7, 5)], "id int, amount int")
    valid, invalid = Cola().split(df, [{"type": "range", "column": "amount", "min": 0}], quarantine_key=["id"])
    assert sorted((r.id, r.amount) for r in invalid.collect()) == [(None, -1)]
    assert valid.count() == 2


def test_samples_collects_up_to_n_rows_per_failed_row_rule_in_one_job(orders, job_counter):
    rules = [
        {"type": "not_null", "columns": ["email"]},
        {"type": "unique", "columns": ["id"]},
        {"type": "range", "column": "amount", "min": 0},
        {"type": "row_count", "min": 1},
        {"type": "not_null", "columns": ["id"]},
    ]
    with job_counter.count() as plain:
        run(orders, *rules)
    with job_counter.count() as sampled:
        results = run(orders, *rules, samples=1)
    assert sampled.jobs == plain.jobs + 1
    assert [[(s["id"], s["line"]) for s in r.samples] if r.samples is not None else None for r in results] == [
        [(1, 2)], [(1, 1)], [(1, 2)], None, None,
    ]
    assert results[0].samples == [
        {"id": 1, "line": 2, "status": "live", "amount": -4.0, "email": None, "qty": "x", "starts": 5, "ends": 4,
         "dt": "2024-01-01"}
    ]
    (two,) = run(orders, {"type": "unique", "columns": ["id"]}, samples=2)
    assert [(s["id"], s["line"]) for s in two.samples] == [(1, 1), (1, 2)]


# -- expression, castable, values_present --------------------------------------------------


def test_expression_rule(orders):
    strict, lenient = run(
        orders,
        {"type": "expression", "expression": "ends > starts"},
        {"type": "expression", "expression": "ends > starts", "null_is_valid": True},
    )
    assert (strict.failed_count, strict.message) == (
        2, "expression(ends > starts): 2 rows do not meet the expression (NULL counts as not met)"
    )
    assert (lenient.failed_count, lenient.message, lenient.code) == (
        1, "expression(ends > starts): 1 row does not meet the expression", "expression(ends > starts)"
    )
    _, invalid = Cola().split(orders, [{"type": "expression", "expression": "ends > starts"}], annotate="dq")
    assert codes(invalid) == [(1, 2, ("expression(ends > starts)",)), (2, 1, ("expression(ends > starts)",))]


def test_castable_rule(orders):
    as_int, as_decimal, as_date = run(
        orders,
        {"type": "castable", "column": "qty", "to": "int"},
        {"type": "castable", "column": "qty", "to": "decimal(5,1)"},
        {"type": "castable", "column": "qty", "to": "date"},
    )
    assert (as_int.failed_count, as_int.message) == (2, "castable(qty,int): 2 values cannot be cast to int")
    assert (as_decimal.failed_count, as_decimal.code) == (1, "castable(qty,decimal(5,1))")
    assert as_date.failed_count == 4  # NULL is not a value to cast, so it never fails


def test_values_present_rule(orders):
    complete, missing = run(
        orders,
        {"type": "values_present", "column": "dt", "values": ["2024-01-01", "2024-01-02"]},
        {"type": "values_present", "column": "dt", "values": ["2024-01-01", "2024-01-03", dt.date(2024, 1, 5)]},
    )
    assert (complete.passed, complete.message) == (True, "values_present(dt): all 2 values present")
    assert (missing.passed, missing.failed_count, missing.message) == (
        False, 2, "values_present(dt): 2 of 3 values missing: 2024-01-03, 2024-01-05"
    )

"""``schema`` (a data contract read from the schema alone) and ``sql`` (both modes)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cola_core import CheckResult

from cola_helpers import refused, run_one

pytestmark = pytest.mark.spark


# -- schema ------------------------------------------------------------------------------


@pytest.fixture
def orders(spark):
    return spark.createDataFrame(
        [(1, Decimal("9.90"), "a", 2, True, dt.datetime(2024, 1, 1), [1], 1.5)],
        "id bigint, amount decimal(10,2), name string, qty int, paid boolean, at timestamp, "
        "tags array<bigint>, ratio double",
    )


def test_schema_types_match_through_aliases_and_any_decimal_precision(orders):
    rule = {
        "type": "schema",
        "required_columns": ["id", "amount"],
        "forbidden_columns": ["_debug"],
        "column_types": {
            "id": "long",
            "amount": "decimal(38,18)",
            "name": "str",
            "qty": "Integer",
            "paid": "bool",
            "at": "TIMESTAMP",
            "tags": "array<long>",
            "ratio": "double",
        },
    }
    result = run_one(orders, rule)
    assert result == CheckResult("schema", True, "schema: matches (8 columns)", 0, code="schema")
    assert str(result) == "[PASS] check: schema: matches (8 columns)"


@pytest.mark.parametrize("expected", ["decimal", "DECIMAL(10,2)", "decimal(5, 0)", "numeric(12,4)"])
def test_schema_decimal_matches_on_the_base_type(orders, expected):
    assert run_one(orders, {"type": "schema", "column_types": {"amount": expected}}).passed is True


def test_schema_lists_every_problem_in_one_message_and_counts_each(spark):
    df = spark.createDataFrame([(1, "x", "d")], "id int, amount string, _debug string")
    rule = {
        "type": "schema",
        "required_columns": ["id", "customer_id", "created_at"],
        "forbidden_columns": ["_debug", "_tmp"],
        "column_types": {"id": "bigint", "amount": "double", "created_at": "timestamp", "country": "string"},
    }
    assert run_one(df, rule) == CheckResult(
        "schema",
        False,
        "schema: missing required column(s): customer_id, created_at; forbidden column(s) present: _debug; "
        "column id is int, expected bigint; column amount is string, expected double; "
        "column country (expected string) does not exist",
        6,  # two missing, one forbidden, two wrong types, one typed column absent
        code="schema",
    )


def test_schema_column_names_match_case_insensitively_like_spark(spark):
    df = spark.createDataFrame([(1, "d")], "ID int, _Debug string")
    rule = {"type": "schema", "required_columns": ["id"], "forbidden_columns": ["_debug"], "column_types": {"Id": "int"}}
    assert run_one(df, rule) == CheckResult(
        "schema", False, "schema: forbidden column(s) present: _debug", 1, code="schema"
    )


def test_schema_holds_on_an_empty_dataframe_and_a_named_rule(spark):
    df = spark.createDataFrame([], "id bigint")
    result = run_one(df, {"type": "schema", "column_types": {"id": "int"}, "name": "contract"})
    assert result == CheckResult(
        "schema", False, "schema: column id is bigint, expected int", 1, check_name="contract", code="schema"
    )
    assert str(result) == "[FAIL] contract: schema: column id is bigint, expected int"


def test_schema_starts_no_spark_job(orders, job_counter):
    with job_counter.count() as jobs:
        result = run_one(orders, {"type": "schema", "required_columns": ["nope"]})
    assert result.failed_count == 1
    assert jobs.jobs == 0


def test_schema_needs_at_least_one_setting():
    assert refused({"type": "schema"}) == (
        "rules[0] (schema): needs at least one of 'required_columns', 'forbidden_columns' or 'column_types', "
        'e.g. {"type": "schema", "required_columns": ["id"]}'
    )


# -- sql: query mode ---------------------------------------------------------------------


@pytest.fixture
def amounts(spark):
    return spark.createDataFrame([(1, 5.0), (2, -1.0), (3, -2.0)], "id int, amount double")


def test_sql_query_passes_when_the_invariant_is_true(amounts):
    rule = {"type": "sql", "query": "SELECT COUNT(*) = 3 FROM _validation_df"}
    result = run_one(amounts, rule)
    assert result == CheckResult("sql", True, "sql: invariant holds", 0, code="sql")
    assert result.failed_rows is None


def test_sql_query_fails_with_the_error_message(amounts):
    rule = {
        "type": "sql",
        "query": "SELECT COUNT(*) = 0 FROM _validation_df WHERE amount < 0",
        "error_message": "Negative amounts found",
        "name": "no negatives",
    }
    result = run_one(amounts, rule)
    assert result == CheckResult(
        "sql", False, "Negative amounts found", 1, check_name="no negatives", code="sql"
    )
    assert str(result) == "[FAIL] no negatives: Negative amounts found"


def test_sql_query_default_error_message_and_a_null_answer(amounts):
    rule = {"type": "sql", "query": "SELECT MAX(amount) > 100 FROM _validation_df WHERE id > 99"}  # NULL
    assert run_one(amounts, rule) == CheckResult(
        "sql", False, "SQL validation failed (the query returned NULL)", 1, code="sql"
    )


@pytest.mark.parametrize(
    ("query", "got"),
    [
        ("SELECT COUNT(*) FROM _validation_df", "Row(count(1)=3)"),
        ("SELECT true, false", "Row(true=True, false=False)"),
        ("SELECT true FROM _validation_df WHERE id = 99", "no rows"),
        ("SELECT amount > 0 FROM _validation_df WHERE id < 3", "more than one row"),
    ],
)
def test_sql_query_that_is_not_one_boolean_fails(amounts, query, got):
    assert run_one(amounts, {"type": "sql", "query": query}) == CheckResult(
        "sql", False, f"sql: the query must return one boolean value, got {got}", 1, code="sql"
    )


def test_sql_query_with_more_than_two_rows_does_not_misreport_their_number(amounts):
    result = run_one(amounts, {"type": "sql", "query": "SELECT amount > 0 FROM _validation_df"})
    assert result.message == "sql: the query must return one boolean value, got more than one row"


def test_sql_query_on_an_empty_dataframe(spark):
    empty = spark.createDataFrame([], "amount double")
    rule = {"type": "sql", "query": "SELECT COUNT(*) = 0 FROM _validation_df WHERE amount < 0"}
    assert run_one(empty, rule).passed is True


def test_sql_view_name(amounts):
    rule = {"type": "sql", "query": "SELECT MIN(id) = 1 FROM orders_today", "view_name": "orders_today"}
    assert run_one(amounts, rule) == CheckResult("sql", True, "sql: invariant holds", 0, code="sql")


# -- sql: failed_rows mode ---------------------------------------------------------------


def test_sql_failed_rows_carries_the_offending_rows(amounts):
    rule = {
        "type": "sql",
        "failed_rows": "SELECT * FROM _validation_df WHERE amount < 0",
        "error_message": "Negative amounts found",
    }
    result = run_one(amounts, rule)
    assert result == CheckResult("sql", False, "Negative amounts found (2 failed rows)", 2, code="sql")
    assert sorted(tuple(row) for row in result.failed_rows.collect()) == [(2, -1.0), (3, -2.0)]
    assert result.failed_rows.columns == ["id", "amount"]
    assert "failed_rows" not in result.to_dict()
    assert CheckResult.from_dict(result.to_dict()) == result


def test_sql_failed_rows_passes_with_an_empty_frame_of_rows(amounts):
    rule = {"type": "sql", "failed_rows": "SELECT * FROM scoped WHERE amount > 100", "view_name": "scoped"}
    result = run_one(amounts, rule)
    assert result == CheckResult("sql", True, "sql: no failed rows", 0, code="sql")
    assert result.failed_rows.count() == 0


def test_sql_failed_rows_default_error_message(amounts):
    result = run_one(amounts, {"type": "sql", "failed_rows": "SELECT id FROM _validation_df WHERE id > 2"})
    assert result.message == "SQL validation failed (1 failed rows)"
    assert [tuple(r) for r in result.failed_rows.collect()] == [(3,)]


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        (
            {"type": "sql", "query": "SELECT true", "failed_rows": "SELECT 1"},
            "uses both 'query' and 'failed_rows'; give exactly one: 'query' returns one boolean (true = pass), "
            "'failed_rows' returns the offending rows",
        ),
        (
            {"type": "sql", "error_message": "x"},
            "needs 'query' or 'failed_rows'; give exactly one: 'query' returns one boolean (true = pass), "
            "'failed_rows' returns the offending rows",
        ),
        (
            {"type": "sql", "query": "DROP TABLE orders"},
            "'query' must be a read-only SELECT or WITH query, but starts with 'DROP'; "
            "Spark would run it as soon as it is parsed",
        ),
        (
            {"type": "sql", "query": "SELECT true", "view_name": "my view"},
            "'view_name' 'my view' must be a plain identifier such as '_validation_df'",
        ),
    ],
)
def test_sql_malformed_rules(rule, reason):
    assert refused(rule) == f"rules[0] (sql): {reason}"

"""``schema`` (``checks/schema.py``): a data contract read from the schema alone."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cola_core import CheckResult, Cola
from cola_core.errors import ColaRuleError
from cola_helpers import refused, run_one

pytestmark = [pytest.mark.spark, pytest.mark.connect]


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
        "rules[0] (schema): needs at least one of 'required_columns', 'forbidden_columns', 'column_types' or "
        "'logical_types', "
        'e.g. {"type": "schema", "required_columns": ["id"]}'
    )



def test_logical_types_match_every_spark_type_of_their_kind(orders):
    # ODCS's logical types: integer is any whole-number type, number any numeric one.
    kinds = {"id": "integer", "qty": "integer", "amount": "number", "ratio": "number", "name": "string",
             "paid": "boolean", "at": "timestamp", "tags": "array"}
    assert run_one(orders, {"type": "schema", "logical_types": kinds}) == CheckResult(
        "schema", True, "schema: matches (8 columns)", code="schema"
    )
    wrong = {"amount": "integer", "name": "number", "tags": "object", "ID": "integer"}
    assert run_one(orders, {"type": "schema", "logical_types": wrong}) == CheckResult(
        "schema",
        False,
        "schema: column amount is decimal(10,2), not of logical type integer; column name is string, not of logical "
        "type number; column tags is array<bigint>, not of logical type object",
        3,
        code="schema",
    )


def test_a_column_given_a_logical_type_must_exist_and_the_type_must_be_known(orders):
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(orders, [{"type": "schema", "logical_types": {"customer_id": "integer"}}])
    assert str(raised.value) == (
        "rules[0] (schema): column 'customer_id' does not exist; the DataFrame has id, amount, name, qty, paid, at, "
        "tags, ratio"
    )
    assert refused({"type": "schema", "logical_types": {"id": "int"}}) == (
        "rules[0] (schema): 'logical_types' gives 'id' the type 'int'; a logical type is one of string, integer, "
        "number, boolean, date, timestamp, time, array, object"
    )

"""``sql`` (``checks/sql.py``), both modes: ``query`` (one boolean) and ``failed_rows``."""

from __future__ import annotations

import pytest

from cola_core import CheckResult, Cola, ColaRuleError
from cola_helpers import refused, run_one

pytestmark = [pytest.mark.spark, pytest.mark.connect]


# -- query mode ------------------------------------------------------------------------------


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



# -- failed_rows mode ------------------------------------------------------------------------


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



# -- a sql rule's output is validated at parse time ------------------------------------------


def test_a_sql_rule_output_is_validated_before_spark():
    rule = {"type": "sql", "failed_rows": "SELECT * FROM _validation_df", "output": {"path": "/x", "mode": "merge"}}
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    assert str(raised.value) == (
        "rules[0] (sql): 'output' is not a valid output config: "
        "output 'mode' must be one of append, overwrite, error, errorifexists, ignore, got 'merge'"
    )


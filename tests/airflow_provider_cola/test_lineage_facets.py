"""The quality facets of ``_lineage_facets``, built from real results summaries.

Each facet is held to the schema of the facet class ``openlineage-python`` ships
(``cola_facets``).
"""

from __future__ import annotations

import pytest

from cola_facets import ASSERTIONS_URL, METRICS_URL, as_json, run_block, validate, without_producer
from cola_testenv import ORDERS

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

DAY3 = ORDERS / "2024-01-03"

DAY3_RULES = [
    {"type": "row_count", "min": 1},
    {"type": "not_null", "columns": ["order_id", "email"], "name": "keys present"},
    {"type": "not_null", "columns": ["order_id"], "tolerance": "< 50%"},
    {"type": "unique", "columns": ["order_id"], "severity": "warn"},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT", "dimension": "Validity"},
    {"type": "missing_count", "column": "email", "must_be": "= 0"},
    {"type": "distinct_count", "column": "country", "must_be": "> 3", "warn": "> 10"},
    {"type": "min", "column": "amount", "must_be": ">= 0"},
    {"type": "max", "column": "amount", "must_be": "<= 1000"},
    {"type": "sum", "column": "amount", "must_be": "> 0", "where": "amount > 0"},
    {"type": "duplicate_count", "column": "order_id", "must_be": "= 0"},
    {"type": "sql", "failed_rows": "SELECT * FROM _validation_df WHERE amount < 0"},
]


@pytest.fixture(scope="module")
def day3(session):
    """The summary and the checks of DAY3_RULES over the third sample day."""
    return run_block(session, session.read.json(str(DAY3)), DAY3_RULES)


def test_assertions_of_a_real_run(day3):
    from airflow_provider_cola._lineage_facets import assertions_facet

    summary, checks = day3
    built = assertions_facet(summary, checks)
    facet = as_json(built)

    validate(facet, type(built))
    ids = [result["rule_id"] for result in summary["results"]]
    assert without_producer(facet) == {"_schemaURL": ASSERTIONS_URL, "assertions": [
        {"assertion": "row_count", "success": True, "severity": "error", "name": ids[0], "expected": ">= 1",
         "actual": "6", "params": {"rule_type": "row_count", "rule_id": ids[0]}},
        # Several columns: the assertion names none, its params list them.
        {"assertion": "not_null(order_id,email)", "success": False, "severity": "error", "name": "keys present",
         "expected": "0", "actual": "1",
         "params": {"rule_type": "not_null", "rule_id": ids[1], "columns": ["order_id", "email"]}},
        # Passed by its tolerance (a share of rows, so no expected count): no issue that counts.
        {"assertion": "not_null(order_id)", "success": True, "column": "order_id", "severity": "error",
         "name": ids[2], "actual": "1", "params": {"rule_type": "not_null", "rule_id": ids[2], "tolerance": "< 50%"}},
        # A warn passed (Cola lets it); its severity says it found something.
        {"assertion": "unique(order_id)", "success": True, "column": "order_id", "severity": "warn", "name": ids[3],
         "expected": "0", "actual": "1", "params": {"rule_type": "unique", "rule_id": ids[3]}},
        {"assertion": "NEGATIVE_AMOUNT", "success": False, "column": "amount", "severity": "error", "name": ids[4],
         "expected": "0", "actual": "1", "params": {"rule_type": "range", "rule_id": ids[4], "dimension": "Validity"}},
        {"assertion": "missing_count(email)", "success": True, "column": "email", "severity": "error",
         "name": ids[5], "expected": "= 0", "actual": "0", "params": {"rule_type": "missing_count", "rule_id": ids[5]}},
        # In the warn band of a metric: passed in Cola's terms, an issue in the facet's.
        {"assertion": "distinct_count(country)", "success": True, "column": "country", "severity": "warn",
         "name": ids[6], "expected": "> 3", "actual": "5",
         "params": {"rule_type": "distinct_count", "rule_id": ids[6], "warn": "> 10"}},
        {"assertion": "min(amount)", "success": False, "column": "amount", "severity": "error", "name": ids[7],
         "expected": ">= 0", "actual": "-15", "params": {"rule_type": "min", "rule_id": ids[7]}},
        {"assertion": "max(amount)", "success": True, "column": "amount", "severity": "error", "name": ids[8],
         "expected": "<= 1000", "actual": "300", "params": {"rule_type": "max", "rule_id": ids[8]}},
        {"assertion": "sum(amount)", "success": True, "column": "amount", "severity": "error", "name": ids[9],
         "expected": "> 0", "actual": "435.5", "params": {"rule_type": "sum", "rule_id": ids[9], "where": "amount > 0"}},
        {"assertion": "duplicate_count(order_id)", "success": False, "column": "order_id", "severity": "error",
         "name": ids[10], "expected": "= 0", "actual": "1", "params": {"rule_type": "duplicate_count", "rule_id": ids[10]}},
        {"assertion": "sql", "success": False, "severity": "error", "name": ids[11],
         "content": "SELECT * FROM _validation_df WHERE amount < 0", "contentType": "sql",
         "params": {"rule_type": "sql", "rule_id": ids[11]}},
    ]}


def test_metrics_of_a_real_run(day3):
    from airflow_provider_cola._lineage_facets import metrics_facet

    summary, checks = day3
    built = metrics_facet(summary, checks)
    facet = as_json(built)

    validate(facet, type(built))
    # order_id: 1 NULL, and 5 distinct keys counting the NULL, so 4 distinct values. country:
    # its NULLs were not counted, so its distinct count (which counts a NULL) is not given.
    # The sum was measured under a where: not a measure of the dataset.
    assert without_producer(facet) == {"_schemaURL": METRICS_URL, "rowCount": 6, "columnMetrics": {
        "order_id": {"nullCount": 1, "distinctCount": 4},
        "email": {"nullCount": 0},
        "amount": {"min": -15.0, "max": 300.0},
    }}


def test_metrics_per_column_of_several_columns_and_what_is_not_measured(session):
    from airflow_provider_cola._lineage_facets import metrics_facet

    df = session.createDataFrame(
        [(None, None, None, "x"), (1, 2, None, "x"), (None, 3, None, None), (4, 5, None, "y")],
        "a int, b int, c double, d string",
    )
    rules = [
        # 3 NULLs (a: 2, b: 1), then the tolerance's words after the counts.
        {"type": "not_null", "columns": ["a", "b"], "tolerance": "< 90%"},
        {"type": "distinct_count", "column": "d", "must_be": "> 0"},
        {"type": "missing_count", "column": "d", "must_be": "< 5"},
        {"type": "unique", "columns": ["b"]},
        {"type": "sum", "column": "b", "must_be": "> 0"},
        # An all-NULL column: nothing measured, so no min.
        {"type": "min", "column": "c", "must_be": "> 0"},
        # missing_values counts more than NULLs.
        {"type": "missing_count", "column": "a", "must_be": "< 5", "missing_values": [4]},
    ]
    summary, checks = run_block(session, df, rules)
    assert summary["results"][0]["message"] == (
        "not_null(a,b): 3 NULL values (a: 2, b: 1); 75% of rows, within tolerance (< 90%)"
    )
    built = metrics_facet(summary, checks)
    facet = as_json(built)

    validate(facet, type(built))
    assert without_producer(facet) == {"_schemaURL": METRICS_URL, "rowCount": 4, "columnMetrics": {
        "a": {"nullCount": 2},
        "b": {"nullCount": 1, "distinctCount": 3, "sum": 10.0},
        "d": {"nullCount": 1, "distinctCount": 2},
    }}


def test_the_nulls_per_column_are_read_from_the_details_never_from_the_message():
    from airflow_provider_cola._lineage_facets import metrics_facet
    from cola_core.checks import NotNullCheck

    check = NotNullCheck({"columns": ["a", "b"]}, rule_type="not_null")
    base = {"rule_type": "not_null", "passed": False, "failed_count": 3, "metric_value": None, "severity": "fail",
            "code": "not_null(a,b)", "rows_checked": 4}
    # The counts as data, whatever the message says (a custom wording, a cut message).
    told = {**base, "message": "3 NULLs", "details": {"columns": {"a": 2, "b": 1}}}
    facet = as_json(metrics_facet({"results": [told]}, [check]))
    assert facet["columnMetrics"] == {"a": {"nullCount": 2}, "b": {"nullCount": 1}}
    # The counts only in the message: not read, so not claimed.
    untold = {**base, "message": "not_null(a,b): 3 NULL values (a: 2, b: 1)"}
    # Counts that do not add up to failed_count, or name other columns: not claimed either.
    wrong = {**base, "message": "m", "details": {"columns": {"a": 1, "b": 1}}}
    other = {**base, "message": "m", "details": {"columns": {"a": 2, "c": 1}}}
    for result in (untold, wrong, other):
        assert as_json(metrics_facet({"results": [result]}, [check]))["columnMetrics"] == {}


def test_a_summary_without_its_rules_gives_what_the_results_say(day3):
    from airflow_provider_cola._lineage_facets import assertions_facet, metrics_facet

    full, checks = day3
    summary = {**full, "results": full["results"][:4]}
    # The checks of another block do not pair with these results: they are not used.
    other = checks[4:8]
    for unpaired in (None, other):
        facet = as_json(assertions_facet(summary, unpaired))
        ids = [result["rule_id"] for result in summary["results"]]
        assert facet["assertions"] == [
            # A passing result of an unknown rule: its severity is not known either.
            {"assertion": "row_count", "success": True, "name": ids[0], "params": {"rule_type": "row_count", "rule_id": ids[0]}},
            {"assertion": "not_null(order_id,email)", "success": False, "severity": "error", "name": "keys present",
             "params": {"rule_type": "not_null", "rule_id": ids[1]}},
            {"assertion": "not_null(order_id)", "success": True, "name": ids[2],
             "params": {"rule_type": "not_null", "rule_id": ids[2]}},
            {"assertion": "unique(order_id)", "success": True, "severity": "warn", "name": ids[3],
             "params": {"rule_type": "unique", "rule_id": ids[3]}},
        ]
        # Without the rules, where each number was measured is not known: nothing is claimed.
        assert metrics_facet(summary, unpaired) is None


def test_what_a_custom_rule_measured_is_what_the_rule_says_of_itself():
    from airflow_provider_cola._lineage_facets import assertions_facet, metrics_facet
    from cola_core.checks import BaseCheck, Capability

    class CountsNulls(BaseCheck):
        """Counts the NULLs of its column, and says so."""

        capabilities = frozenset({Capability.SELF_RUNNING})

        def column_measures(self, result):
            return {self.params["column"]: {"null_count": int(result["metric_value"]), "max": 9.5, "other": 1}}

        def sql_text(self):
            return f"SELECT count(*) FROM t WHERE {self.params['column']} IS NULL"

        def expectation(self):
            return f"<= {self.params['most']}", "metric_value"

    check = CountsNulls({"column": "email", "most": 3}, rule_type="null_tally")
    result = {"rule_type": "null_tally", "passed": True, "failed_count": 0, "metric_value": 2, "severity": "pass",
              "code": "null_tally(email)", "rows_checked": 4, "message": "2 NULLs"}
    facet = as_json(metrics_facet({"results": [result]}, [check]))
    # Only the measures the facet knows; a rule's type name says nothing of what it measures.
    assert facet["columnMetrics"] == {"email": {"nullCount": 2, "max": 9.5}}
    (assertion,) = as_json(assertions_facet({"results": [result]}, [check]))["assertions"]
    assert (assertion["column"], assertion["content"], assertion["contentType"]) == (
        "email", "SELECT count(*) FROM t WHERE email IS NULL", "sql",
    )
    # What it demanded and found, as it says (no ladder of rule types outside checks/).
    assert (assertion["expected"], assertion["actual"]) == ("<= 3", "2")

"""The exact XCom summaries the example data must produce (SPEC section 5's dict)."""

from __future__ import annotations

import re
from typing import Any

from cola_core import Cola
from cola_core.language.files import read_rules_file
from cola_helpers import cost_taken
from cola_testenv import EXAMPLES

# Rules that read no rows of the scan: their results have no rows_checked.
_UNSCANNED = ("sql", "schema")


def costs_apart(xcom: dict[str, Any]) -> tuple[dict[str, Any], dict[str, tuple]]:
    """A DAG run's XCom ``return_value`` per task, each Cola summary without its ``cost``; and
    per Cola task, that cost's ``(jobs, stages, rows_read, bytes_read)``
    (``cola_helpers.cost_taken``: a summary without a cost fails here). The summaries can then
    be compared whole with the expected ones below, and the costs exactly on their own."""
    values, costs = {}, {}
    for task_id, value in xcom.items():
        if isinstance(value, dict) and {"severity", "results"} <= set(value):
            value, costs[task_id] = cost_taken(value)
        values[task_id] = value
    return values, costs


def priced(cost: tuple, shown: str, prefix: str = "Spark cost: ") -> str:
    """What a run of ``cost`` (``(jobs, stages, rows_read, bytes_read)``) shows: ``prefix`` and
    ``SparkCost.describe()``, with ``shown``'s seconds (the one thing a rerun changes) when
    ``shown`` has the same start, and ``?`` seconds otherwise, so that the comparison fails."""
    from cola_core.plan.cost import SparkCost

    start = prefix + SparkCost(0.0, *cost).describe().removesuffix("0.0 s")
    seconds = shown[len(start):] if shown.startswith(start) and re.fullmatch(r"\d+\.\d s", shown[len(start):]) else "?"
    return start + seconds


def ids_of(rules: Any) -> list[str]:
    """The rule_id of each rule of a block (a rules file, or rule dicts), in order."""
    block = read_rules_file(str(rules)) if not isinstance(rules, list) else rules
    # Trusted only to be parsed here: an id does not depend on what the SQL may reach.
    return [check.rule_id for check in Cola(allow_external_access=True).parse(block)]


def identified(results: list[dict[str, Any]], ids: list[str], rows: int | None) -> list[dict[str, Any]]:
    """``results`` with each one's rule_id, and the rows the scan saw for the scanned rules."""
    assert len(ids) == len(results)
    return [
        {**item, "rule_id": rule_id, **({} if rows is None or item["rule_type"] in _UNSCANNED else {"rows_checked": rows})}
        for item, rule_id in zip(results, ids, strict=True)
    ]


def result(
    rule_type: str,
    severity: str,
    message: str,
    code: str,
    *,
    failed_count: int = 0,
    metric_value: float | None = None,
    check_name: str | None = None,
    thresholds: dict[str, str] | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "rule_type": rule_type,
        "passed": severity != "fail",
        "message": message,
        "failed_count": failed_count,
        "metric_value": metric_value,
        "severity": severity,
        "check_name": check_name,
        "code": code,
        **({} if thresholds is None else {"thresholds": thresholds}),
        **({} if details is None else {"details": details}),
    }


def summary(
    *results: dict[str, Any], ids: list[str] | None = None, rows: int | None = None, **split_counts: int
) -> dict[str, Any]:
    """The XCom of ``results``; with ``ids``, each result gets its rule_id (and ``rows``
    checked, for the rules measured in the scan)."""
    listed = identified(list(results), ids, rows) if ids is not None else list(results)
    counts = {severity: sum(r["severity"] == severity for r in results) for severity in ("pass", "warn", "fail")}
    worst = "fail" if counts["fail"] else "warn" if counts["warn"] else "pass"
    return {"severity": worst, "passed": not counts["fail"], "counts": counts, "results": listed, **split_counts}


ORDERS_IDS = ids_of(EXAMPLES / "rules" / "orders.yaml")
# The rules of the split example (dags_examples/cola_split_quarantine.py, and its copy in the
# decorator's test DAG), and of the decorator example (dags_examples/cola_decorator.py).
SPLIT_IDS = ids_of([
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
    {"type": "regex", "column": "country", "pattern": "^[A-Z]{2}$", "code": "BAD_COUNTRY"},
])
DECORATOR_IDS = ids_of([
    {"type": "not_null", "columns": ["order_id", "email"], "name": "keys present"},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "avg", "column": "amount", "must_be": "between 10 and 500"},
])


# dags_examples/rules/orders.yaml over the three sample days.
ORDERS_PASS_SUMMARY = summary(
    result("row_count", "pass", "row_count = 6 is within bounds (min 1)", "row_count",
           thresholds={"min": "1"}),
    result("not_null", "pass", "not_null(order_id): no NULL values", "not_null(order_id)"),
    result("unique", "pass", "unique(order_id): all 6 rows are unique", "unique(order_id)"),
    result("range", "pass", "range(amount,0,): all values in range (>= 0)", "NEGATIVE_AMOUNT"),
    result("missing_percent", "pass", "missing_percent(email) = 0 meets must_be (< 20%)", "missing_percent(email)",
           metric_value=0.0, thresholds={"must_be": "< 20%", "warn": "= 0"}),
    ids=ORDERS_IDS, rows=6,
)
ORDERS_WARN_SUMMARY = summary(
    result("row_count", "pass", "row_count = 8 is within bounds (min 1)", "row_count",
           thresholds={"min": "1"}),
    result("not_null", "pass", "not_null(order_id): no NULL values", "not_null(order_id)"),
    result("unique", "pass", "unique(order_id): all 8 rows are unique", "unique(order_id)"),
    result("range", "pass", "range(amount,0,): all values in range (>= 0)", "NEGATIVE_AMOUNT"),
    result("missing_percent", "warn", "missing_percent(email) = 12.5 violates warn (= 0)", "missing_percent(email)",
           metric_value=12.5, thresholds={"must_be": "< 20%", "warn": "= 0"}),
    ids=ORDERS_IDS, rows=8,
)
ORDERS_FAIL_SUMMARY = summary(
    result("row_count", "pass", "row_count = 6 is within bounds (min 1)", "row_count",
           thresholds={"min": "1"}),
    result("not_null", "fail", "not_null(order_id): 1 NULL value (order_id: 1)", "not_null(order_id)",
           failed_count=1),
    result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
           failed_count=1),
    result("range", "fail", "range(amount,0,): 1 value out of range (>= 0)", "NEGATIVE_AMOUNT", failed_count=1),
    result("missing_percent", "pass", "missing_percent(email) = 0 meets must_be (< 20%)", "missing_percent(email)",
           metric_value=0.0, thresholds={"must_be": "< 20%", "warn": "= 0"}),
    ids=ORDERS_IDS, rows=6,
)
ORDERS_FAILED_CHECKS = (
    "3 of 5 Cola checks failed:\n"
    "  [FAIL] not_null(order_id): 1 NULL value (order_id: 1)\n"
    "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)\n"
    "  [FAIL] range(amount,0,): 1 value out of range (>= 0)"
)

# The split example's XCom on 2024-01-03 (test_example_dags, and over Spark Connect).
SPLIT_FAIL_SUMMARY = summary(
    result("not_null", "fail", "not_null(order_id): 1 NULL value (order_id: 1)", "not_null(order_id)",
           failed_count=1),
    result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
           failed_count=1),
    result("range", "fail", "range(amount,0,): 1 value out of range (>= 0)", "NEGATIVE_AMOUNT", failed_count=1),
    result("regex", "fail", "regex(country,^[A-Z]{2}$): 1 value does not match (NULL counts as not matching)",
           "BAD_COUNTRY", failed_count=1),
    ids=SPLIT_IDS, rows=6,
    valid_count=1,
    invalid_count=5,
)

# ColaProfileOperator's XCom for the orders of 2024-01-03 (a duplicate order 3003 and a NULL
# order_id), the same through spark-submit (test_profiling.py) and over Spark Connect
# (test_connect.py): Profile.to_dict(), columns in the order the JSON reader gives them.
_NO_NUMBERS = {"minimum": None, "maximum": None, "mean": None, "stddev": None, "nan": None, "infinite": None}
_NO_TEXT = {"min_length": None, "max_length": None, "formats": {}}
ORDERS_PROFILE: dict[str, Any] = {"rows": 6, "sample": None, "distinct_error": 0.01, "columns": [
    {"name": "amount", "type": "double", "kind": "number", "rows": 6, "nulls": 0, "null_percent": 0.0, "distinct": 5,
     "distinct_exact": True, "minimum": -15.0, "maximum": 300.0, "mean": 70.08333333333333,
     "stddev": 115.02452637010363, "nan": 0, "infinite": 0, **_NO_TEXT,
     "top_values": [["48.0", 2], ["-15.0", 1], ["17.5", 1], ["22.0", 1], ["300.0", 1]], "top_values_cut": False,
     "skipped": None},
    {"name": "country", "type": "string", "kind": "text", "rows": 6, "nulls": 0, "null_percent": 0.0, "distinct": 5,
     "distinct_exact": True, **_NO_NUMBERS, "min_length": 2, "max_length": 2, "formats": {"alphanumeric": 6},
     "top_values": [["FI", 2], ["CA", 1], ["EG", 1], ["KE", 1], ["in", 1]], "top_values_cut": False, "skipped": None},
    {"name": "email", "type": "string", "kind": "text", "rows": 6, "nulls": 0, "null_percent": 0.0, "distinct": 5,
     "distinct_exact": True, **_NO_NUMBERS, "min_length": 15, "max_length": 16, "formats": {"email": 6},
     "top_values": [["pia@example.com", 2], ["nia@example.com", 1], ["omar@example.com", 1], ["quin@example.com", 1],
                    ["raj@example.com", 1]],
     "top_values_cut": False, "skipped": None},
    {"name": "order_id", "type": "bigint", "kind": "number", "rows": 6, "nulls": 1,
     "null_percent": 16.666666666666668, "distinct": 4, "distinct_exact": True, "minimum": 3001, "maximum": 3005,
     "mean": 3002.8, "stddev": 1.4832396974191326, "nan": None, "infinite": None, **_NO_TEXT,
     "top_values": [["3003", 2], ["3001", 1], ["3002", 1], ["3005", 1]], "top_values_cut": False, "skipped": None},
]}
# The profile's table, as `cola profile` prints it, one line each.
ORDERS_PROFILE_TABLE = [
    "Profile of 6 rows",
    "column    type    nulls       distinct  min   max   mean     top values / formats",
    "amount    double  0 (0%)      5         -15   300   70.0833  48.0: 2, -15.0: 1, 17.5: 1, 22.0: 1, 300.0: 1",
    "country   string  0 (0%)      5                              FI: 2, CA: 1, EG: 1, KE: 1, in: 1",
    "email     string  0 (0%)      5                              pia@example.com: 2, nia@example.com: 1, "
    "omar@example.com: 1, quin@example.com: 1, raj@example.com: 1",
    "order_id  bigint  1 (16.67%)  4         3001  3005  3002.8   3003: 2, 3001: 1, 3002: 1, 3005: 1",
]
# The rules suggested from that profile, with no history (the row count with its margin: a tenth, rounded outwards).
ORDERS_SUGGESTIONS: list[dict[str, Any]] = [
    {"type": "row_count", "must_be": "between 5 and 7", "name": "6 rows when profiled"},
    {"type": "not_null", "columns": ["amount"], "name": "0 NULLs in 6 rows"},
    {"type": "range", "column": "amount", "min": -15.0, "max": 300.0, "name": "values from -15 to 300 when profiled"},
    {"type": "not_null", "columns": ["country"], "name": "0 NULLs in 6 rows"},
    {"type": "invalid_percent", "column": "country", "valid_format": "alphanumeric", "must_be": "<= 0",
     "name": "100% of present values are alphanumeric"},
    {"type": "not_null", "columns": ["email"], "name": "0 NULLs in 6 rows"},
    {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 0",
     "name": "100% of present values are email"},
    {"type": "range", "column": "order_id", "min": 3001, "max": 3005, "name": "values from 3001 to 3005 when profiled"},
]

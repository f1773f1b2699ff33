"""The exact XCom summaries the example data must produce (SPEC section 5's dict)."""

from __future__ import annotations

from typing import Any


def result(
    rule_type: str,
    severity: str,
    message: str,
    code: str,
    *,
    failed_count: int = 0,
    metric_value: float | None = None,
    check_name: str | None = None,
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
    }


def summary(*results: dict[str, Any], **split_counts: int) -> dict[str, Any]:
    counts = {severity: sum(r["severity"] == severity for r in results) for severity in ("pass", "warn", "fail")}
    worst = "fail" if counts["fail"] else "warn" if counts["warn"] else "pass"
    return {"severity": worst, "passed": not counts["fail"], "counts": counts, "results": list(results), **split_counts}


# dags_examples/rules/orders.yaml over the three sample days.
ORDERS_PASS_SUMMARY = summary(
    result("row_count", "pass", "row_count = 6 is within bounds (min 1)", "row_count"),
    result("not_null", "pass", "not_null(order_id): no NULL values", "not_null(order_id)"),
    result("unique", "pass", "unique(order_id): all 6 rows are unique", "unique(order_id)"),
    result("range", "pass", "range(amount,0,): all values in range (>= 0)", "NEGATIVE_AMOUNT"),
    result("missing_percent", "pass", "missing_percent(email) = 0 meets must_be (< 20%)", "missing_percent(email)",
           metric_value=0.0),
)
ORDERS_WARN_SUMMARY = summary(
    result("row_count", "pass", "row_count = 8 is within bounds (min 1)", "row_count"),
    result("not_null", "pass", "not_null(order_id): no NULL values", "not_null(order_id)"),
    result("unique", "pass", "unique(order_id): all 8 rows are unique", "unique(order_id)"),
    result("range", "pass", "range(amount,0,): all values in range (>= 0)", "NEGATIVE_AMOUNT"),
    result("missing_percent", "warn", "missing_percent(email) = 12.5 violates warn (= 0)", "missing_percent(email)",
           metric_value=12.5),
)
ORDERS_FAIL_SUMMARY = summary(
    result("row_count", "pass", "row_count = 6 is within bounds (min 1)", "row_count"),
    result("not_null", "fail", "not_null(order_id): 1 NULL value (order_id: 1)", "not_null(order_id)",
           failed_count=1),
    result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
           failed_count=1),
    result("range", "fail", "range(amount,0,): 1 value out of range (>= 0)", "NEGATIVE_AMOUNT", failed_count=1),
    result("missing_percent", "pass", "missing_percent(email) = 0 meets must_be (< 20%)", "missing_percent(email)",
           metric_value=0.0),
)
ORDERS_FAILED_CHECKS = (
    "3 of 5 Cola checks failed:\n"
    "  [FAIL] not_null(order_id): 1 NULL value (order_id: 1)\n"
    "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)\n"
    "  [FAIL] range(amount,0,): 1 value out of range (>= 0)"
)

"""The 15-rule block the benchmark times, as a user would write it.

Pure data: importing this module needs no Spark, so tests can reuse the block.
"""

from __future__ import annotations

from typing import Any

from benchmarks.generate import STATUSES

__all__ = ["BLOCK", "CPF_PATTERN", "DISTINCT_RULE_TYPES", "non_distinct_rules"]

CPF_PATTERN = "^[0-9]{11}$"
# Rules that need a distinct count over a column set; every other rule is a plain aggregate.
DISTINCT_RULE_TYPES = ("unique", "distinct_count", "duplicate_count", "duplicate_percent")

BLOCK: list[dict[str, Any]] = [
    # The metric form, so the result carries the row count itself (the bounds form only says pass/fail).
    {"type": "row_count", "must_be": "> 0"},
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "not_null", "columns": ["customer_id"]},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0},
    {"type": "regex", "column": "cpf", "pattern": CPF_PATTERN},
    {"type": "missing_percent", "column": "cpf", "must_be": "< 10%", "warn": "< 1%"},
    {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "< 5%"},
    {"type": "invalid_count", "column": "status", "valid_values": list(STATUSES), "must_be": "= 0"},
    {"type": "avg", "column": "amount", "must_be": "between 0 and 1000"},
    {"type": "min", "column": "amount", "must_be": ">= 0"},
    {"type": "max", "column": "amount", "must_be": "<= 10000"},
    {"type": "stddev", "column": "amount", "must_be": "< 1000"},
    {"type": "duplicate_count", "column": "order_id", "must_be": "= 0"},
    {"type": "freshness", "column": "created_at", "must_be": "< 3650d"},
]


def non_distinct_rules() -> list[dict[str, Any]]:
    """The 13 rules of the block that are plain aggregates."""
    return [rule for rule in BLOCK if rule["type"] not in DISTINCT_RULE_TYPES]

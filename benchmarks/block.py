"""The rule blocks the benchmark times, as a user would write them: ``BLOCK`` (15 rules) and
``BLOCK_80`` (80 rules, every built-in rule type that shares the scan, some scoped with
``where``, one with a ``tolerance``, a few ``warn``).

Pure data: importing this module needs no Spark, so tests can reuse the blocks.
"""

from __future__ import annotations

from typing import Any

from benchmarks.generate import STATUSES

__all__ = ["BLOCK", "BLOCKS", "BLOCK_80", "CPF_PATTERN", "DISTINCT_RULE_TYPES", "EMAIL_PATTERN", "non_distinct_rules"]

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


# The 80-rule block: what a team writes for one table once it has a rule for every column and
# a few business scopes. Every rule type that joins the shared scan appears (plus one schema
# rule, which starts no job); 13 rules are scoped by ``where``, 7 are expressions. Three
# distinct column sets (order_id, customer_id, status), shared by the five distinct rules.
# benchmarks/hand80.py measures the same 80 numbers by hand.
EMAIL_PATTERN = "^[a-z0-9.]+@example\\.com$"
BLOCK_80: list[dict[str, Any]] = [
    # 1-3: the table
    {"type": "row_count", "must_be": "> 0"},
    {"type": "row_count", "min": 1},
    {"type": "schema", "required_columns": ["order_id", "customer_id", "amount"],
     "column_types": {"order_id": "bigint", "amount": "double", "created_at": "timestamp"}},
    # 4-14: not_null
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "not_null", "columns": ["customer_id"]},
    {"type": "not_null", "columns": ["email"]},
    {"type": "not_null", "columns": ["cpf"]},
    {"type": "not_null", "columns": ["amount"]},
    {"type": "not_null", "columns": ["status"]},
    {"type": "not_null", "columns": ["created_at"]},
    {"type": "not_null", "columns": ["email", "cpf"]},
    {"type": "not_null", "columns": ["customer_id"], "where": "status = 'paid'"},
    {"type": "not_null", "columns": ["customer_id"], "tolerance": "< 5%", "name": "customer mostly known"},
    {"type": "not_null", "columns": ["cpf"], "where": "amount > 100", "severity": "warn"},
    # 15-19: distinct counts over three column sets
    {"type": "unique", "columns": ["order_id"]},
    {"type": "duplicate_count", "column": "order_id", "must_be": "= 0"},
    {"type": "duplicate_percent", "column": "customer_id", "must_be": "< 99%"},
    {"type": "distinct_count", "column": "status", "must_be": "between 1 and 10"},
    {"type": "unique", "columns": ["customer_id"], "severity": "warn"},
    # 20-27: range
    {"type": "range", "column": "amount", "min": 0},
    {"type": "range", "column": "amount", "max": 10000},
    {"type": "range", "column": "amount", "min": -1000, "max": 1000},
    {"type": "range", "column": "customer_id", "min": 0, "max": 99999},
    {"type": "range", "column": "order_id", "min": 0},
    {"type": "range", "column": "created_at", "min": "2023-01-01", "max": "2025-01-01"},
    {"type": "range", "column": "amount", "min": 0, "where": "status = 'shipped'"},
    {"type": "range", "column": "customer_id", "min": 1, "where": "amount > 0"},
    # 28-31: regex
    {"type": "regex", "column": "cpf", "pattern": CPF_PATTERN},
    {"type": "regex", "column": "email", "pattern": "@"},
    {"type": "regex", "column": "status", "pattern": "^[a-z]+$"},
    {"type": "regex", "column": "email", "pattern": "^user[0-9]+", "where": "status <> 'cancelled'"},
    # 32-37: missing_*
    {"type": "missing_count", "column": "customer_id", "must_be": "= 0"},
    {"type": "missing_percent", "column": "email", "must_be": "< 5%"},
    {"type": "missing_count", "column": "status", "missing_values": ["", "??"], "must_be": "= 0"},
    {"type": "missing_percent", "column": "cpf", "missing_values": ["00000000000"], "must_be": "< 10%", "warn": "< 1%"},
    {"type": "missing_percent", "column": "customer_id", "must_be": "< 5%", "where": "status = 'pending'"},
    {"type": "missing_count", "column": "created_at", "must_be": "= 0"},
    # 38-47: invalid_*
    {"type": "invalid_count", "column": "status", "valid_values": list(STATUSES), "must_be": "= 0"},
    {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "< 5%"},
    {"type": "invalid_count", "column": "cpf", "valid_format": "cpf", "must_be": "= 0"},
    {"type": "invalid_count", "column": "cpf", "valid_length": 11, "must_be": "= 0"},
    {"type": "invalid_count", "column": "amount", "valid_min": 0, "valid_max": 1000, "must_be": "< 100"},
    {"type": "invalid_percent", "column": "email", "valid_max_length": 30, "must_be": "< 1%"},
    {"type": "invalid_count", "column": "status", "invalid_values": ["??", "", "PAID "], "must_be": "= 0"},
    {"type": "invalid_count", "column": "email", "valid_regex": EMAIL_PATTERN, "must_be": "= 0"},
    {"type": "invalid_percent", "column": "status", "valid_values": list(STATUSES), "must_be": "< 1%",
     "where": "amount >= 0"},
    {"type": "invalid_count", "column": "customer_id", "valid_min": 0, "valid_max": 99999, "must_be": "= 0"},
    # 48-62: column statistics
    {"type": "avg", "column": "amount", "must_be": "between 0 and 1000"},
    {"type": "min", "column": "amount", "must_be": ">= 0"},
    {"type": "max", "column": "amount", "must_be": "<= 10000"},
    {"type": "sum", "column": "amount", "must_be": "> 0"},
    {"type": "stddev", "column": "amount", "must_be": "< 1000"},
    {"type": "mean", "column": "amount", "must_be": "> 0", "where": "status = 'paid'"},
    {"type": "min", "column": "customer_id", "must_be": ">= 0"},
    {"type": "max", "column": "customer_id", "must_be": "< 100000"},
    {"type": "avg", "column": "customer_id", "must_be": "> 0"},
    {"type": "sum", "column": "customer_id", "must_be": "> 0"},
    {"type": "min", "column": "order_id", "must_be": ">= 0"},
    {"type": "max", "column": "order_id", "must_be": "> 0"},
    {"type": "stddev", "column": "customer_id", "must_be": "> 0"},
    {"type": "max", "column": "amount", "must_be": "<= 1000", "where": "status = 'cancelled'"},
    {"type": "avg", "column": "amount", "must_be": "> 0", "where": "customer_id IS NULL"},
    # 63-64: freshness
    {"type": "freshness", "column": "created_at", "must_be": "< 3650d"},
    {"type": "freshness", "column": "created_at", "must_be": "< 3650d", "where": "status = 'paid'"},
    # 65-71: expression
    {"type": "expression", "expression": "amount <> 0"},
    {"type": "expression", "expression": "length(email) > 5"},
    {"type": "expression", "expression": "order_id >= 0"},
    {"type": "expression", "expression": "created_at <= timestamp'2025-01-01 00:00:00'"},
    {"type": "expression", "expression": "status IN ('paid', 'shipped') OR amount >= 0", "null_is_valid": True},
    {"type": "expression", "expression": "customer_id < 100000", "null_is_valid": True},
    {"type": "expression", "expression": "amount < 500", "where": "status = 'pending'"},
    # 72-74: castable
    {"type": "castable", "column": "cpf", "to": "bigint"},
    {"type": "castable", "column": "email", "to": "int"},
    {"type": "castable", "column": "cpf", "to": "decimal(11,0)"},
    # 75-76: values_present
    {"type": "values_present", "column": "status", "values": list(STATUSES)},
    {"type": "values_present", "column": "status", "values": ["paid", "refunded"]},
    # 77-80: more of the common ones, with a tolerance, scopes and a warn
    {"type": "range", "column": "amount", "min": 0, "tolerance": "< 2%"},
    {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "< 5%",
     "where": "status = 'paid'"},
    {"type": "regex", "column": "cpf", "pattern": "^[0-9]+$", "severity": "warn"},
    {"type": "missing_count", "column": "email", "must_be": "< 100000"},
]

# The blocks by the name the runner's --block option gives them.
BLOCKS: dict[str, list[dict[str, Any]]] = {"15": BLOCK, "80": BLOCK_80}

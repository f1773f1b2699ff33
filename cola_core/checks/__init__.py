"""The built-in checks, and the base class for custom ones.

A custom check needs ``BaseCheck`` and the ``CheckResult`` it returns, both importable from
here (``from cola_core.checks import BaseCheck, CheckResult``) as from ``cola_core``.
"""

from __future__ import annotations

from cola_core.checks.base import BaseCheck, Capability, RuleOptions
from cola_core.checks.core import NotNullCheck, RangeCheck, RegexCheck, UniqueCheck
from cola_core.checks.metrics import (
    ColumnStatCheck,
    DistinctMetricCheck,
    FreshnessCheck,
    InvalidMetricCheck,
    MissingMetricCheck,
)
from cola_core.checks.presence import ValuesPresentCheck
from cola_core.checks.reference import ForeignKeyCheck, ReconcileCheck
from cola_core.checks.reference_match import ReferenceMatchCheck
from cola_core.checks.row_count import RowCountCheck
from cola_core.checks.rows import CastableCheck, ExpressionCheck
from cola_core.checks.schema import SchemaCheck
from cola_core.checks.sql import SqlCheck
from cola_core.language.result import CheckResult

__all__ = [
    "BUILTIN_CHECKS",
    "METRIC_TYPES",
    "BaseCheck",
    "Capability",
    "CastableCheck",
    "CheckResult",
    "ColumnStatCheck",
    "DistinctMetricCheck",
    "ExpressionCheck",
    "ForeignKeyCheck",
    "FreshnessCheck",
    "InvalidMetricCheck",
    "MissingMetricCheck",
    "NotNullCheck",
    "RangeCheck",
    "ReconcileCheck",
    "ReferenceMatchCheck",
    "RegexCheck",
    "RowCountCheck",
    "RuleOptions",
    "SchemaCheck",
    "SqlCheck",
    "UniqueCheck",
    "ValuesPresentCheck",
]

# The metrics a rule can name as its type (and as "metric" in the legacy "check" wrapper).
METRIC_TYPES: dict[str, type[BaseCheck]] = {
    "row_count": RowCountCheck,
    "distinct_count": DistinctMetricCheck,
    "duplicate_count": DistinctMetricCheck,
    "duplicate_percent": DistinctMetricCheck,
    "missing_count": MissingMetricCheck,
    "missing_percent": MissingMetricCheck,
    "invalid_count": InvalidMetricCheck,
    "invalid_percent": InvalidMetricCheck,
    "min": ColumnStatCheck,
    "max": ColumnStatCheck,
    "avg": ColumnStatCheck,
    "mean": ColumnStatCheck,
    "sum": ColumnStatCheck,
    "stddev": ColumnStatCheck,
    "freshness": FreshnessCheck,
}

BUILTIN_CHECKS: dict[str, type[BaseCheck]] = {
    "not_null": NotNullCheck,
    "unique": UniqueCheck,
    "range": RangeCheck,
    "regex": RegexCheck,
    "schema": SchemaCheck,
    "sql": SqlCheck,
    "expression": ExpressionCheck,
    "castable": CastableCheck,
    "values_present": ValuesPresentCheck,
    "foreign_key": ForeignKeyCheck,
    "reconcile": ReconcileCheck,
    "reference_match": ReferenceMatchCheck,
    **METRIC_TYPES,
}

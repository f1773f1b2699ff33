"""``values_present``: every listed value occurs in a column, such as the expected date
partitions of a load (a missing partition)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.checks.conditions import column_type, text_of
from cola_core.common.columns import column_of
from cola_core.common.formatting import format_value
from cola_core.language.params import SCALAR_LIST, STRING, Param
from cola_core.language.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["ValuesPresentCheck"]


class ValuesPresentCheck(BaseCheck):
    """Every listed value occurs in ``column`` at least once.

    Values are compared as text, the way Spark casts the column to string (a date column
    reads ``2024-01-31``). Only the listed values are collected, so the result is bounded."""

    capabilities = frozenset({Capability.AGGREGATE})
    scopes_itself = True

    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Column in which every listed value must occur, compared as text",
        ),
        "values": Param(
            SCALAR_LIST, required=True,
            description="Values that must each occur in the column, such as the expected date partitions",
        ),
    }

    @property
    def expected(self) -> list[str]:
        return list(dict.fromkeys(format_value(v) for v in self.params["values"] if v is not None))

    def aggregations(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        name = self.params["column"]
        text = text_of(column_of(df, name), column_type(df, name))
        return [F.collect_set(F.when(self.in_scope(text.isin(self.expected)), text))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        found = set(values[0] or [])
        missing = [value for value in self.expected if value not in found]
        total = len(self.expected)
        if not missing:
            return CheckResult(self.rule_type, True, f"{self.code}: all {total} values present")
        message = f"{self.code}: {len(missing)} of {total} values missing: {', '.join(missing)}"
        return CheckResult(self.rule_type, False, message, len(missing))

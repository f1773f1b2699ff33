"""``BaseCheck``: the contract every check, built-in or custom, follows.

Checks describe; the planner acts. A check returns Spark Columns:

- ``aggregations(df)`` / ``from_aggregations(values)``: the check's share of the block's single
  ``df.agg(...)`` scan, and how to read its slice of the answer back;
- ``distinct_sets(df)``: column sets whose distinct-row count the check needs (the planner
  computes each once and appends the counts to the check's slice);
- ``violation(df)`` (or ``violations(df)`` for several codes): a boolean Column, true for an
  offending row, which puts the check into the valid/invalid split.

A custom check may instead implement only ``run(df)``; it then keeps its own Spark action.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

from cola_core._format import render_code
from cola_core._params import Param
from cola_core.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["BaseCheck"]


class BaseCheck:
    """Base class of every check.

    Attributes:
        params: the rule dict without ``type`` (and without ``name``/``code``).
        rule_type: the type the rule was registered under.
        name: the rule's optional ``name``.
        code: the rule's declared code, or the one rendered from its parameters.

    Class attributes for subclasses:
        params_spec: declared parameters; ``None`` (the default for custom checks) accepts any.
    """

    params_spec: ClassVar[Mapping[str, Param] | None] = None

    def __init__(
        self,
        params: Mapping[str, Any] | None = None,
        *,
        rule_type: str | None = None,
        name: str | None = None,
        code: str | None = None,
    ) -> None:
        self.params: dict[str, Any] = dict(params or {})
        self.rule_type = rule_type or type(self).__name__
        self.name = name
        self.code = code or self.render_code()
        # Where the rule sits in the block; set by the parser, used in error messages.
        self.position: int | None = None
        self.target: int | None = None

    # -- parsing -------------------------------------------------------------------------

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        """Cross-parameter checks, after ``params_spec``. Raise ``ColaRuleError(reason)``."""

    def render_code(self) -> str:
        """The code rendered from the rule: ``type(column)`` for a one-column rule."""
        if isinstance(self.params.get("column"), str):
            return render_code(self.rule_type, self.params["column"])
        columns = self.params.get("columns")
        if isinstance(columns, (list, tuple)) and columns:
            return render_code(self.rule_type, *columns)
        return self.rule_type

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        """Columns the rule reads; the planner checks they exist before any Spark work."""
        used: list[str] = []
        if isinstance(self.params.get("column"), str):
            used.append(self.params["column"])
        if isinstance(self.params.get("columns"), (list, tuple)):
            used.extend(self.params["columns"])
        return used

    # -- capabilities (overridden by subclasses) -----------------------------------------

    def aggregations(self, df: DataFrame) -> list[Column]:
        raise NotImplementedError

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        raise NotImplementedError

    def distinct_sets(self, df: DataFrame) -> list[tuple[str, ...]]:
        """Column sets whose distinct-row count (NULL equal to NULL) the check needs."""
        return []

    def violation(self, df: DataFrame) -> Column:
        raise NotImplementedError

    def violations(self, df: DataFrame) -> list[tuple[str, Column]]:
        """(code, predicate) pairs; a row breaking a predicate is quarantined with its code."""
        return [(self.code, self.violation(df))]

    def run(self, df: DataFrame) -> CheckResult:
        """Run the check alone. By default this is the check's own aggregation job."""
        if not self.supports_aggregations:
            raise NotImplementedError(f"{type(self).__name__} implements neither run() nor aggregations()")
        columns = self.aggregations(df)
        values = list(df.agg(*columns).first()) if columns else []
        for column_set in self.distinct_sets(df):
            values.append(df.select(*column_set).distinct().count())
        return self.from_aggregations(values)

    # -- what the planner asks -----------------------------------------------------------

    @property
    def supports_aggregations(self) -> bool:
        return _overrides(self, "aggregations") and _overrides(self, "from_aggregations")

    @property
    def is_row_level(self) -> bool:
        return _overrides(self, "violation") or _overrides(self, "violations")

    def finish(self, result: CheckResult) -> CheckResult:
        """Fill in what a custom check may leave out: the rule's name and code."""
        updates: dict[str, Any] = {}
        if result.check_name is None and self.name is not None:
            updates["check_name"] = self.name
        if result.code is None:
            updates["code"] = self.code
        return dataclasses.replace(result, **updates) if updates else result

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.code}>"


def _overrides(check: BaseCheck, method: str) -> bool:
    return getattr(type(check), method) is not getattr(BaseCheck, method)

"""The classic row and table checks: ``not_null``, ``unique``, ``range``, ``regex``, ``row_count``."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from cola_core._format import format_value, render_code
from cola_core._params import NUMBER, ORDERED, STRING, STRING_LIST, THRESHOLD, WHOLE, Param
from cola_core.checks.base import BaseCheck
from cola_core.errors import ColaRuleError
from cola_core.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["NotNullCheck", "RangeCheck", "RegexCheck", "RowCountCheck", "UniqueCheck", "compile_pattern"]


def _f():
    # Imported lazily so that parsing a rule block never needs a JVM or even pyspark.
    from pyspark.sql import functions

    return functions


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class NotNullCheck(BaseCheck):
    """Every listed column is non-NULL. ``''`` and NaN are values, so they pass.

    failed_count is the total number of NULLs across the columns. In the split, a row gets
    the code of each column that is NULL in it (``not_null(email)``).
    """

    params_spec = {"columns": Param(STRING_LIST, required=True)}

    def column_code(self, column: str) -> str:
        return self._declared_code or render_code("not_null", column)

    def __init__(self, params: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self._declared_code = kwargs.get("code")
        super().__init__(params, **kwargs)

    def aggregations(self, df: DataFrame) -> list[Column]:
        F = _f()
        return [F.count(F.when(F.col(c).isNull(), F.lit(1))) for c in self.params["columns"]]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        per_column = {c: int(v) for c, v in zip(self.params["columns"], values)}
        failed = sum(per_column.values())
        if not failed:
            return CheckResult(self.rule_type, True, f"{self.code}: no NULL values")
        detail = ", ".join(f"{c}: {n}" for c, n in per_column.items() if n)
        return CheckResult(self.rule_type, False, f"{self.code}: {_plural(failed, 'NULL value')} ({detail})", failed)

    def violations(self, df: DataFrame) -> list[tuple[str, Column]]:
        F = _f()
        return [(self.column_code(c), F.col(c).isNull()) for c in self.params["columns"]]


class UniqueCheck(BaseCheck):
    """The tuple of the listed columns is unique. NULL keys are equal to each other.

    failed_count is the number of excess rows (rows - distinct keys). In the split every
    row whose key occurs more than once is invalid.
    """

    params_spec = {"columns": Param(STRING_LIST, required=True)}

    def aggregations(self, df: DataFrame) -> list[Column]:
        F = _f()
        return [F.count(F.lit(1))]

    def distinct_sets(self, df: DataFrame) -> list[tuple[str, ...]]:
        return [tuple(self.params["columns"])]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        rows, distinct = int(values[0]), int(values[1])
        excess = rows - distinct
        if not excess:
            return CheckResult(self.rule_type, True, f"{self.code}: all {_plural(rows, 'row')} are unique")
        message = f"{self.code}: {_plural(excess, 'duplicate row')} ({rows} rows, {distinct} distinct)"
        return CheckResult(self.rule_type, False, message, excess)

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import Window

        F = _f()
        return F.count(F.lit(1)).over(Window.partitionBy(*self.params["columns"])) > 1


def _parse_bound(value: Any, key: str) -> Any:
    """Range bounds written as strings must be ISO dates or timestamps."""
    if not isinstance(value, str):
        return value
    for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat):
        try:
            parse(value)
            return value
        except ValueError:
            continue
    raise ColaRuleError(f"'{key}' is {value!r}, which is neither a number nor an ISO date like '2024-01-31'")


class RangeCheck(BaseCheck):
    """``min <= column <= max`` (inclusive; at least one bound). NULLs pass."""

    params_spec = {"column": Param(STRING, required=True), "min": Param(ORDERED), "max": Param(ORDERED)}

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        if params.get("min") is None and params.get("max") is None:
            raise ColaRuleError(
                "needs at least one of 'min' or 'max', e.g. {\"type\": \"range\", \"column\": \"age\", \"min\": 0}"
            )
        low, high = (_parse_bound(params.get(k), k) for k in ("min", "max"))
        comparable = (low is not None and high is not None) and type(low) is type(high) or (
            isinstance(low, (int, float)) and isinstance(high, (int, float))
        )
        if comparable and low > high:
            raise ColaRuleError(f"'min' ({format_value(low)}) is greater than 'max' ({format_value(high)})")

    def render_code(self) -> str:
        return render_code(self.rule_type, self.params["column"], self.params.get("min"), self.params.get("max"))

    def _bounds_text(self) -> str:
        low, high = self.params.get("min"), self.params.get("max")
        if low is not None and high is not None:
            return f"between {format_value(low)} and {format_value(high)}"
        return f">= {format_value(low)}" if low is not None else f"<= {format_value(high)}"

    def violation(self, df: DataFrame) -> Column:
        F = _f()
        column = F.col(self.params["column"])
        outside = []
        if self.params.get("min") is not None:
            outside.append(column < F.lit(self.params["min"]))
        if self.params.get("max") is not None:
            outside.append(column > F.lit(self.params["max"]))
        condition = outside[0] if len(outside) == 1 else outside[0] | outside[1]
        # A NULL comparison is NULL, never true, so NULLs are not out of range.
        return F.coalesce(condition, F.lit(False))

    def aggregations(self, df: DataFrame) -> list[Column]:
        F = _f()
        return [F.count(F.when(self.violation(df), F.lit(1)))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        failed = int(values[0])
        if not failed:
            return CheckResult(self.rule_type, True, f"{self.code}: all values in range ({self._bounds_text()})")
        return CheckResult(
            self.rule_type, False, f"{self.code}: {_plural(failed, 'value')} out of range ({self._bounds_text()})", failed
        )


def compile_pattern(pattern: str, key: str = "pattern") -> None:
    """Refuse a regex that cannot compile, except for Java-only syntax Python lacks."""
    try:
        re.compile(pattern)
    except re.error as error:
        if "\\p{" in pattern or "\\P{" in pattern or "\\Q" in pattern:
            return  # Java's Unicode classes and quoting are valid for Spark's rlike.
        position = error.pos if error.pos is not None else len(pattern)
        raise ColaRuleError(
            f"'{key}' is not a valid regex ({error.msg} at position {position})\n"
            f"    {pattern}\n"
            f"    {' ' * position}^"
        ) from error


class RegexCheck(BaseCheck):
    """The string column matches ``pattern`` somewhere (``rlike``). NULLs fail."""

    params_spec = {"column": Param(STRING, required=True), "pattern": Param(STRING, required=True)}

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        compile_pattern(params["pattern"])

    def render_code(self) -> str:
        return render_code(self.rule_type, self.params["column"], self.params["pattern"])

    def violation(self, df: DataFrame) -> Column:
        F = _f()
        matches = F.col(self.params["column"]).cast("string").rlike(self.params["pattern"])
        return ~F.coalesce(matches, F.lit(False))

    def aggregations(self, df: DataFrame) -> list[Column]:
        F = _f()
        return [F.count(F.when(self.violation(df), F.lit(1)))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        failed = int(values[0])
        if not failed:
            return CheckResult(self.rule_type, True, f"{self.code}: all values match")
        message = f"{self.code}: {_plural(failed, 'value')} do not match (NULL counts as not matching)"
        return CheckResult(self.rule_type, False, message, failed)


class RowCountCheck(BaseCheck):
    """The table's size. Two forms, one per rule: bounds (``min`` default 0, optional ``max``,
    both inclusive) or metric (``must_be`` and optional ``warn``)."""

    params_spec = {"min": Param(WHOLE), "max": Param(WHOLE), "must_be": Param(THRESHOLD), "warn": Param(THRESHOLD)}

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        bounds = [k for k in ("min", "max") if k in params]
        metric = [k for k in ("must_be", "warn") if k in params]
        if bounds and metric:
            raise ColaRuleError(
                f"mixes the bounds form ({', '.join(bounds)}) with the metric form ({', '.join(metric)}); "
                "use either {\"min\": 1, \"max\": 100} or {\"must_be\": \"between 1 and 100\"}"
            )
        if "warn" in params and "must_be" not in params:
            raise ColaRuleError("'warn' needs 'must_be' next to it")
        if params.get("max") is not None and params.get("min", 0) > params["max"]:
            raise ColaRuleError(f"'min' ({params['min']}) is greater than 'max' ({params['max']})")

    @property
    def is_metric_form(self) -> bool:
        return "must_be" in self.params

    def aggregations(self, df: DataFrame) -> list[Column]:
        F = _f()
        return [F.count(F.lit(1))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        rows = int(values[0])
        if self.is_metric_form:
            from cola_core.checks.metrics import judge_metric

            return judge_metric(self, "row_count", rows)
        low, high = self.params.get("min", 0), self.params.get("max")
        if rows < low:
            return CheckResult(self.rule_type, False, f"row_count = {rows} is below min {low}", 1)
        if high is not None and rows > high:
            return CheckResult(self.rule_type, False, f"row_count = {rows} is above max {high}", 1)
        limits = f"min {low}" + (f", max {high}" if high is not None else "")
        return CheckResult(self.rule_type, True, f"row_count = {rows} is within bounds ({limits})")

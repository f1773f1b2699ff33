"""``row_count``: the table's number of rows, in a bounds form or a metric form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.errors import ColaRuleError
from cola_core.language.judging import judge_metric
from cola_core.language.params import BASELINE_PARAM, THRESHOLD, WHOLE, Param
from cola_core.language.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["RowCountCheck"]


class RowCountCheck(BaseCheck):
    """The table's number of rows is within bounds, or meets thresholds.

    Two forms, one per rule: bounds (``min`` default 0, optional ``max``,
    both inclusive) or metric (``must_be`` and optional ``warn``)."""

    capabilities = frozenset({Capability.AGGREGATE})
    scopes_itself = True
    params_spec = {
        "min": Param(WHOLE, description="Fewest rows allowed (inclusive, default 0), in the bounds form"),
        "max": Param(WHOLE, description="Most rows allowed (inclusive), in the bounds form"),
        "must_be": Param(
            THRESHOLD,
            description="Threshold the row count must meet, such as '> 0': the metric form, not with min or max",
        ),
        "warn": Param(
            THRESHOLD,
            description="Softer threshold: a count that meets must_be but not warn is a warn, still passed",
        ),
        "baseline": BASELINE_PARAM,
    }
    # The bounds form's min and max judge the count, as must_be does: both forms measure the same.
    identity_excludes = BaseCheck.identity_excludes | {"min", "max"}

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
        return [self.count_rows()]

    def expectation(self) -> tuple[str | None, str | None]:
        """The bounds form demands its bounds of the rows it counted."""
        if self.is_metric_form:
            return super().expectation()
        low, high = self.params.get("min", 0), self.params.get("max")
        return (f">= {low}" if high is None else f"between {low} and {high}"), "rows_checked"

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        rows = int(values[0])
        if self.is_metric_form:
            return judge_metric(self, "row_count", rows)
        low, high = self.params.get("min", 0), self.params.get("max")
        if rows < low:
            return CheckResult(self.rule_type, False, f"row_count = {rows} is below min {low}", 1)
        if high is not None and rows > high:
            return CheckResult(self.rule_type, False, f"row_count = {rows} is above max {high}", 1)
        limits = f"min {low}" + (f", max {high}" if high is not None else "")
        return CheckResult(self.rule_type, True, f"row_count = {rows} is within bounds ({limits})")

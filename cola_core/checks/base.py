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

from cola_core._columns import scope_column
from cola_core._format import format_number, render_code
from cola_core._params import Param
from cola_core.result import CheckResult
from cola_core.thresholds import threshold_of

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
    # Whether a rule of this kind may be scoped with ``where`` (not for schema and sql).
    supports_where: ClassVar[bool] = True
    # Whether aggregations() already honour ``where`` (built-ins do, through count_rows and
    # scoped); a custom check that does not is run on the filtered rows instead.
    scopes_itself: ClassVar[bool] = False

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
        # Options every rule may carry; set by the parser (see rules.COMMON_KEYS).
        self.severity_level = "fail"
        self.dimension: str | None = None
        self.where: str | None = None
        self.tolerance: str | float | None = None

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

    def conditions(self) -> list[str]:
        """SQL conditions the rule evaluates; the planner has Spark analyse them before any job."""
        return [self.where] if self.where is not None else []

    def analyse(self, df: DataFrame) -> None:
        """Have Spark check, without running a job, that the rule can run on ``df``; the
        planner calls it for every rule before the scan. Raise ``ColaRuleError(reason)``.
        By default there is nothing beyond the columns and conditions to check."""

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        """Columns the rule reads; the planner checks they exist before any Spark work."""
        used: list[str] = []
        if isinstance(self.params.get("column"), str):
            used.append(self.params["column"])
        if isinstance(self.params.get("columns"), (list, tuple)):
            used.extend(self.params["columns"])
        return used

    # -- capabilities (overridden by subclasses) -----------------------------------------

    def prepare(self, df: DataFrame) -> DataFrame:
        """Return ``df`` with any helper columns the check's Columns refer to (for example a
        lookup joined from a reference table). It must keep every row exactly once, and the
        planner and the split drop the helper columns again. The default adds nothing."""
        return df

    def aggregations(self, df: DataFrame) -> list[Column]:
        """By default, a check with only ``violation`` counts its offending rows here."""
        if not self.counts_violations_class():
            raise NotImplementedError
        return [self.count_rows(self.any_violation(df))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        if not self.counts_violations_class():
            raise NotImplementedError
        failed, label = int(values[0]), self.render_code()
        if not failed:
            return CheckResult(self.rule_type, True, f"{label}: no row breaks the rule")
        rows = "1 row breaks" if failed == 1 else f"{failed} rows break"
        return CheckResult(self.rule_type, False, f"{label}: {rows} the rule", failed)

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

    @classmethod
    def aggregating_class(cls) -> bool:
        explicit = _overrides(cls, "aggregations") and _overrides(cls, "from_aggregations")
        return explicit or cls.counts_violations_class()

    @classmethod
    def counts_violations_class(cls) -> bool:
        """A custom check with ``violation`` but neither ``run`` nor ``aggregations``: the
        planner counts its offending rows in the shared scan."""
        return (
            cls.row_level_class()
            and not _overrides(cls, "run")
            and not (_overrides(cls, "aggregations") or _overrides(cls, "from_aggregations"))
        )

    @classmethod
    def row_level_class(cls) -> bool:
        return _overrides(cls, "violation") or _overrides(cls, "violations")

    @property
    def supports_aggregations(self) -> bool:
        return self.aggregating_class()

    @property
    def is_row_level(self) -> bool:
        return self.row_level_class()

    def finish(self, result: CheckResult, rows_in_scope: int | None = None) -> CheckResult:
        """Complete a check's result with what the rule says around it.

        Fills in the name, code and dimension a custom check may leave out, then applies the
        rule's ``tolerance`` (a failed row rule passes when its share of offending rows meets
        it) and ``severity`` (a ``warn`` rule that fails is reported as a warn).

        Args:
            rows_in_scope: rows the rule saw; the planner gives it to rules with a tolerance.
        """
        updates: dict[str, Any] = {}
        if result.check_name is None and self.name is not None:
            updates["check_name"] = self.name
        if result.code is None:
            updates["code"] = self.code
        if result.dimension is None and self.dimension is not None:
            updates["dimension"] = self.dimension
        if self.tolerance is not None and rows_in_scope is not None and result.severity == "fail":
            share = 100.0 * result.failed_count / rows_in_scope if rows_in_scope else 0.0
            within = threshold_of(self.tolerance).accepts(share)
            verdict = "within" if within else "beyond"
            updates["message"] = f"{result.message}; {format_number(share)}% of rows, {verdict} tolerance ({self.tolerance})"
            if within:
                updates.update(passed=True, severity="pass")
        severity = updates.get("severity", result.severity)
        if self.severity_level == "warn" and severity == "fail":
            updates.update(passed=True, severity="warn")
        return dataclasses.replace(result, **updates) if updates else result

    # -- scope (``where``) -----------------------------------------------------------------

    def scope(self) -> Column | None:
        """The rule's ``where`` as a Column, or None when the rule sees every row."""
        return scope_column(self.where)

    def in_scope(self, condition: Column) -> Column:
        """``condition`` for rows inside the scope, false outside it."""
        scope = self.scope()
        return condition if scope is None else scope & condition

    def scoped(self, value: Column) -> Column:
        """``value`` inside the scope and NULL outside it, which aggregates then ignore."""
        scope = self.scope()
        if scope is None:
            return value
        from pyspark.sql import functions as F

        return F.when(scope, value)

    def any_violation(self, df: DataFrame) -> Column:
        """True for a row in scope that breaks any of the check's predicates (NULL is not)."""
        from pyspark.sql import functions as F

        broken = F.lit(False)
        for _, predicate in self.violations(df):
            broken = broken | F.coalesce(predicate, F.lit(False))
        return self.in_scope(broken)

    def count_rows(self, condition: Column | None = None) -> Column:
        """An aggregate: the rows in scope (meeting ``condition`` when one is given)."""
        from pyspark.sql import functions as F

        if condition is None and self.where is None:
            return F.count(F.lit(1))
        wanted = self.in_scope(F.lit(True) if condition is None else condition)
        return F.count(F.when(wanted, F.lit(1)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.code}>"


def _overrides(cls: type[BaseCheck], method: str) -> bool:
    return getattr(cls, method) is not getattr(BaseCheck, method)

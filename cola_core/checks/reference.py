"""Rules that hold the data against another source, the reference.

- ``foreign_key`` (row-level): every present key of the data occurs in the reference
  (referential integrity). The lookup is a left join with the reference's
  distinct keys, added by ``prepare``, so it joins the block's single scan and the split.
- ``reconcile`` (aggregate): an aggregate of the data (``count``, ``sum``, ``min``, ``max``,
  ``avg``) is close enough to the same aggregate of the reference.

What they share with ``reference_match`` (the reference's spec, how a data column and a
reference column are compared, the key lookup) is :mod:`cola_core.checks.reference_base`.
"""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import Capability
from cola_core.checks.conditions import column_type
from cola_core.checks.reference_base import ReferenceCheck, is_numeric, parse_reference
from cola_core.checks.rows import CountedRowCheck
from cola_core.common.columns import column_of, exact_sum_input, scope_column
from cola_core.common.formatting import format_number, render_code
from cola_core.common.spark_errors import analyse_now, first_line, is_unreachable
from cola_core.common.spark_versions import scalar_subquery
from cola_core.common.values import plain_number
from cola_core.errors import ColaRuleError
from cola_core.guards.sqlguard import check_condition
from cola_core.language.judging import judge_metric
from cola_core.language.params import BASELINE_PARAM, MAPPING, STRING, STRING_LIST, THRESHOLD, Param
from cola_core.language.result import CheckResult
from cola_core.language.thresholds import threshold_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["RECONCILE_AGGREGATES", "RECONCILE_DIFFERENCES", "ForeignKeyCheck", "ReconcileCheck"]

RECONCILE_AGGREGATES = ("count", "sum", "min", "max", "avg")
RECONCILE_DIFFERENCES = ("relative", "absolute")


# -- foreign_key -------------------------------------------------------------------------


class ForeignKeyCheck(ReferenceCheck, CountedRowCheck):
    """A row whose key (``column`` or ``columns``) is absent from the reference's
    ``reference_columns`` is invalid. A key with a NULL in it names nothing and passes; pair
    the rule with ``not_null`` to refuse it.

    ``prepare`` left-joins the data with the reference's distinct keys and a marker column, so
    each row keeps exactly one copy and the marker is NULL where the key was not found. Spark
    chooses the join: a reference smaller than ``spark.sql.autoBroadcastJoinThreshold`` is
    broadcast, and the data is then scanned once, with the rest of the block.
    """

    capabilities = frozenset({Capability.ROW})
    params_spec = {
        "column": Param(STRING, description="Key column whose present values must occur in the reference (or columns)"),
        "columns": Param(
            STRING_LIST,
            description="Columns of a composite key that must occur in the reference (or column)",
        ),
        "reference": Param(
            MAPPING, required=True,
            description="Where the keys are looked up: {path, format, options}, {table} or {query}",
        ),
        "reference_columns": Param(
            STRING_LIST,
            description="Reference's key columns, one per key column in order (default: the same names)",
        ),
    }

    def __init__(self, params: Mapping[str, Any] | None = None, **names: Any) -> None:
        super().__init__(params, **names)
        # Fresh for each check: no column of the data, and no other foreign_key, can collide.
        self.marker = f"__cola_fk_{uuid.uuid4().hex}"

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        if ("column" in params) == ("columns" in params):
            problem = "gives both 'column' and 'columns'" if "column" in params else "needs 'column' or 'columns'"
            raise ColaRuleError(f"{problem}; give one: the key that must occur in the reference")
        parse_reference(params["reference"])
        keys = [params["column"]] if "column" in params else list(params["columns"])
        references = params.get("reference_columns", keys)
        if len(references) != len(keys):
            named = f"{len(references)} column{'' if len(references) == 1 else 's'}"
            raise ColaRuleError(
                f"'reference_columns' names {named} for a key of {len(keys)} "
                f"({', '.join(keys)}); give one reference column per key column, in the same order"
            )

    @property
    def key_columns(self) -> list[str]:
        return [self.params["column"]] if "column" in self.params else list(self.params["columns"])

    @property
    def reference_columns(self) -> list[str]:
        return list(self.params.get("reference_columns", self.key_columns))

    def prepare(self, df: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        aliases, reference_keys, matches, complete = self.key_lookup(
            df, self.key_columns, self.reference_columns, self.marker
        )
        # NULL never equals anything, so reference rows with a NULL in the key can go first.
        known = self.reference.select(*reference_keys).where(complete).distinct().withColumn(self.marker, F.lit(True))
        return df.join(known, on=matches, how="left").drop(*aliases)

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        complete = reduce(lambda a, b: a & b, [column_of(df, column).isNotNull() for column in self.key_columns])
        return complete & F.col(self.marker).isNull()

    def describe_pass(self) -> str:
        return "all present keys found in the reference"

    def describe_failure(self, failed: int) -> str:
        noun = "value" if "column" in self.params else "key"
        return f"{failed} {noun}{'' if failed == 1 else 's'} not found in the reference"


# -- reconcile ---------------------------------------------------------------------------


class ReconcileCheck(ReferenceCheck):
    """An aggregate of the data (within ``where``) against the same aggregate of the reference
    (within ``reference_where``). ``must_be`` and ``warn`` judge the difference: absolute, or
    relative, as a percentage of the reference value.

    The reference's aggregate is a scalar subquery inside the block's one ``agg``: the check
    runs no action of its own, and Spark computes the subquery (one job over the reference)
    as part of the planner's scan of the data.
    """

    capabilities = frozenset({Capability.AGGREGATE})
    params_spec = {
        "aggregate": Param(
            STRING, required=True,
            description="Aggregate compared on both sides: count, sum, min, max or avg",
            choices=RECONCILE_AGGREGATES,
        ),
        "column": Param(STRING, description="Data column aggregated; needed except for count, which then counts rows"),
        "reference": Param(
            MAPPING, required=True,
            description="What the data is compared with: {path, format, options}, {table} or {query}",
        ),
        "reference_column": Param(STRING, description="Reference column aggregated (default: column)"),
        "reference_where": Param(
            STRING,
            description="SQL condition scoping the reference's rows, as where scopes the data's",
        ),
        "difference": Param(
            STRING,
            description="How the difference is measured: relative (default, percent of the reference) or absolute",
            choices=RECONCILE_DIFFERENCES,
        ),
        "must_be": Param(
            THRESHOLD, required=True,
            description="Threshold the difference between data and reference must meet, such as '< 1%'",
        ),
        "warn": Param(
            THRESHOLD,
            description="Softer threshold: a difference that meets must_be but not warn is a warn, still passed",
        ),
        "baseline": BASELINE_PARAM,
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        aggregate = params["aggregate"]
        if aggregate not in RECONCILE_AGGREGATES:
            raise ColaRuleError(f"'aggregate' must be one of {', '.join(RECONCILE_AGGREGATES)}, got {aggregate!r}")
        if aggregate != "count" and "column" not in params:
            raise ColaRuleError(f"'column' is required for aggregate {aggregate!r} (only count works without one)")
        if "reference_column" in params and "column" not in params:
            raise ColaRuleError("'reference_column' needs 'column' (a count without a column counts rows)")
        difference = params.get("difference", "relative")
        if difference not in RECONCILE_DIFFERENCES:
            raise ColaRuleError(f"'difference' must be 'relative' or 'absolute', got {difference!r}")
        for key in ("must_be", "warn"):
            if key not in params:
                continue
            threshold = threshold_of(params[key])
            if threshold.compares_with_history:
                continue  # its % is a change from the baseline, and it judges no duration
            if threshold.is_duration:
                raise ColaRuleError(f"'{key}' ({params[key]}) is a duration; a difference is a plain number")
            if difference == "absolute" and any(bound.suffix == "%" for bound in threshold.bounds):
                raise ColaRuleError(
                    f"'{key}' ({params[key]}) is a percentage, but the difference is absolute (in the column's "
                    "units); drop the % or set \"difference\": \"relative\""
                )
        parse_reference(params["reference"])
        if "reference_where" in params:
            check_condition(params["reference_where"], "reference_where")

    def render_code(self) -> str:
        column = self.params.get("column")
        measured = self.params["aggregate"] if column is None else render_code(self.params["aggregate"], column)
        return render_code(self.rule_type, measured)

    @property
    def relative(self) -> bool:
        return bool(self.params.get("difference", "relative") == "relative")

    def _measure(self, df: DataFrame, column: str | None, data_type: DataType | None, scoped: bool) -> Column:
        """The rule's aggregate over ``df``; over the rule's scope when ``scoped``."""
        from pyspark.sql import functions as F

        aggregate = self.params["aggregate"]
        if column is None:
            return self.count_rows() if scoped else F.count(F.lit(1))
        value = column_of(df, column)
        if aggregate == "count":
            return self.count_rows(value.isNotNull()) if scoped else F.count(value)
        if aggregate == "sum":
            value = exact_sum_input(value, data_type)
        function = {"sum": F.sum, "min": F.min, "max": F.max, "avg": F.avg}[aggregate]
        return function(self.scoped(value) if scoped else value)

    def _numeric_type(
        self, df: DataFrame, column: str | None, side: str, lookup: Callable[[DataFrame, str], DataType]
    ) -> DataType | None:
        if column is None:
            return None
        data_type = lookup(df, column)
        if self.params["aggregate"] != "count" and not is_numeric(data_type):
            raise self.rule_error(
                f"{self.params['aggregate']} needs a numeric column, but {side} column {column} is "
                f"{data_type.simpleString()}; cast it first",
            )
        return data_type

    def aggregations(self, df: DataFrame) -> list[Column]:
        from pyspark.errors import PySparkException

        column = self.params.get("column")
        reference_column = self.params.get("reference_column", column)
        data_type = self._numeric_type(df, column, "the data", column_type)
        reference = self.reference
        reference_type = self._numeric_type(reference, reference_column, "the reference", self.reference_type)
        condition = self.params.get("reference_where")
        if condition is not None:
            try:
                reference = reference.where(scope_column(condition))
                analyse_now(reference)  # Spark Connect would raise only when the scan runs
            except PySparkException as error:
                if is_unreachable(error):
                    raise
                reason = f"Spark cannot evaluate reference_where {condition!r}: {first_line(error)}"
                raise self.rule_error(reason) from error
        measured = reference.agg(self._measure(reference, reference_column, reference_type, scoped=False))
        return [self._measure(df, column, data_type, scoped=True), scalar_subquery(measured)]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        data, reference = (plain_number(value) for value in values[:2])
        must_be = self.params["must_be"]
        unmeasured = [
            f"the {side} has no non-NULL values of {column}"
            for side, column, value in (
                ("data", self.params.get("column"), data),
                ("reference", self.params.get("reference_column", self.params.get("column")), reference),
            )
            if value is None
        ]
        if unmeasured:
            return judge_metric(self, self.code, None, unmeasured=" and ".join(unmeasured))
        if any(isinstance(value, float) and math.isnan(value) for value in (data, reference)):
            return judge_metric(self, self.code, math.nan)
        if self.relative and reference == 0 and data != 0:
            message = (
                f"{self.code}: the reference is 0 and the data {format_number(data)}, so there is no relative "
                f"difference; must_be ({must_be}) is not met"
            )
            return CheckResult(self.rule_type, False, message, 1)
        difference = abs(data - reference)
        if self.relative:
            difference = 0.0 if reference == 0 else 100.0 * difference / abs(reference)
        judged = judge_metric(self, self.code, difference)
        if self.history_runs:
            # The change (or anomaly) is what was judged: keep judging's words, and add the sides.
            sides = f"(data {format_number(data)}, reference {format_number(reference)})"
            return dataclasses.replace(judged, message=f"{judged.message} {sides}")
        verdict = {
            "pass": f"meets must_be ({must_be})",
            "warn": f"violates warn ({self.params.get('warn')})",
            "fail": f"violates must_be ({must_be})",
        }[judged.severity or "fail"]
        shown = format_number(difference) + ("%" if self.relative else "")
        sides = f"(data {format_number(data)}, reference {format_number(reference)})"
        return dataclasses.replace(judged, message=f"{self.code}: difference {shown} {sides} {verdict}")

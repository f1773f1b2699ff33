"""SODA-style metric rules: a number measured over the DataFrame, judged by thresholds.

The metric is the rule's type (``{"type": "missing_percent", ...}``). A rule has ``must_be``
(the pass condition) and an optional ``warn``: a value that meets ``must_be`` but not
``warn`` is a warn, which keeps ``passed=True``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.checks.conditions import (
    MISSING_PARAMS,
    VALIDITY_PARAMS,
    column_type,
    datetime_of_text,
    invalid_condition,
    missing_condition,
    type_family,
    validate_validity,
)
from cola_core.common.columns import column_of, exact_sum_input
from cola_core.common.sqltext import identifier
from cola_core.common.values import plain_number
from cola_core.errors import ColaRuleError
from cola_core.language.judging import judge_metric
from cola_core.language.params import BASELINE_PARAM, STRING, STRING_LIST, THRESHOLD, Param
from cola_core.language.result import CheckResult
from cola_core.language.thresholds import threshold_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "ColumnStatCheck",
    "DistinctMetricCheck",
    "FreshnessCheck",
    "InvalidMetricCheck",
    "MissingMetricCheck",
]

_JUDGED = {
    "must_be": Param(
        THRESHOLD, required=True,
        description="Pass condition on the metric: a threshold such as '< 5%' or 'between 10 and 100'",
    ),
    "warn": Param(
        THRESHOLD,
        description="Softer threshold: a value that meets must_be but not warn is a warn, still passed",
    ),
    "baseline": BASELINE_PARAM,
}


def _percent(part: int, whole: int) -> float:
    return 0.0 if whole == 0 else 100.0 * part / whole



class _MetricCheck(BaseCheck):
    """Shared parsing for metric rules: thresholds, and durations only for freshness."""

    capabilities = frozenset({Capability.AGGREGATE})
    scopes_itself = True

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        for key in ("must_be", "warn"):
            if key in params and rule_type != "freshness" and threshold_of(params[key]).is_duration:
                raise ColaRuleError(
                    f"'{key}' ({params[key]}) uses a duration unit, which only a freshness rule measures; "
                    "write a plain number"
                )

    @property
    def label(self) -> str:
        return self.render_code()

    @property
    def is_percent(self) -> bool:
        return self.rule_type.endswith("_percent")


class _RowMetricCheck(_MetricCheck):
    """missing_* and invalid_*: they can point at rows, so they join the split."""

    capabilities = frozenset({Capability.ROW, Capability.AGGREGATE})

    def condition(self, df: DataFrame) -> Column:
        raise NotImplementedError

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        text = self.violation_text(df)
        return self.condition(df) if text is None else F.expr(text)

    def aggregations(self, df: DataFrame) -> list[Column]:
        return [self.count_rows(), self.count_where(self.violation_text(df), lambda: self.condition(df))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        rows, offending = int(values[0]), int(values[1])
        value = _percent(offending, rows) if self.is_percent else offending
        return judge_metric(self, self.label, value, offending)


class MissingMetricCheck(_RowMetricCheck):
    """``missing_count`` / ``missing_percent``: NULLs, plus any ``missing_values``."""

    summaries = MappingProxyType({
        "missing_count": "The number of missing values (NULL, or one of `missing_values`) meets thresholds.",
        "missing_percent": "The percentage of missing values (NULL, or one of `missing_values`) meets thresholds.",
    })

    def column_measures(self, result: Mapping[str, Any]) -> dict[str, dict[str, int | float]]:
        # Only a plain missing_count counts NULLs alone; missing_values counts more.
        column, metric = self.measured_column(), result.get("metric_value")
        if self.rule_type != "missing_count" or "missing_values" in self.params or column is None or metric is None:
            return {}
        return {column: {"null_count": int(metric)}}

    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Column whose missing values are counted: NULLs, plus any missing_values",
        ),
        **_JUDGED,
        **MISSING_PARAMS,
    }

    def condition(self, df: DataFrame) -> Column:
        column = self.params["column"]
        return missing_condition(column_of(df, column), self.params, column_type(df, column))

    def violation_text(self, df: DataFrame) -> str | None:
        """NULL alone, as text (``not_null`` of the same column counts the same aggregate)."""
        if self.params.get("missing_values"):
            return None
        sql_column = identifier(df, self.params["column"])
        return None if sql_column is None else f"{sql_column} IS NULL"


class InvalidMetricCheck(_RowMetricCheck):
    """``invalid_count`` / ``invalid_percent``: present values that break the validity config."""

    summaries = MappingProxyType({
        "invalid_count": "The number of present values breaking a validity config meets thresholds.",
        "invalid_percent": "The percentage of present values breaking a validity config meets thresholds.",
    })

    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Column whose present values are held against the validity settings",
        ),
        **_JUDGED,
        **MISSING_PARAMS,
        **VALIDITY_PARAMS,
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        super().validate(params, rule_type)
        validate_validity(params, rule_type)

    def condition(self, df: DataFrame) -> Column:
        column = self.params["column"]
        return invalid_condition(column_of(df, column), self.params, column_type(df, column))


class DistinctMetricCheck(_MetricCheck):
    """``distinct_count``, ``duplicate_count``, ``duplicate_percent`` over ``column(s)`` or the
    whole row. NULL counts as one value, as in ``select(cols).distinct().count()``."""

    summaries = MappingProxyType({
        "distinct_count": "The number of distinct values of the columns (or whole rows) meets thresholds.",
        "duplicate_count": "The number of rows repeating an earlier row's values meets thresholds.",
        "duplicate_percent": "The percentage of rows repeating an earlier row's values meets thresholds.",
    })
    compares_rows = True

    params_spec = {
        "column": Param(
            STRING,
            description="Column the distinct or duplicate count is over (or columns; the whole row when neither)",
        ),
        "columns": Param(
            STRING_LIST,
            description="Columns whose combined values the count is over (or column; the whole row when neither)",
        ),
        **_JUDGED,
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        super().validate(params, rule_type)
        if "column" in params and "columns" in params:
            raise ColaRuleError("give 'column' or 'columns', not both")

    def key_columns(self, df: DataFrame) -> tuple[str, ...]:
        if "column" in self.params:
            return (self.params["column"],)
        return tuple(self.params.get("columns") or df.columns)

    def aggregations(self, df: DataFrame) -> list[Column]:
        return [self.count_rows()]

    def distinct_sets(self, df: DataFrame) -> list[tuple[str, ...]]:
        return [self.key_columns(df)]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        rows, distinct = int(values[0]), int(values[1])
        if self.rule_type == "distinct_count":
            return judge_metric(self, self.label, distinct)
        excess = rows - distinct
        value = _percent(excess, rows) if self.is_percent else excess
        return judge_metric(self, self.label, value, excess)

    def column_measures(self, result: Mapping[str, Any]) -> dict[str, dict[str, int | float]]:
        column, metric, rows = self.measured_column(), result.get("metric_value"), result.get("rows_checked")
        if column is None or metric is None:
            return {}
        if self.rule_type == "distinct_count":
            return {column: {"distinct_rows": int(metric)}}
        if self.rule_type == "duplicate_count" and rows is not None:
            return {column: {"distinct_rows": int(rows) - int(metric)}}
        return {}


_STAT_FUNCTIONS = {
    "min": "min",
    "max": "max",
    "avg": "avg",
    "mean": "avg",
    "sum": "sum",
    "stddev": "stddev_samp",
}


def _unmeasured(rows: int, measured: int, column: str, needed: int = 1, what: str = "non-NULL values") -> str:
    if rows == 0:
        return "the DataFrame is empty"
    if measured == 0:
        return f"{column} has no {what}"
    return f"{column} has {measured} of the {needed} {what} needed"


class ColumnStatCheck(_MetricCheck):
    """``min``, ``max``, ``avg`` (alias ``mean``), ``sum``, ``stddev`` (sample) over a numeric
    ``column``.

    An empty DataFrame, an all-NULL column, or a single value for ``stddev`` measures nothing,
    and the rule fails. A non-numeric column is a ``ColaRuleError`` (raised before any job).
    """

    summaries = MappingProxyType({
        "min": "The smallest value of a numeric column meets thresholds.",
        "max": "The largest value of a numeric column meets thresholds.",
        "avg": "The average of a numeric column meets thresholds.",
        "mean": "The average of a numeric column meets thresholds (an alias of `avg`).",
        "sum": "The sum of a numeric column meets thresholds.",
        "stddev": "The sample standard deviation of a numeric column meets thresholds.",
    })

    def column_measures(self, result: Mapping[str, Any]) -> dict[str, dict[str, int | float]]:
        column, metric = self.measured_column(), result.get("metric_value")
        if column is None or metric is None or self.rule_type not in ("min", "max", "sum"):
            return {}
        return {column: {self.rule_type: float(metric)}}

    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Numeric column the statistic is computed over; NULLs are left out",
        ),
        **_JUDGED,
    }

    def aggregations(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F
        from pyspark.sql.types import DecimalType

        name = self.params["column"]
        data_type = column_type(df, name)
        if type_family(data_type) not in ("numeric", "float"):
            raise self.rule_error(
                f"{self.rule_type} needs a numeric column, but {name} is {data_type.simpleString()}; cast it first"
            )
        function = getattr(F, _STAT_FUNCTIONS[self.rule_type])
        column = column_of(df, name)
        measured = exact_sum_input(column, data_type) if self.rule_type == "sum" else column
        statistic = [function(self.scoped(measured)), self.count_rows()]
        if self.rule_type in ("min", "max") or (
            self.rule_type in ("avg", "mean") and not isinstance(data_type, DecimalType)
        ):
            # NULL exactly when no value was measured: the count of values would say nothing
            # more, and a wide block would carry one more aggregate per rule. A sum (which
            # overflows to NULL), a decimal's average (likewise) and stddev (which needs two
            # values) count them.
            return statistic
        return [*statistic, self.count_rows(F.isnotnull(column))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        value, rows = plain_number(values[0]), int(values[1])
        measured = int(values[2]) if len(values) > 2 else int(value is not None)
        needed = 2 if self.rule_type == "stddev" else 1
        why = _unmeasured(rows, measured, self.params["column"], needed)
        return judge_metric(self, self.label, value, unmeasured=why)


class FreshnessCheck(_MetricCheck):
    """Seconds from ``current_timestamp()`` of the query to the newest value of ``column``.

    The column is a date, a timestamp, or a string holding ISO timestamps (strings that are
    not, and ISO-shaped text naming no real day such as ``'2022-02-30'``, are ignored, never a
    failed job); dates and strings are read in the session time zone. A newest value in the
    future gives a negative age.
    """

    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Date, timestamp or ISO-text column whose newest value gives the data's age",
        ),
        **_JUDGED,
        # The metric is an age in seconds, judged by a duration (same place in the spec as _JUDGED's).
        "must_be": Param(
            THRESHOLD, required=True,
            description="Pass condition on the age in seconds, such as '< 1d' or '<= 2h' (units s, m, h, d, w)",
        ),
    }

    def _timestamps(self, df: DataFrame) -> Column:
        name = self.params["column"]
        data_type = column_type(df, name)
        family = type_family(data_type)
        if family in ("date", "timestamp"):
            return column_of(df, name).cast("timestamp")
        if family == "string":
            return datetime_of_text(column_of(df, name))
        raise self.rule_error(
            f"freshness needs a date, timestamp or ISO-text column, but {name} is {data_type.simpleString()}"
        )

    def aggregations(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        timestamps = self._timestamps(df)
        age_micros = F.unix_micros(F.current_timestamp()) - F.unix_micros(F.max(self.scoped(timestamps)))
        return [age_micros, self.count_rows(), self.count_rows(F.isnotnull(timestamps))]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        micros, rows, measured = values[0], int(values[1]), int(values[2])
        why = _unmeasured(rows, measured, self.params["column"], what="timestamps")
        return judge_metric(self, self.label, None if micros is None else micros / 1_000_000, unmeasured=why)

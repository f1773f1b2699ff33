"""The classic row checks: ``not_null``, ``unique``, ``range``, ``regex`` (``row_count`` is in
:mod:`cola_core.checks.row_count`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.checks.conditions import (
    column_type,
    datetime_of_text,
    number_literal,
    numeric_text,
    text_of,
    type_family,
)
from cola_core.common.columns import column_of, matches, not_true
from cola_core.common.formatting import format_value, plural, render_code
from cola_core.common.sqltext import identifier, number_text, string_text
from cola_core.common.values import as_datetime, is_datetime_text, is_number
from cola_core.errors import ColaRuleError
from cola_core.guards.regex import compile_pattern, end_anchored
from cola_core.language.params import BOOL, ORDERED, STRING, STRING_LIST, Param
from cola_core.language.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["NotNullCheck", "RangeCheck", "RegexCheck", "UniqueCheck"]



class _LabelledCheck(BaseCheck):
    """Messages open with the rule rendered from its parameters (``range(age,1,99)``), which
    says what was checked even when the rule declares a code of its own."""

    scopes_itself = True

    @property
    def label(self) -> str:
        return self.render_code()


class NotNullCheck(_LabelledCheck):
    """Every listed column is non-NULL. ``''`` and NaN are values, so they pass.

    failed_count is the total number of NULLs across the columns. In the split, a row gets
    the code of each column that is NULL in it (``not_null(email)``).
    """

    capabilities = frozenset({Capability.ROW, Capability.AGGREGATE})
    params_spec = {
        "columns": Param(
            STRING_LIST, required=True,
            description="Columns that must hold no NULL; always a list, even for one column",
        ),
    }

    def column_code(self, column: str) -> str:
        return self._declared_code or render_code("not_null", column) + self.code_suffix

    def row_codes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.column_code(c) for c in self.params["columns"]))

    def __init__(self, params: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self._declared_code = kwargs.get("code")
        super().__init__(params, **kwargs)

    def aggregations(self, df: DataFrame) -> list[Column]:

        return [self._count_nulls(df, c) for c in self.params["columns"]]

    def counted_codes(self, codes: Sequence[str]) -> list[str | None]:
        # A NULL count per column, each the rows carrying that column's code, unless a
        # declared code stands for every column, or a subclass flags or counts rows its own way.
        own = type(self).violations is NotNullCheck.violations and type(self).aggregations is NotNullCheck.aggregations
        return list(codes) if own and len(set(codes)) == len(codes) == len(self.params["columns"]) else []

    def _count_nulls(self, df: DataFrame, column: str) -> Column:
        from pyspark.sql import functions as F

        sql_column = identifier(df, column)
        text = None if sql_column is None else f"{sql_column} IS NULL"
        return self.count_where(text, lambda: F.isnull(column_of(df, column)))

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        # One count per column, in order (aggregations above).
        per_column = {c: int(v) for c, v in zip(self.params["columns"], values, strict=True)}
        failed = sum(per_column.values())
        # Over several columns, the total does not say which column holds the NULLs: the
        # counts per column are carried as data (lineage reports them per column).
        details = {"columns": per_column} if len(per_column) > 1 else None
        if not failed:
            return CheckResult(self.rule_type, True, f"{self.label}: no NULL values", details=details)
        detail = ", ".join(f"{c}: {n}" for c, n in per_column.items() if n)
        message = f"{self.label}: {plural(failed, 'NULL value')} ({detail})"
        return CheckResult(self.rule_type, False, message, failed, details=details)

    def column_measures(self, result: Mapping[str, Any]) -> dict[str, dict[str, int | float]]:
        """The NULLs of each column: ``failed_count``, with one column or none found; over
        several, the result's ``details["columns"]`` (left out when over their bound), kept
        only when they name the rule's columns and add up. Never read from the message."""
        columns = list(dict.fromkeys(str(column) for column in self.params["columns"]))
        failed = int(result["failed_count"])
        if failed == 0 or len(columns) == 1:
            return {column: {"null_count": failed} for column in columns}
        details = result.get("details")
        counted = details.get("columns") if isinstance(details, Mapping) else None
        if not isinstance(counted, Mapping) or sorted(counted) != sorted(columns):
            return {}
        counts = {column: counted[column] for column in columns}
        if not all(isinstance(count, int) and not isinstance(count, bool) for count in counts.values()):
            return {}
        if sum(counts.values()) != failed:
            return {}
        return {column: {"null_count": count} for column, count in counts.items()}

    def violations(self, df: DataFrame) -> list[tuple[str, Column]]:
        from pyspark.sql import functions as F

        return [(self.column_code(c), F.isnull(column_of(df, c))) for c in self.params["columns"]]


class UniqueCheck(_LabelledCheck):
    """The tuple of the listed columns is unique. NULL keys are equal to each other.

    failed_count is the number of excess rows (rows - distinct keys). In the split every
    row whose key occurs more than once is invalid.
    """

    capabilities = frozenset({Capability.ROW, Capability.AGGREGATE})
    compares_rows = True
    params_spec = {
        "columns": Param(
            STRING_LIST, required=True,
            description="Columns whose combination must be unique; NULL keys are equal to each other",
        ),
    }

    def aggregations(self, df: DataFrame) -> list[Column]:
        return [self.count_rows()]

    def distinct_sets(self, df: DataFrame) -> list[tuple[str, ...]]:
        return [tuple(self.params["columns"])]

    def window_keys(self) -> tuple[str, ...]:
        return tuple(self.params["columns"])

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        rows, distinct = int(values[0]), int(values[1])
        excess = rows - distinct
        if not excess:
            return CheckResult(self.rule_type, True, f"{self.label}: all {plural(rows, 'row')} are unique")
        message = f"{self.label}: {plural(excess, 'duplicate row')} ({rows} rows, {distinct} distinct)"
        return CheckResult(self.rule_type, False, message, excess)

    def column_measures(self, result: Mapping[str, Any]) -> dict[str, dict[str, int | float]]:
        # A one-column key's distinct values: the rows the rule saw, less the excess ones.
        column, rows = self.measured_column(), result.get("rows_checked")
        if column is None or rows is None:
            return {}
        return {column: {"distinct_rows": int(rows) - int(result["failed_count"])}}

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import Window

        # Only rows in scope count towards a key's occurrences, and only they are blamed.
        keys = [column_of(df, column) for column in self.params["columns"]]
        occurrences = self.count_rows().over(Window.partitionBy(*keys))
        return self.in_scope(occurrences > 1)


def _parse_bound(value: Any, key: str) -> Any:
    """Range bounds written as strings must be ISO dates or timestamps, and real ones, with
    nothing around them: Spark's cast trims whitespace that its regex-checked reading of a
    string column does not, so a padded bound would mean different things on the two."""
    if value is None or is_number(value) or isinstance(value, (dt.date, dt.datetime)):
        return value
    if isinstance(value, str) and value != value.strip() and is_datetime_text(value.strip()):
        raise ColaRuleError(
            f"'{key}' is {value!r}, which has leading or trailing whitespace; "
            "write the date or timestamp alone, like '2024-01-31'"
        )
    if not (isinstance(value, str) and is_datetime_text(value)):
        raise ColaRuleError(f"'{key}' is {value!r}, which is neither a number nor an ISO date like '2024-01-31'")
    try:
        as_datetime(value)
    except ValueError as error:
        raise ColaRuleError(f"'{key}' is {value!r}, which is not a real date ({error})") from error
    return value


def _dates_only(bounds: Iterable[Any]) -> bool:
    """Whether every bound is a plain day (no time of day): a date column then compares as
    dates, else as timestamps."""
    return all(not isinstance(b, dt.datetime) and len(format_value(b)) == 10 for b in bounds)


class RangeCheck(_LabelledCheck):
    """``min <= column <= max`` (inclusive; at least one bound). NULLs pass.

    Numeric bounds apply to numeric columns, and to string columns holding numbers; ISO date
    or timestamp bounds apply to date and timestamp columns, and to strings holding them (read
    in the session time zone). A present value that cannot be read as the bounds' kind (a
    string like ``'abc'``, NaN, or a day the calendar lacks such as ``'2022-02-30'``) lies in
    no interval, so it is out of range: it counts as a violation, and never fails the job.

    Whole-number bounds up to 38 digits compare exactly (as ``decimal(38,0)`` beyond bigint);
    longer ones are a ``ColaRuleError``.
    """

    capabilities = frozenset({Capability.ROW})
    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Column whose present values must lie within the bounds; NULLs pass",
        ),
        "min": Param(ORDERED, description="Smallest allowed value (inclusive); a number, or an ISO date or timestamp"),
        "max": Param(ORDERED, description="Largest allowed value (inclusive); a number, or an ISO date or timestamp"),
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        if params.get("min") is None and params.get("max") is None:
            raise ColaRuleError(
                "needs at least one of 'min' or 'max', e.g. {\"type\": \"range\", \"column\": \"age\", \"min\": 0}"
            )
        low, high = (_parse_bound(params.get(k), k) for k in ("min", "max"))
        if low is None or high is None:
            return
        if is_number(low) != is_number(high):
            raise ColaRuleError(
                f"'min' ({format_value(low)}) and 'max' ({format_value(high)}) must both be numbers or both be dates"
            )
        try:
            inverted = low > high if is_number(low) else as_datetime(low) > as_datetime(high)
        except TypeError:  # one bound has a time zone and the other has none: Spark decides
            inverted = False
        if inverted:
            raise ColaRuleError(f"'min' ({format_value(low)}) is greater than 'max' ({format_value(high)})")

    def render_code(self) -> str:
        return render_code(self.rule_type, self.params["column"], self.params.get("min"), self.params.get("max"))

    def _bounds_text(self) -> str:
        low, high = self.params.get("min"), self.params.get("max")
        if low is not None and high is not None:
            return f"between {format_value(low)} and {format_value(high)}"
        return f">= {format_value(low)}" if low is not None else f"<= {format_value(high)}"

    def _comparable(self, df: DataFrame) -> tuple[Column, str | None]:
        """The column as a value comparable with the bounds, and the type to cast bounds to."""
        from pyspark.sql import functions as F

        name = self.params["column"]
        data_type = column_type(df, name)
        family = type_family(data_type)
        column = column_of(df, name)
        bounds = [b for b in (self.params.get("min"), self.params.get("max")) if b is not None]
        if all(is_number(bound) for bound in bounds):
            if family in ("numeric", "float"):
                # NaN lies in no interval.
                return (F.when(F.call_function("not", F.isnan(column)), column) if family == "float" else column), None
            if family == "string":
                return numeric_text(column), None
            raise self.rule_error(f"numeric bounds need a numeric column, but {name} is {data_type.simpleString()}")
        date_only = _dates_only(bounds)
        if family == "date":
            return (column, "date") if date_only else (column.cast("timestamp"), "timestamp")
        if family == "timestamp":
            return column, data_type.simpleString()
        if family == "string":
            return datetime_of_text(column), "timestamp"
        raise self.rule_error(f"date bounds need a date or timestamp column, but {name} is {data_type.simpleString()}")

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        text = self.violation_text(df)
        if text is not None:
            return F.expr(text)
        value, cast_to = self._comparable(df)

        def bound(raw: Any) -> Column:
            # Date bounds were read as real dates (with an offset Spark takes) at parse time, so
            # this cast of the rule's own text cannot fail.
            return number_literal(raw) if cast_to is None else F.lit(format_value(raw)).cast(cast_to)

        low, high = self.params.get("min"), self.params.get("max")
        if low is not None and high is not None:
            # NULL unless both hold, which not_true below reads as out of range, like AND's
            # FALSE or NULL; the function costs less than the operator.
            within = F.when(value >= bound(low), value <= bound(high))
        else:
            within = value >= bound(low) if low is not None else value <= bound(high)
        # NULL passes (pair the rule with not_null); a present value that could not be read
        # as the bounds' kind compares as NULL, and is out of range.
        return F.isnotnull(column_of(df, self.params["column"])) & not_true(within)

    def violation_text(self, df: DataFrame) -> str | None:
        """:meth:`violation` as SQL text (``common.sqltext``), for a number or date column
        with bounds of its kind; None for the shapes the Column path alone handles (text
        holding numbers or dates, nested fields, mismatched bounds, which it refuses)."""
        name = self.params["column"]
        column = identifier(df, name)
        if column is None:
            return None
        data_type = column_type(df, name)
        family = type_family(data_type)
        raw = {key: self.params.get(key) for key in ("min", "max") if self.params.get(key) is not None}
        if all(is_number(bound) for bound in raw.values()):
            if family not in ("numeric", "float"):
                return None
            value, bounds = column, {key: number_text(bound) for key, bound in raw.items()}
        else:
            date_only = _dates_only(raw.values())
            if family == "date":
                value, cast_to = (column, "DATE") if date_only else (f"CAST({column} AS TIMESTAMP)", "TIMESTAMP")
            elif family == "timestamp":
                value, cast_to = column, data_type.simpleString()
            else:
                return None
            bounds = {key: f"CAST({string_text(format_value(b))} AS {cast_to})" for key, b in raw.items()}
        if None in bounds.values():
            return None
        within = " AND ".join(
            f"{value} {'>=' if key == 'min' else '<='} {bound}" for key, bound in bounds.items()
        )
        # NULL passes; NaN lies in no interval (Spark orders it above every number, so
        # ``NaN >= min`` alone would hold). Never NULL, as the Column path's condition.
        outside = f"(isnan({column}) OR NOT ({within}))" if family == "float" else f"NOT ({within})"
        return f"{column} IS NOT NULL AND {outside}"

    def describe_pass(self) -> str:
        return f"all values in range ({self._bounds_text()})"

    def describe_failure(self, failed: int) -> str:
        return f"{plural(failed, 'value')} out of range ({self._bounds_text()})"


class RegexCheck(_LabelledCheck):
    """The string column matches ``pattern`` somewhere (``rlike``). NULLs fail, unless
    ``null_is_valid`` (which leaves NULLs out)."""

    capabilities = frozenset({Capability.ROW})
    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Column matched against the pattern; a column of another type is matched as its text",
        ),
        "pattern": Param(
            STRING, required=True,
            description="Java regex the value must match somewhere; anchor it with ^...$ to match the whole value",
        ),
        "null_is_valid": Param(BOOL, description="When true, a NULL passes instead of failing (default false)"),
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        compile_pattern(params["pattern"])

    def render_code(self) -> str:
        return render_code(self.rule_type, self.params["column"], self.params["pattern"])

    def violation_text(self, df: DataFrame) -> str | None:
        """:meth:`violation` as SQL text, for a string column (one Column, not eight)."""
        name = self.params["column"]
        sql_column = identifier(df, name)
        if sql_column is None or type_family(column_type(df, name)) != "string":
            return None
        found = f"{sql_column} RLIKE {string_text(end_anchored(self.params['pattern']))}"
        return f"NOT ({found})" if self.params.get("null_is_valid", False) else f"NOT ifnull({found}, false)"

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        condition = self.violation_text(df)
        if condition is not None:
            return F.expr(condition)
        name, pattern = self.params["column"], end_anchored(self.params["pattern"])
        data_type = column_type(df, name)
        text = text_of(column_of(df, name), data_type)
        if self.params.get("null_is_valid", False):
            # NULL only for a NULL value, which then passes.
            return F.call_function("not", matches(text, pattern))
        return not_true(matches(text, pattern))

    def describe_pass(self) -> str:
        return "all present values match" if self.params.get("null_is_valid") else "all values match"

    def describe_failure(self, failed: int) -> str:
        verb = "does" if failed == 1 else "do"
        nulls = "" if self.params.get("null_is_valid") else " (NULL counts as not matching)"
        return f"{plural(failed, 'value')} {verb} not match{nulls}"

"""Sample rows for failed row-level rules: up to N offending rows per rule, in one job.

Each offending row is tagged with the index of every failed rule it breaks; the tags are
exploded, numbered per rule with a window, and the first N per rule are collected. One
action covers the whole block, however many rules failed, and only the samples (bounded by
N times the number of failed rules) reach the driver.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Sequence

from cola_core._columns import quote
from cola_core._format import json_safe
from cola_core._spark_errors import is_data_error
from cola_core.checks.base import BaseCheck
from cola_core.errors import ColaError
from cola_core.planner import prepare_all
from cola_core.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["attach_samples", "checked_samples"]

_RULE = "__cola_rule"
_ORDER = "__cola_order"
_RANK = "__cola_rank"


def checked_samples(samples: Any) -> int:
    """``samples`` as given, when it is a whole number >= 0; a ColaError otherwise."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
        raise ColaError(f"samples must be a whole number >= 0, got {samples!r}")
    return samples


def _collectable(column: Column, data_type: DataType, name: str | None = None) -> Column:
    """``column`` in a form PySpark can collect, and ``json_safe`` can write.

    PySpark cannot bring year-month or calendar intervals back to Python
    (``NOT_IMPLEMENTED: YearMonthIntervalType.fromInternal``), so they are rendered here:
    a year-month interval as an ISO-8601 duration (``P1Y2M``, ``-P0Y3M``), a calendar
    interval as Spark's own text (``1 months 2 days 3 seconds``). Other columns are left
    as they are, nested types only rebuilt when something inside them needs it.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType, YearMonthIntervalType

    if not _needs_rendering(data_type):
        converted = column
    elif isinstance(data_type, YearMonthIntervalType):
        # Widened first: EXTRACT(YEAR ...) refuses an INTERVAL MONTH.
        whole = column.cast("interval year to month")
        years, months = F.extract(F.lit("YEAR"), whole), F.extract(F.lit("MONTH"), whole)
        negative = (years < 0) | (months < 0)
        converted = F.concat(
            F.when(negative, F.lit("-")).otherwise(F.lit("")),
            F.lit("P"), F.abs(years).cast("string"), F.lit("Y"), F.abs(months).cast("string"), F.lit("M"),
        )
    elif isinstance(data_type, ArrayType):
        converted = F.transform(column, lambda item: _collectable(item, data_type.elementType))
    elif isinstance(data_type, MapType):
        keyed = F.transform_keys(column, lambda key, _: _collectable(key, data_type.keyType))
        converted = F.transform_values(keyed, lambda _, item: _collectable(item, data_type.valueType))
    elif isinstance(data_type, StructType):
        fields = [_collectable(column.getField(f.name), f.dataType, f.name) for f in data_type.fields]
        converted = F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*fields))
    else:  # a calendar interval
        converted = column.cast("string")
    return converted if name is None else converted.alias(name)


def _needs_rendering(data_type: DataType) -> bool:
    """Whether ``data_type`` holds a type that PySpark cannot collect."""
    from pyspark.sql.types import ArrayType, CalendarIntervalType, MapType, StructType, YearMonthIntervalType

    if isinstance(data_type, (YearMonthIntervalType, CalendarIntervalType)):
        return True
    if isinstance(data_type, ArrayType):
        return _needs_rendering(data_type.elementType)
    if isinstance(data_type, MapType):
        return _needs_rendering(data_type.keyType) or _needs_rendering(data_type.valueType)
    if isinstance(data_type, StructType):
        return any(_needs_rendering(f.dataType) for f in data_type.fields)
    return False


def attach_samples(
    df: DataFrame, checks: Sequence[BaseCheck], results: list[CheckResult], samples: int
) -> list[CheckResult]:
    """Put up to ``samples`` offending rows on each failed (or warned) row-level result.

    A rule Spark could not evaluate on the data fails the samples job too; then each rule's
    samples are collected alone, and that rule gets none (its message already says why).
    """
    failing = [
        index
        for index, (check, result) in enumerate(zip(checks, results))
        if samples and check.is_row_level and result.severity != "pass"
    ]
    if not failing:
        return results
    try:
        by_rule = _collect(df, checks, failing, samples)
    except Exception as error:
        if not is_data_error(error):
            raise
        by_rule = {}
        for index in failing:
            try:
                by_rule.update(_collect(df, checks, [index], samples))
            except Exception as alone:
                if not is_data_error(alone):
                    raise
    return [
        dataclasses.replace(result, samples=by_rule[index]) if index in by_rule else result
        for index, result in enumerate(results)
    ]


def _collect(
    df: DataFrame, checks: Sequence[BaseCheck], failing: list[int], samples: int
) -> dict[int, list[dict[str, Any]]]:
    """One job: up to ``samples`` offending rows of each rule in ``failing``, by rule index."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    columns = [F.col(quote(name)) for name in df.columns]
    prepared = prepare_all(df, [checks[i] for i in failing])
    tags = [F.when(checks[index].any_violation(prepared), F.lit(index)) for index in failing]
    # Window predicates (unique) and a generator cannot share one projection: tag, then explode.
    tagged = prepared.select(
        *columns,
        F.monotonically_increasing_id().alias(_ORDER),
        F.array_compact(F.array(*tags)).alias(_RULE),
    ).select(*columns, _ORDER, F.explode(_RULE).alias(_RULE))
    ranked = tagged.withColumn(_RANK, F.row_number().over(Window.partitionBy(_RULE).orderBy(_ORDER)))
    readable = [_collectable(F.col(quote(f.name)), f.dataType, f.name) for f in df.schema.fields]
    picked = ranked.where(F.col(_RANK) <= samples).select(_RULE, _ORDER, *readable).collect()

    by_rule: dict[int, list[dict[str, Any]]] = {index: [] for index in failing}
    for row in sorted(picked, key=lambda r: (r[_RULE], r[_ORDER])):
        data = row.asDict(recursive=True)
        by_rule[data.pop(_RULE)].append(json_safe({k: v for k, v in data.items() if k != _ORDER}))
    return by_rule

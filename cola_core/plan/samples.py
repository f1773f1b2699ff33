"""Sample rows for failed row-level rules: up to N offending rows per rule, in one job.

Each offending row is tagged with the index of every failed rule it breaks; the tags are
exploded, numbered per rule with a window, and the first N per rule are collected. One
action covers the whole block, however many rules failed, and only the samples (bounded by
N times the number of failed rules) reach the driver.
"""

from __future__ import annotations

import dataclasses
import json
import re
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from cola_core.checks.base import BaseCheck
from cola_core.common.columns import quote, shared_columns
from cola_core.common.formatting import _json_key, cut_texts, json_safe
from cola_core.common.spark_errors import is_evaluation_failure
from cola_core.common.spark_versions import is_variant
from cola_core.language.result import CheckResult
from cola_core.plan.planner import prepare_all
from cola_core.plan.preflight import read_inputs

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["SAMPLE_TEXT_CHARS", "attach_samples"]

# The characters of each text in a sample row (a value of the data, at any depth): a longer one
# is cut, ending with "… [cut: N characters]", so a column of long texts cannot swell a result.
SAMPLE_TEXT_CHARS = 1_000

# A variant nested deeper than this is given as its JSON text, not as the value it holds:
# the parsed value would only be rebuilt, written and read back by recursive code.
_VARIANT_DEPTH = 100
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _collectable(column: Column, data_type: DataType, name: str | None = None) -> Column:
    """``column`` in a form PySpark can collect, and ``json_safe`` can write.

    PySpark cannot bring year-month or calendar intervals back to Python
    (``NOT_IMPLEMENTED: YearMonthIntervalType.fromInternal``), so they are rendered here:
    a year-month interval as an ISO-8601 duration (``P1Y2M``, ``-P0Y3M``), a calendar
    interval as Spark's own text (``1 months 2 days 3 seconds``). Two more forms break on
    the Python side, so Spark renders them too, and ``_restored`` puts them back together:

    - a map whose keys hold an array (``map(array(1), 1)``) becomes Python dict keys that
      are lists (``TypeError: unhashable type: 'list'`` inside ``collect``): it is collected
      as its entries (``map_entries``);
    - a variant is decoded by PySpark's ``VariantVal.toJson``, which recurses once per level
      (a variant 500 deep is a ``RecursionError``): Spark's ``to_json`` writes it instead.

    Other columns are left as they are, nested types only rebuilt when something inside them
    needs it.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType, YearMonthIntervalType

    if not _needs_rendering(data_type):
        converted = column
    elif is_variant(data_type):
        converted = F.to_json(column)
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
        converted = column
        if _needs_rendering(data_type.keyType):
            converted = F.transform_keys(converted, lambda key, _: _collectable(key, data_type.keyType))
        if _needs_rendering(data_type.valueType):
            converted = F.transform_values(converted, lambda _, item: _collectable(item, data_type.valueType))
        if _holds_array(data_type.keyType):
            converted = F.map_entries(converted)
    elif isinstance(data_type, StructType):
        fields = [_collectable(column.getField(f.name), f.dataType, f.name) for f in data_type.fields]
        converted = F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*fields))
    else:  # a calendar interval
        converted = column.cast("string")
    return converted if name is None else converted.alias(name)


def _needs_rendering(data_type: DataType) -> bool:
    """Whether ``data_type`` holds a type that PySpark cannot collect, or not safely."""
    from pyspark.sql.types import (
        ArrayType,
        CalendarIntervalType,
        MapType,
        StructType,
        YearMonthIntervalType,
    )

    if isinstance(data_type, (YearMonthIntervalType, CalendarIntervalType)) or is_variant(data_type):
        return True
    if isinstance(data_type, ArrayType):
        return _needs_rendering(data_type.elementType)
    if isinstance(data_type, MapType):
        return (
            _holds_array(data_type.keyType)
            or _needs_rendering(data_type.keyType)
            or _needs_rendering(data_type.valueType)
        )
    if isinstance(data_type, StructType):
        return any(_needs_rendering(f.dataType) for f in data_type.fields)
    return False


def _holds_array(data_type: DataType) -> bool:
    """Whether a value of ``data_type`` collects as, or with, a Python list (unhashable)."""
    from pyspark.sql.types import ArrayType, StructType

    if isinstance(data_type, ArrayType):
        return True
    if isinstance(data_type, StructType):
        return any(_holds_array(f.dataType) for f in data_type.fields)
    return False  # a map is never a map key, and the other types collect as hashable values


def _restored(value: Any, data_type: DataType) -> Any:
    """A value that ``_collectable`` rendered, as ``json_safe`` takes it: a map collected as
    entries is a dict again (its keys as their JSON text, the way ``json_safe`` writes a
    struct key), and a variant is the JSON value it holds, or its JSON text when it nests
    deeper than ``_VARIANT_DEPTH``."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if value is None or not _needs_rendering(data_type):
        return value
    if is_variant(data_type):
        return _variant_value(value)
    if isinstance(data_type, ArrayType):
        return [_restored(item, data_type.elementType) for item in value]
    if isinstance(data_type, MapType):
        pairs = [(entry[0], entry[1]) for entry in value] if _holds_array(data_type.keyType) else value.items()
        return {
            _json_key(_restored(key, data_type.keyType)): _restored(item, data_type.valueType)
            for key, item in pairs
        }
    if isinstance(data_type, StructType):
        return {f.name: _restored(value[i], f.dataType) for i, f in enumerate(data_type.fields)}
    return value


def _variant_value(text: str) -> Any:
    """The JSON value a variant's text holds; the text itself when it nests too deep."""
    depth = deepest = 0
    for char in _JSON_STRING.sub("", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    if deepest > _VARIANT_DEPTH:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def attach_samples(
    df: DataFrame, checks: Sequence[BaseCheck], results: list[CheckResult], samples: int
) -> list[CheckResult]:
    """Put up to ``samples`` offending rows on each failed (or warned) row-level result.

    A rule whose values Spark fails on fails the samples job too; then each rule's
    samples are collected alone, and that rule gets none (its message already says why).
    """
    # results are run_block's for these checks, one per check in order: the lengths are equal.
    failing = [
        index
        for index, (check, result) in enumerate(zip(checks, results, strict=True))
        if samples and check.is_row_level and result.severity != "pass"
    ]
    if not failing:
        return results
    checks = read_inputs(df, checks)
    try:
        by_rule = _collect(df, checks, failing, samples)
    except Exception as error:
        if not is_evaluation_failure(error):
            raise
        by_rule = {}
        for index in failing:
            try:
                by_rule.update(_collect(df, checks, [index], samples))
            except Exception as alone:
                if not is_evaluation_failure(alone):
                    raise
    return [
        dataclasses.replace(result, samples=by_rule[index]) if index in by_rule else result
        for index, result in enumerate(results)
    ]


class _Shown(NamedTuple):
    """A value a rule shows beside its sampled rows (``BaseCheck.sample_values``)."""

    rule: int
    label: str
    alias: str
    value: Column


def _shown_values(
    df: DataFrame, prepared: DataFrame, checks: Sequence[BaseCheck], failing: list[int], fresh: str
) -> list[_Shown]:
    """The failing rules' sample values, each labelled with a name no column of the data has
    (a leading ``_`` is added until it is free)."""
    shown: list[_Shown] = []
    for index in failing:
        for label, value in checks[index].sample_values(prepared):
            while label in df.columns:
                label = f"_{label}"
            shown.append(_Shown(index, label, f"__cola_shown_{fresh}_{len(shown)}", value))
    return shown


def _collect(
    df: DataFrame, checks: Sequence[BaseCheck], failing: list[int], samples: int
) -> dict[int, list[dict[str, Any]]]:
    """One job: up to ``samples`` offending rows of each rule in ``failing``, by rule index."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # Fresh names for the helper columns, so that no column of the data can collide with them.
    fresh = uuid.uuid4().hex
    rule, order, rank = f"__cola_rule_{fresh}", f"__cola_order_{fresh}", f"__cola_rank_{fresh}"
    columns = [F.col(quote(name)) for name in df.columns]
    prepared = prepare_all(df, [checks[i] for i in failing])
    with shared_columns():
        tags = [F.when(checks[index].any_violation(prepared), F.lit(index)) for index in failing]
    shown = _shown_values(df, prepared, checks, failing, fresh)
    # Window predicates (unique) and a generator cannot share one projection: tag, then explode.
    tagged = prepared.select(
        *columns,
        *[value.value.alias(value.alias) for value in shown],
        F.monotonically_increasing_id().alias(order),
        F.array_compact(F.array(*tags)).alias(rule),
    ).select(*columns, *[value.alias for value in shown], order, F.explode(rule).alias(rule))
    ranked = tagged.withColumn(rank, F.row_number().over(Window.partitionBy(rule).orderBy(order)))
    fields = [*df.schema.fields]
    shown_fields = tagged.schema.fields[len(fields) : len(fields) + len(shown)]
    readable = [_collectable(F.col(quote(f.name)), f.dataType, f.name) for f in [*fields, *shown_fields]]
    picked = ranked.where(F.col(rank) <= samples).select(rule, order, *readable).collect()

    by_rule: dict[int, list[dict[str, Any]]] = {index: [] for index in failing}
    # By position: the rule and the order come first, then the data's columns, then the shown values.
    for row in sorted(picked, key=lambda r: (r[0], r[1])):
        sample = {f.name: _restored(row[2 + i], f.dataType) for i, f in enumerate(fields)}
        for at, (value, field) in enumerate(zip(shown, shown_fields, strict=True), start=2 + len(fields)):
            if value.rule == row[0]:
                sample[value.label] = _restored(row[at], field.dataType)
        by_rule[row[0]].append(cut_texts(json_safe(sample), SAMPLE_TEXT_CHARS))
    return by_rule

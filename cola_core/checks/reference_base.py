"""What every rule over a reference shares: the reference's spec, how a column of the data and a
column of the reference are compared (one explicit type on both sides), and the key lookup that
joins the data with the reference.

The reference is an input spec, the same as the CLI's source (``{"path": ..., "format": ...}``,
``{"table": ...}`` or ``{"query": ...}``). It is validated in pure Python when the rule is
parsed; the planner reads it when the block runs and hands it to the check
(``BaseCheck.references`` and ``with_inputs``), so the checks never read storage. The rules
themselves are ``foreign_key`` and ``reconcile`` (:mod:`cola_core.checks.reference`) and
``reference_match`` (:mod:`cola_core.checks.reference_match`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.checks.conditions import column_type, type_family
from cola_core.common.columns import column_of, try_cast
from cola_core.common.spark_errors import is_unreachable
from cola_core.common.spark_versions import is_variant
from cola_core.errors import ColaRuleError, ColaSourceError
from cola_core.storage.specs import SourceSpec, parse_source

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["ReferenceCheck", "comparison_type", "is_numeric", "parse_reference"]

# Decimal digits left of the point that each integral type can hold.
_INTEGRAL_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}


def parse_reference(value: Any) -> SourceSpec:
    """A rule's ``reference`` as a source spec; a malformed one is a rule error."""
    try:
        return parse_source(value)
    except ColaSourceError as error:
        raise ColaRuleError(f"'reference' is not a valid input: {error}") from error


def is_numeric(data_type: DataType) -> bool:
    """Whether ``data_type`` holds numbers: integral, decimal or floating point."""
    return type_family(data_type) in ("numeric", "float")


def _uncomparable(data_type: DataType) -> str | None:
    """Why Spark cannot test values of ``data_type`` for equality (a map or a variant, at any
    depth), or None when it can."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, MapType):
        return "it holds a map, which Spark cannot compare"
    if is_variant(data_type):
        return "it holds a variant, which Spark cannot compare"
    if isinstance(data_type, ArrayType):
        return _uncomparable(data_type.elementType)
    if isinstance(data_type, StructType):
        return next((why for f in data_type.fields if (why := _uncomparable(f.dataType))), None)
    return None


def _is_nested(data_type: DataType) -> bool:
    from pyspark.sql.types import ArrayType, MapType, StructType

    return isinstance(data_type, (ArrayType, MapType, StructType))


def comparison_type(data_type: DataType, reference_type: DataType) -> str | None:
    """The type a data value and a reference value are compared as; None when they already
    match (nullability aside, which equality ignores).

    Spark would widen most pairs itself, but under ANSI mode it compares a string with a
    number by casting the string, and a non-numeric string then fails the whole job. Both
    sides are cast to one explicit type with ``try_cast``: a value that does not fit it (a
    decimal with more whole digits than the other side can hold) is NULL, and so equals
    nothing, which is true of it. Decimals keep the larger scale, so no digit is rounded
    away. One explicit type also keeps distinct reference keys distinct after the cast, so
    the join can never match a row twice.

    Raises:
        ValueError: nested types (arrays, structs) that differ beyond nullability; their
            text would compare ``["a, b"]`` equal to ``["a", "b"]``.
    """
    from pyspark.sql.types import DecimalType, IntegralType

    if data_type == reference_type or data_type.simpleString() == reference_type.simpleString():
        return None
    if _is_nested(data_type) or _is_nested(reference_type):
        raise ValueError(f"{data_type.simpleString()} against {reference_type.simpleString()}")
    families = {type_family(data_type), type_family(reference_type)}
    if is_numeric(data_type) and is_numeric(reference_type):
        if "float" in families:
            return "double"
        if isinstance(data_type, IntegralType) and isinstance(reference_type, IntegralType):
            return "bigint"
        digits = [
            (t.precision - t.scale, t.scale) if isinstance(t, DecimalType) else (_INTEGRAL_DIGITS[t.simpleString()], 0)
            for t in (data_type, reference_type)
        ]
        scale = max(right for _, right in digits)
        whole = min(max(left for left, _ in digits), 38 - scale)
        return f"decimal({whole + scale},{scale})"
    if families <= {"date", "timestamp"}:
        return "timestamp"
    return "string"


class ReferenceCheck(BaseCheck):
    """A rule over the data and its ``reference``, which the planner reads for it."""

    scopes_itself = True

    def references(self) -> Mapping[str, SourceSpec]:
        return {"reference": parse_reference(self.params["reference"])}

    @property
    def reference(self) -> DataFrame:
        """The reference as the planner read it (lazy)."""
        return self.input("reference")

    def reference_type(self, reference: DataFrame, name: str) -> DataType:
        """The type of the reference's column ``name``; a missing one is a rule error."""
        from pyspark.errors import PySparkException

        try:
            return column_type(reference, name)
        except PySparkException as error:
            if is_unreachable(error):
                raise
            described = parse_reference(self.params["reference"]).describe()
            has = ", ".join(reference.columns)
            reason = f"reference column {name!r} does not exist in the {described}; it has {has}"
            raise self.rule_error(reason) from error

    def compared_as(self, df: DataFrame, column: str, reference_column: str) -> str | None:
        """The type ``column`` of the data and ``reference_column`` of the reference are
        compared as (``comparison_type``); a rule error when Spark cannot compare them."""
        data_type = column_type(df, column)
        reference_type = self.reference_type(self.reference, reference_column)
        for side, name, checked in (("", column, data_type), ("reference column ", reference_column, reference_type)):
            why = _uncomparable(checked)
            if why is not None:
                raise self.rule_error(
                    f"cannot compare {side}{name} ({checked.simpleString()}): {why}; compare its parts as "
                    "separate columns, or cast it to a string in a query reference first"
                )
        try:
            return comparison_type(data_type, reference_type)
        except ValueError as error:
            raise self.rule_error(
                f"cannot compare {column} with reference column {reference_column}: {error}; give both sides "
                "the same type (a query reference can cast its side)"
            ) from None

    def key_lookup(
        self, df: DataFrame, keys: Sequence[str], reference_keys: Sequence[str], marker: str
    ) -> tuple[list[str], list[Column], Column, Column]:
        """How the data's ``keys`` meet the reference's ``reference_keys``, compared as one type.

        Returns:
            The aliases of the reference's key columns (``<marker>_key<n>``), those columns as
            selected from the reference, the join condition with the data, and the condition
            that none of the reference's keys is NULL (such a row names nothing).
        """
        from pyspark.sql import functions as F

        aliases, selected, matches = [], [], []
        for number, (column, reference_column) in enumerate(zip(keys, reference_keys, strict=True)):
            alias = f"{marker}_key{number}"
            as_type = self.compared_as(df, column, reference_column)
            data_key, reference_key = column_of(df, column), column_of(self.reference, reference_column)
            if as_type is not None:
                data_key, reference_key = try_cast(data_key, as_type), try_cast(reference_key, as_type)
            aliases.append(alias)
            selected.append(reference_key.alias(alias))
            matches.append(data_key == F.col(alias))
        complete = reduce(lambda a, b: a & b, [F.col(alias).isNotNull() for alias in aliases])
        return aliases, selected, reduce(lambda a, b: a & b, matches), complete

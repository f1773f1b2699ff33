"""``reference_match``: each row held against the reference's row with the same key, column by
column (seed 004's reference_match, tolerance_match and cross_system_match, as one rule).

``prepare`` left-joins the data with the reference grouped by its key: one row per reference
key, with the number of reference rows that carry it and, when that number is one, the values
to compare. A key the reference holds twice therefore never duplicates a data row; the rows
that meet it break the rule with ``reference_match(duplicate_key)``, since nothing says which
reference row they should match. Like ``foreign_key``'s lookup, the join joins the block's
single scan and the split, and Spark broadcasts a small reference.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import reduce
from typing import TYPE_CHECKING, Any

from cola_core._columns import column_of
from cola_core._format import plural, render_code
from cola_core._values import is_finite_number
from cola_core.checks.base import Capability
from cola_core.checks.reference import _comparison_type, _parse_reference, _ReferenceCheck
from cola_core.checks.validity import column_type, type_family
from cola_core.errors import ColaRuleError
from cola_core.params import MAPPING, STRING, STRING_LIST, Param
from cola_core.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["MISSING_POLICIES", "ReferenceMatchCheck"]

MISSING_POLICIES = ("fail", "ignore")
# The codes of a row that could not be compared; a compared column with one of these names
# would share its code, so such a rule must declare a code of its own.
_KEY_CODES = ("missing", "duplicate_key")
_DIFFERENCES = ("absolute_difference", "relative_difference")
# Float and double values carry binary rounding (1.1 - 1.0 is 0.10000000000000009); a gap
# within a few units in the last place of the values is within the tolerance, so that a
# boundary written in decimal stays inclusive. Decimal and integral columns compare exactly.
_ROUNDING = 4 * 2.0**-53


def _names(params: Mapping[str, Any], own: str, other: str) -> list[str]:
    return list(params.get(other, params[own]))


def _check_lists(params: Mapping[str, Any]) -> None:
    keys, columns = list(params["keys"]), list(params["columns"])
    for own, other, what in (("keys", "reference_keys", "key"), ("columns", "reference_columns", "compared column")):
        names = list(params[own])
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ColaRuleError(f"'{own}' names {', '.join(repeated)} more than once; name each {what} once")
        theirs = _names(params, own, other)
        if len(theirs) != len(names):
            raise ColaRuleError(
                f"'{other}' names {plural(len(theirs), 'column')} for {plural(len(names), what)} "
                f"({', '.join(names)}); give one reference column per {what}, in the same order"
            )
    both = [column for column in columns if column in keys]
    if both:
        raise ColaRuleError(
            f"{', '.join(both)} is both a key and a compared column; a key always equals itself in the join, "
            "so list it in 'keys' only"
        )


def _check_differences(params: Mapping[str, Any]) -> None:
    columns = list(params["columns"])
    for key in _DIFFERENCES:
        for column, limit in params.get(key, {}).items():
            if column not in columns:
                raise ColaRuleError(
                    f"'{key}' names {column!r}, which is not a compared column; 'columns' is {', '.join(columns)}"
                )
            if (
                isinstance(limit, bool)
                or not isinstance(limit, (int, float))
                or not is_finite_number(limit)
                or limit < 0
            ):
                unit = " (a percentage of the reference value)" if key == "relative_difference" else ""
                raise ColaRuleError(f"'{key}.{column}' must be a number >= 0{unit}, got {limit!r}")


class ReferenceMatchCheck(_ReferenceCheck):
    """Rows whose key (``keys``) is in the reference must agree with it in every compared
    column (``columns``); ``reference_keys`` and ``reference_columns`` default to the same
    names.

    NULL equals NULL. Two numbers also agree when they differ by no more than the column's
    ``absolute_difference``, or by no more than its ``relative_difference`` percent of the
    reference value (both inclusive). A row whose key is not in the reference breaks the rule
    when ``missing`` is ``fail`` (the default); a key with a NULL in it names nothing and is
    neither compared nor missing (pair the rule with ``not_null``).

    In the split a row carries one code per column that differs (``reference_match(amount)``),
    ``reference_match(missing)`` for a key the reference lacks and
    ``reference_match(duplicate_key)`` for a key the reference holds more than once. The
    result's ``failed_count`` and ``metric_value`` are the offending rows; the message breaks
    them down by code.
    """

    capabilities = frozenset({Capability.ROW, Capability.AGGREGATE})
    params_spec = {
        "keys": Param(STRING_LIST, required=True),
        "reference_keys": Param(STRING_LIST),
        "columns": Param(STRING_LIST, required=True),
        "reference_columns": Param(STRING_LIST),
        "reference": Param(MAPPING, required=True),
        "absolute_difference": Param(MAPPING),
        "relative_difference": Param(MAPPING),
        "missing": Param(STRING),
    }

    def __init__(self, params: Mapping[str, Any] | None = None, **names: Any) -> None:
        declared = names.get("code")
        super().__init__(params, **names)
        self._declared_code = declared
        if declared is None:
            clashing = [column for column in self.params["columns"] if column in _KEY_CODES]
            if clashing:
                raise ColaRuleError(
                    f"compares a column named {clashing[0]!r}, whose code {self.column_code(clashing[0])} is the "
                    f"code of a key the reference {'lacks' if clashing[0] == 'missing' else 'holds twice'}; "
                    "declare a 'code' for the rule"
                )
        # Fresh for each check: no column of the data, and no other rule, can collide with it.
        self.marker = f"__cola_match_{uuid.uuid4().hex}"

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        _parse_reference(params["reference"])
        _check_lists(params)
        _check_differences(params)
        missing = params.get("missing", "fail")
        if missing not in MISSING_POLICIES:
            raise ColaRuleError(f"'missing' must be 'fail' or 'ignore', got {missing!r}")

    # -- what it compares ----------------------------------------------------------------

    @property
    def keys(self) -> list[str]:
        return list(self.params["keys"])

    @property
    def reference_keys(self) -> list[str]:
        return _names(self.params, "keys", "reference_keys")

    @property
    def compared(self) -> list[str]:
        return list(self.params["columns"])

    @property
    def reference_columns(self) -> list[str]:
        return _names(self.params, "columns", "reference_columns")

    @property
    def fails_missing(self) -> bool:
        return bool(self.params.get("missing", "fail") == "fail")

    def column_code(self, part: str) -> str:
        """The code of a row that breaks the rule in ``part`` (a column, ``missing`` or
        ``duplicate_key``); a declared code stands for all of them, as with ``not_null``."""
        return self._declared_code or render_code(self.rule_type, part)

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        return [*self.keys, *self.compared]

    # -- the lookup ----------------------------------------------------------------------

    def _count_name(self) -> str:
        return f"{self.marker}_rows"

    def _value_name(self, number: int) -> str:
        return f"{self.marker}_value{number}"

    def _compared_type(self, df: DataFrame, column: str, reference_type: DataType) -> str | None:
        """The type a compared column and its reference column are compared as (None: their
        own); a rule error when they cannot be compared, or carry a difference that needs numbers."""
        from pyspark.sql.types import MapType

        data_type = column_type(df, column)
        if isinstance(data_type, MapType) or isinstance(reference_type, MapType):
            raise self.rule_error(
                f"cannot compare {column}: Spark cannot compare map values; compare its keys "
                "and values as separate columns, or cast it to a string first"
            )
        as_type = _comparison_type(data_type, reference_type)
        limits = [key for key in _DIFFERENCES if column in self.params.get(key, {})]
        families = {type_family(data_type), type_family(reference_type)}
        if limits and not families <= {"numeric", "float"}:
            sides = f"{data_type.simpleString()} against {reference_type.simpleString()}"
            raise self.rule_error(f"'{limits[0]}' needs numbers, but {column} is {sides}; cast it first")
        return as_type

    def prepare(self, df: DataFrame) -> DataFrame:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        reference = self.reference
        aliases, key_values, matches = [], [], []
        for number, (key, reference_key) in enumerate(zip(self.keys, self.reference_keys, strict=True)):
            alias = f"{self.marker}_key{number}"
            as_type = _comparison_type(column_type(df, key), self.reference_type(reference, reference_key))
            data_key, reference_value = column_of(df, key), column_of(reference, reference_key)
            if as_type is not None:
                data_key, reference_value = data_key.cast(as_type), reference_value.cast(as_type)
            aliases.append(alias)
            key_values.append(reference_value.alias(alias))
            matches.append(data_key == F.col(alias))
        values = []
        for number, (column, reference_column) in enumerate(zip(self.compared, self.reference_columns, strict=True)):
            reference_value = column_of(reference, reference_column)
            as_type = self._compared_type(df, column, self.reference_type(reference, reference_column))
            values.append((reference_value if as_type is None else reference_value.cast(as_type)).alias(f"v{number}"))
        # NULL never equals anything, so reference rows with a NULL in the key can go first.
        complete = reduce(lambda a, b: a & b, [F.col(alias).isNotNull() for alias in aliases])
        # One row per key, with the number of reference rows that hold it; a key held twice
        # keeps no values, so its rows are not compared. A window rather than a groupBy: an
        # aggregate of text values is a sort-based aggregate, while the window's sort by key
        # is the one a sort-merge join with the data needs anyway, so Spark does it once.
        # One window spec for both, so one sort: with an ordering, count needs the whole frame.
        per_key = Window.partitionBy(*aliases).orderBy(*aliases)
        whole_key = per_key.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
        rank = f"{self.marker}_rank"
        rows = F.col(self._count_name())
        by_key = (
            reference.select(*key_values, *values)
            .where(complete)
            .select(
                *aliases,
                *[f"v{number}" for number in range(len(values))],
                F.count(F.lit(1)).over(whole_key).alias(self._count_name()),
                F.row_number().over(per_key).alias(rank),
            )
            .where(F.col(rank) == 1)
            .select(
                *aliases,
                rows,
                *[F.when(rows == 1, F.col(f"v{n}")).alias(self._value_name(n)) for n in range(len(values))],
            )
        )
        return df.join(by_key, on=reduce(lambda a, b: a & b, matches), how="left").drop(*aliases)

    # -- the predicates ------------------------------------------------------------------

    def _agrees(self, df: DataFrame, number: int, column: str) -> Column:
        """TRUE where the row's ``column`` agrees with the reference value (never NULL)."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import DecimalType, IntegralType

        reference = F.col(self._value_name(number))
        as_type = df.schema[self._value_name(number)].dataType
        data = column_of(df, column)
        if column_type(df, column) != as_type:
            data = data.cast(as_type)
        same = data.eqNullSafe(reference)
        absolute = self.params.get("absolute_difference", {}).get(column)
        relative = self.params.get("relative_difference", {}).get(column)
        if absolute is None and relative is None:
            return same
        exact = isinstance(as_type, (DecimalType, IntegralType))
        if isinstance(as_type, IntegralType):
            # Integers subtract as decimals: a bigint difference can overflow, and fail the job.
            data, reference = data.cast("decimal(20,0)"), reference.cast("decimal(20,0)")
        # try_subtract is NULL where a decimal difference overflows: it is beyond any tolerance.
        gap = F.abs(F.try_subtract(data, reference))
        rounding = _ROUNDING * (F.abs(data.cast("double")) + F.abs(reference.cast("double")))
        within = F.lit(False)
        if not exact:
            # NaN and the infinities agree only with themselves (``same``): any gap they leave
            # is NaN or infinite, which Spark would let pass a NaN or infinite limit.
            infinity = F.lit(float("inf"))
            gap = F.when(F.abs(data) < infinity, F.when(F.abs(reference) < infinity, gap))
        if absolute is not None:
            if exact:
                within = within | (gap <= F.lit(Decimal(repr(absolute))))
            else:
                within = within | (gap <= F.lit(float(absolute)) + rounding)
        if relative is not None:
            share = F.abs(reference.cast("double")) * F.lit(relative / 100.0)
            approximate = gap.cast("double") <= share + rounding
            if exact:
                # gap * 100 <= relative * |reference|, in decimals; doubles only where that overflows.
                product = F.try_multiply(F.lit(Decimal(repr(relative))), F.abs(reference))
                exact_share = F.try_multiply(gap, F.lit(100)) <= product
                within = within | F.coalesce(exact_share, approximate)
            else:
                within = within | approximate
        return same | F.coalesce(within, F.lit(False))

    def _found(self) -> Column:
        from pyspark.sql import functions as F

        return F.col(self._count_name()) == 1

    def _complete_key(self, df: DataFrame) -> Column:
        return reduce(lambda a, b: a & b, [column_of(df, key).isNotNull() for key in self.keys])

    def _missing(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        return self._complete_key(df) & F.col(self._count_name()).isNull()

    def _duplicated(self) -> Column:
        from pyspark.sql import functions as F

        return F.ifnull(F.col(self._count_name()) > 1, F.lit(False))

    def _differs(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        found = F.ifnull(self._found(), F.lit(False))
        return [found & ~self._agrees(df, number, column) for number, column in enumerate(self.compared)]

    def violations(self, df: DataFrame) -> list[tuple[str, Column]]:
        differing = zip(self.compared, self._differs(df), strict=True)
        pairs = [(self.column_code(column), differs) for column, differs in differing]
        if self.fails_missing:
            pairs.append((self.column_code("missing"), self._missing(df)))
        pairs.append((self.column_code("duplicate_key"), self._duplicated()))
        return pairs

    def sample_values(self, df: DataFrame) -> list[tuple[str, Column]]:
        """Beside each sampled row, the reference's values of the compared columns (NULL when
        the key is not in the reference, or is there more than once)."""
        from pyspark.sql import functions as F

        values = F.struct(*[F.col(self._value_name(n)).alias(c) for n, c in enumerate(self.compared)])
        return [("reference", F.when(self._found(), values))]

    # -- the measurement -----------------------------------------------------------------

    def aggregations(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        return [
            self.count_offending(df),
            self.count_rows(F.ifnull(self._found(), F.lit(False))),
            self.count_rows(self._missing(df)),
            self.count_rows(self._duplicated()),
            *[self.count_rows(differs) for differs in self._differs(df)],
        ]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        offending, compared, missing, duplicated, *differing = (int(value) for value in values)
        label = self.render_code()
        ignored = (
            f"; {plural(missing, 'row')} not in the reference, ignored" if missing and not self.fails_missing else ""
        )
        if not offending:
            message = f"{label}: every row found in the reference matches it ({compared} compared){ignored}"
            return CheckResult(self.rule_type, True, message, 0, 0)
        counts = [(column, count) for column, count in zip(self.compared, differing, strict=True)]
        if self.fails_missing:
            counts.append(("missing", missing))
        counts.append(("duplicate_key", duplicated))
        detail = ", ".join(f"{part}: {count}" for part, count in counts if count)
        verb = "does" if offending == 1 else "do"
        ambiguous = (
            f"; {plural(duplicated, 'row')} {'has a key' if duplicated == 1 else 'have keys'} the reference "
            "holds more than once, so nothing says which reference row to compare with"
            if duplicated
            else ""
        )
        message = (
            f"{label}: {plural(offending, 'row')} {verb} not match the reference ({detail}; "
            f"{compared} compared){ambiguous}{ignored}"
        )
        return CheckResult(self.rule_type, False, message, offending, offending)

"""``reference_match``: each row held against the reference's row with the same key, column by
column: a match against a reference, within a tolerance, across two systems, as one rule.

``prepare`` left-joins the data with the reference grouped by its key: one row per reference
key, with the number of reference rows that carry it and, when that number is one, the values
to compare. A key the reference holds twice therefore never duplicates a data row; the rows
that meet it break the rule with ``reference_match(duplicate_key)``, since nothing says which
reference row they should match. Like ``foreign_key``'s lookup, the join joins the block's
single scan and the split, and Spark broadcasts a small reference. When two numbers agree
within a column's ``absolute_difference`` or ``relative_difference`` is
:mod:`cola_core.checks.differences`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import Capability
from cola_core.checks.conditions import column_type, type_family
from cola_core.checks.differences import within_difference
from cola_core.checks.reference_base import ReferenceCheck, parse_reference
from cola_core.common.columns import column_of, try_cast
from cola_core.common.formatting import plural, render_code
from cola_core.common.values import is_finite_number
from cola_core.errors import ColaRuleError
from cola_core.language.params import MAPPING, STRING, STRING_LIST, Param
from cola_core.language.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["MISSING_POLICIES", "ReferenceMatchCheck"]

MISSING_POLICIES = ("fail", "ignore")
# The codes of a row that could not be compared; a compared column with one of these names
# would share its code, so such a rule must declare a code of its own.
_KEY_CODES = ("missing", "duplicate_key")
_DIFFERENCES = ("absolute_difference", "relative_difference")


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
    # Comparing a key with the reference's own key column says nothing: the join made them equal.
    reference_keys = _names(params, "keys", "reference_keys")
    reference_columns = _names(params, "columns", "reference_columns")
    both = [
        column
        for column, reference_column in zip(columns, reference_columns, strict=True)
        if column in keys and reference_keys[keys.index(column)] == reference_column
    ]
    if both:
        raise ColaRuleError(
            f"{', '.join(both)} is both a key and a compared column, against the same reference column; "
            "the join already made them equal, so list it in 'keys' only (or compare it with another reference column)"
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



class ReferenceMatchCheck(ReferenceCheck):
    """Each row agrees with the reference's row of the same key in every compared column.

    Rows whose key (``keys``) is in the reference must agree with it in every compared column
    (``columns``); ``reference_keys`` and ``reference_columns`` default to the same names.

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
        "keys": Param(
            STRING_LIST, required=True,
            description="Columns that find each row's counterpart in the reference",
        ),
        "reference_keys": Param(
            STRING_LIST,
            description="Reference's key columns, one per key in order (default: the same names)",
        ),
        "columns": Param(
            STRING_LIST, required=True,
            description="Columns compared with the reference row of the same key",
        ),
        "reference_columns": Param(
            STRING_LIST,
            description="Reference columns compared, one per compared column in order (default: the same names)",
        ),
        "reference": Param(
            MAPPING, required=True,
            description="What the rows are held against: {path, format, options}, {table} or {query}",
        ),
        "absolute_difference": Param(
            MAPPING,
            description="Per compared column, the largest gap at which two numbers still agree (inclusive)",
        ),
        "relative_difference": Param(
            MAPPING,
            description="Per compared column, the largest gap in percent of the reference value (inclusive)",
        ),
        "missing": Param(
            STRING,
            description="What a key the reference lacks does: fail (default) breaks the rule, ignore passes",
        ),
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
        parse_reference(params["reference"])
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
        return self._declared_code or render_code(self.rule_type, part) + self.code_suffix

    def row_codes(self) -> tuple[str, ...]:
        parts = [*self.compared, *(["missing"] if self.fails_missing else []), "duplicate_key"]
        return tuple(dict.fromkeys(self.column_code(part) for part in parts))

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        return [*self.keys, *self.compared]

    # -- the lookup ----------------------------------------------------------------------

    def _count_name(self) -> str:
        return f"{self.marker}_rows"

    def _value_name(self, number: int) -> str:
        return f"{self.marker}_value{number}"

    def _lost_name(self, number: int) -> str:
        """TRUE where the reference value did not fit the type it is compared as."""
        return f"{self.marker}_lost{number}"

    def _compared_type(self, df: DataFrame, column: str, reference_column: str) -> str | None:
        """The type a compared column and its reference column are compared as (None: their
        own). A float on either side of two numbers makes it float: the float side holds no
        more. A rule error when they cannot be compared, or carry a difference that needs numbers."""
        from pyspark.sql.types import FloatType

        as_type = self.compared_as(df, column, reference_column)
        data_type, reference_type = column_type(df, column), self.reference_type(self.reference, reference_column)
        families = {type_family(data_type), type_family(reference_type)}
        limits = [key for key in _DIFFERENCES if column in self.params.get(key, {})]
        if limits and not families <= {"numeric", "float"}:
            sides = f"{data_type.simpleString()} against {reference_type.simpleString()}"
            raise self.rule_error(f"'{limits[0]}' needs numbers, but {column} is {sides}; cast it first")
        either_float = isinstance(data_type, FloatType) or isinstance(reference_type, FloatType)
        if as_type is not None and either_float and families <= {"numeric", "float"}:
            return "float"
        return as_type

    def prepare(self, df: DataFrame) -> DataFrame:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        reference = self.reference
        aliases, key_values, matches, complete = self.key_lookup(df, self.keys, self.reference_keys, self.marker)
        values, lost = [], []
        for number, (column, reference_column) in enumerate(zip(self.compared, self.reference_columns, strict=True)):
            reference_value = column_of(reference, reference_column)
            as_type = self._compared_type(df, column, reference_column)
            if as_type is not None:
                cast = try_cast(reference_value, as_type)
                # A value the comparison type cannot hold equals nothing, not even a NULL.
                lost.append((number, reference_value.isNotNull() & cast.isNull()))
                reference_value = cast
            values.append(reference_value.alias(f"v{number}"))
        # NULL never equals anything, so reference rows with a NULL in the key go first.
        # One row per key, with the number of reference rows that hold it; a key held twice
        # keeps no values, so its rows are not compared. A window rather than a groupBy: an
        # aggregate of text values is a sort-based aggregate, while the window's sort by key
        # is the one a sort-merge join with the data needs anyway, so Spark does it once. One
        # window spec for both functions, so one sort; with an ordering, count needs the whole frame.
        per_key = Window.partitionBy(*aliases).orderBy(*aliases)
        whole_key = per_key.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
        rank, rows = f"{self.marker}_rank", F.col(self._count_name())
        carried = [*(f"v{number}" for number in range(len(values))), *(f"l{number}" for number, _ in lost)]
        by_key = (
            reference.select(*key_values, *values, *[flag.alias(f"l{number}") for number, flag in lost])
            .where(complete)
            .select(
                *aliases,
                *carried,
                F.count(F.lit(1)).over(whole_key).alias(self._count_name()),
                F.row_number().over(per_key).alias(rank),
            )
            .where(F.col(rank) == 1)
            .select(
                *aliases,
                rows,
                *[F.when(rows == 1, F.col(f"v{n}")).alias(self._value_name(n)) for n in range(len(values))],
                *[F.when(rows == 1, F.col(f"l{n}")).alias(self._lost_name(n)) for n, _ in lost],
            )
        )
        return df.join(by_key, on=matches, how="left").drop(*aliases)

    # -- the predicates ------------------------------------------------------------------

    def _agrees(self, df: DataFrame, number: int, column: str) -> Column:
        """TRUE where the row's ``column`` agrees with the reference value (never NULL)."""
        from pyspark.sql import functions as F

        reference = F.col(self._value_name(number))
        as_type = df.schema[self._value_name(number)].dataType
        data = column_of(df, column)
        lost = [F.ifnull(F.col(self._lost_name(number)), F.lit(False))] if self._lost_name(number) in df.columns else []
        if column_type(df, column).simpleString() != as_type.simpleString():
            cast = try_cast(data, as_type.simpleString())
            lost.append(data.isNotNull() & cast.isNull())
            data = cast
        agrees = data.eqNullSafe(reference)
        absolute = self.params.get("absolute_difference", {}).get(column)
        relative = self.params.get("relative_difference", {}).get(column)
        if absolute is not None or relative is not None:
            within = within_difference(data, reference, as_type, absolute, relative)
            agrees = agrees | F.ifnull(within, F.lit(False))
        for flag in lost:
            agrees = agrees & ~flag
        return agrees

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
        # The rows counted per part, as the message lists them, as data too.
        columns = dict(zip(self.compared, differing, strict=True))
        details = {"columns": columns, "missing": missing, "duplicate_key": duplicated}
        label = self.render_code()
        ignored = (
            f"; {plural(missing, 'row')} not in the reference, ignored" if missing and not self.fails_missing else ""
        )
        if not offending:
            message = f"{label}: every row found in the reference matches it ({compared} compared){ignored}"
            return CheckResult(self.rule_type, True, message, 0, 0, details=details)
        counts = list(columns.items())
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
        return CheckResult(self.rule_type, False, message, offending, offending, details=details)

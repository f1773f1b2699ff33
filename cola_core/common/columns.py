"""Referring to DataFrame columns by name, safely for names with dots, spaces or backticks.

A rule names a column by its plain name. ``F.col(name)`` would parse that name (a dot reads a
struct field, a backtick is a syntax error), so every check goes through ``column_of``: a
top-level column whose name is exactly the rule's text wins, then one that matches ignoring
case (Spark's default resolution), and only then is the text read as a nested path such as
``address.city``.

Building a Column costs round trips to the JVM (pyspark records each call site there), so a
block's plan builds each one once: inside :func:`shared_columns`, the same column of the
same DataFrame, the same ``where`` scope, and any Column made through :func:`shared`, are
built on first use and handed out again after. Columns are immutable values, so sharing one
between checks changes nothing in the plan Spark sees.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any, overload

from cola_core.common.spark_versions import is_pyspark_4

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = [
    "column_of",
    "exact_sum_input",
    "false",
    "is_true",
    "matches",
    "not_true",
    "quote",
    "scope_column",
    "shared",
    "shared_columns",
    "top_level_name",
    "try_cast",
]

# The Columns built so far in the current block; None outside shared_columns(). Each entry
# also holds what its key's id() refers to, so that no id can be reused while it lives.
_BUILT: contextvars.ContextVar[dict[Hashable, tuple[Any, Column]] | None] = contextvars.ContextVar(
    "cola_built_columns", default=None
)


@contextlib.contextmanager
def shared_columns() -> Iterator[None]:
    """Within it, Columns asked for again are the ones built the first time (see above)."""
    token = _BUILT.set({})
    try:
        yield
    finally:
        _BUILT.reset(token)


def shared(key: Hashable, build: Callable[[], Column], keep: Any = None) -> Column:
    """The Column for ``key``, built by ``build`` once per :func:`shared_columns` block.

    Args:
        keep: an object ``key`` refers to by ``id()``, kept alive with the entry.
    """
    built = _BUILT.get()
    if built is None:
        return build()
    entry = built.get(key)
    if entry is None:
        entry = built[key] = (keep, build())
    return entry[1]


def quote(name: str) -> str:
    """``name`` as a backquoted SQL identifier: ``a.b`` -> ```a.b```."""
    return "`" + name.replace("`", "``") + "`"


def top_level_name(columns: list[str], name: str) -> str | None:
    """The top-level column ``name`` refers to: the exact name, else the only one equal to it
    ignoring case; None when ``name`` is no top-level column (it may be a nested path)."""
    if name in columns:
        return name
    folded = [column for column in columns if column.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def column_of(df: DataFrame, name: str) -> Column:
    """The column ``name`` of ``df``: a top-level name is quoted (it may hold a dot, a space or
    a backtick); anything else (a nested ``address.city``) is left to Spark's resolver."""
    return shared(("column", id(df), name), lambda: _column_of(df, name), keep=df)


def _column_of(df: DataFrame, name: str) -> Column:
    from pyspark.sql import functions as F

    top_level = top_level_name(df.columns, name)
    if top_level is None:
        return F.col(name)  # a nested path: F.col reads its dots
    # A quoted identifier read as SQL is the attribute F.col gives, at a quarter of the JVM
    # round trips. Not with a '$' in it: Spark substitutes ${...} in SQL text, even there.
    return F.col(quote(top_level)) if "$" in top_level else F.expr(quote(top_level))


def try_cast(column: Column, type_name: str) -> Column:
    """``column`` cast to ``type_name``, NULL where the value cannot be converted.

    A plain cast fails the whole job under ANSI mode (Spark 4's default) on a value such as
    ``'2022-02-30'``; a data-quality rule must measure such a value, never crash on it.
    """
    if is_pyspark_4():
        return column.try_cast(type_name)
    from pyspark.sql import functions as F

    # pyspark 3.5 has no Column.try_cast; these functions are its non-failing string casts.
    if type_name == "date":
        return F.try_to_timestamp(column.cast("string")).cast("date")
    if type_name.startswith("timestamp"):
        return F.try_to_timestamp(column.cast("string")).cast(type_name)
    # Between numbers, and to text, Spark 3.5's cast is already NULL where a value does not
    # fit, unless ANSI mode (off by default there) was turned on.
    return column.cast(type_name)


# Column methods and operators (isNull, rlike, ~, &) each record their call site in the JVM
# first, at three to four times the round trips of the equivalent function in
# pyspark.sql.functions; the helpers below build the same expressions the cheaper way.


def false() -> Column:
    """The literal FALSE, built once per block."""
    from pyspark.sql import functions as F

    return shared(("literal", False), lambda: F.lit(False))


def is_true(condition: Column) -> Column:
    """TRUE where ``condition`` is TRUE, FALSE where it is FALSE or NULL."""
    from pyspark.sql import functions as F

    return F.ifnull(condition, false())


def not_true(condition: Column) -> Column:
    """TRUE where ``condition`` is FALSE or NULL: ``~coalesce(condition, false)``."""
    from pyspark.sql import functions as F

    return F.call_function("not", is_true(condition))


def matches(text: Column, pattern: str) -> Column:
    """``text RLIKE pattern`` (Java regex, anywhere in the text); NULL for a NULL text."""
    from pyspark.sql import functions as F

    return F.rlike(text, F.lit(pattern))


@overload
def scope_column(where: str) -> Column: ...


@overload
def scope_column(where: None) -> None: ...


@overload
def scope_column(where: str | None) -> Column | None: ...


def scope_column(where: str | None) -> Column | None:
    """A rule's ``where`` as a Column, or None when the rule sees every row.

    NULL is not TRUE, so a row where the condition is NULL is outside the scope.
    """
    if where is None:
        return None
    from pyspark.sql import functions as F

    return shared(("scope", where), lambda: F.ifnull(F.expr(where), false()))


def exact_sum_input(column: Column, data_type: DataType | None) -> Column:
    """What to sum for an exact total of ``column``: a sum of integers that overflows bigint
    fails the job under ANSI Spark, so integral columns are summed as decimal(38,0)."""
    from pyspark.sql.types import IntegralType

    return column.cast("decimal(38,0)") if isinstance(data_type, IntegralType) else column


# A list this long is sent to the JVM as one JSON text: PySpark's isin makes one Py4J call per
# value (a literal Column each), which cost minutes for 100,000 values.
ONE_TEXT_FROM = 64


def is_in(column: Column, values: list[Any]) -> Column:
    """``column IN (values)``: the values are plain literals (text, booleans, finite floats,
    whole numbers within bigint), as ``F.lit`` of each would make them.

    A long list in a classic session is built on the JVM: the values travel as one JSON text,
    which Spark's own Jackson reads into the Java values ``F.lit`` would have sent (Integer or
    Long by size, Double, String, Boolean), so the literals and their types are the same. The
    optimizer turns the one ``In`` into a hash-set lookup (``InSet``) either way. Over Spark
    Connect the literals are built client-side, where they cost no round trip.
    """
    import json

    from pyspark import SparkContext

    jc, jvm = getattr(column, "_jc", None), SparkContext._jvm
    if jc is None or jvm is None or len(values) < ONE_TEXT_FROM or not all(map(_jvm_plain, values)):
        return column.isin(values)
    java_values = jvm.com.fasterxml.jackson.databind.ObjectMapper().readValue(
        json.dumps(values), jvm.java.lang.Class.forName("java.util.ArrayList")
    )
    # The column's own class wraps the Java column: pyspark.sql.classic's from 4.0, pyspark.sql's on 3.5.
    return type(column)(jc.isin(jvm.org.apache.spark.api.python.PythonUtils.toSeq(java_values)))


def _jvm_plain(value: Any) -> bool:
    """Whether JSON carries ``value`` to the Java value ``F.lit`` would send."""
    import math

    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    return isinstance(value, str)

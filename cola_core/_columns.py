"""Referring to DataFrame columns by name, safely for names with dots, spaces or backticks.

A rule names a column by its plain name. ``F.col(name)`` would parse that name (a dot reads a
struct field, a backtick is a syntax error), so every check goes through ``column_of``: a
top-level column whose name is exactly the rule's text wins, then one that matches ignoring
case (Spark's default resolution), and only then is the text read as a nested path such as
``address.city``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["column_of", "exact_sum_input", "quote", "scope_column", "top_level_name", "try_cast"]


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
    from pyspark.sql import functions as F

    top_level = top_level_name(df.columns, name)
    return F.col(quote(top_level)) if top_level is not None else F.col(name)


def try_cast(column: Column, type_name: str) -> Column:
    """``column`` cast to ``type_name``, NULL where the value cannot be converted.

    A plain cast fails the whole job under ANSI mode (Spark 4's default) on a value such as
    ``'2022-02-30'``; a data-quality rule must measure such a value, never crash on it.
    """
    if hasattr(column, "try_cast"):  # pyspark >= 4.0
        return column.try_cast(type_name)
    from pyspark.sql import functions as F

    # pyspark 3.5 has no Column.try_cast; these functions are its non-failing string casts.
    if type_name == "date":
        return F.try_to_timestamp(column.cast("string")).cast("date")
    if type_name.startswith("timestamp"):
        return F.try_to_timestamp(column.cast("string")).cast(type_name)
    raise NotImplementedError(f"try_cast to {type_name} needs pyspark 4")


def scope_column(where: str | None) -> Column | None:
    """A rule's ``where`` as a Column, or None when the rule sees every row.

    NULL is not TRUE, so a row where the condition is NULL is outside the scope.
    """
    if where is None:
        return None
    from pyspark.sql import functions as F

    return F.coalesce(F.expr(where), F.lit(False))


def exact_sum_input(column: Column, data_type: DataType | None) -> Column:
    """What to sum for an exact total of ``column``: a sum of integers that overflows bigint
    fails the job under ANSI Spark, so integral columns are summed as decimal(38,0)."""
    from pyspark.sql.types import IntegralType

    return column.cast("decimal(38,0)") if isinstance(data_type, IntegralType) else column

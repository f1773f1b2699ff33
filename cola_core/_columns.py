"""Referring to DataFrame columns by name, safely for names with dots, spaces or backticks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["column_of", "quote", "scope_column"]


def quote(name: str) -> str:
    """``name`` as a backquoted SQL identifier: ``a.b`` -> ```a.b```."""
    return "`" + name.replace("`", "``") + "`"


def column_of(df: DataFrame, name: str) -> Column:
    """The column ``name`` of ``df``: an exact top-level name is quoted (it may hold a dot);
    anything else (a nested ``address.city``) is left to Spark's resolver."""
    from pyspark.sql import functions as F

    return F.col(quote(name)) if name in df.columns else F.col(name)


def scope_column(where: str | None) -> Column | None:
    """A rule's ``where`` as a Column, or None when the rule sees every row.

    NULL is not TRUE, so a row where the condition is NULL is outside the scope.
    """
    if where is None:
        return None
    from pyspark.sql import functions as F

    return F.coalesce(F.expr(where), F.lit(False))

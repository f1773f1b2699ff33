"""Conditions written as SQL text, so that a rule costs one Column instead of dozens.

Each function, operator and literal of a Column built in PySpark is a Py4J round trip (three
for most, more for an operator while PySpark records call sites), and a range rule needed
about sixty: at 2,000 rules, half a minute of driver time before Spark saw the plan. A rule of
a common shape (a range over a numeric or date column, a regex over a string column) instead
renders its whole condition as SQL text, which ``F.expr`` turns into one Column.

The text is built only from parts whose meaning nothing in the session can change:

- identifiers are top-level column names, backquoted; a nested path, or a name holding
  ``$`` (Spark's variable substitution reads ``${...}`` even inside backquotes), returns None
  and the caller builds the Column the ordinary way;
- a string is its UTF-8 bytes in hex, cast to text, so neither backslash escaping
  (``spark.sql.parser.escapedStringLiterals``) nor substitution can touch it; Spark folds
  the cast into a plain literal before it runs;
- a number is the literal ``F.lit`` would make: an int or bigint as digits, a whole number
  beyond bigint as ``decimal(38,0)``, a float as a double.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from cola_core.common.columns import quote, top_level_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["identifier", "number_text", "string_text"]

_LONG = range(-(2**63), 2**63)


def identifier(df: DataFrame, name: str) -> str | None:
    """``name`` as a SQL identifier of ``df``'s top-level column it names (see
    ``columns.column_of``); None for a nested path or a name SQL text cannot hold safely."""
    top_level = top_level_name(df.columns, name)
    if top_level is None or "$" in top_level:
        return None
    return quote(top_level)


def string_text(text: str) -> str:
    """``text`` as a SQL string expression that reads back exactly (see the module docstring)."""
    return f"CAST(X'{text.encode('utf-8').hex()}' AS STRING)"


def number_text(value: Any) -> str | None:
    """A rule number as the SQL literal of the type ``F.lit`` gives it (through
    ``conditions.number_literal``); None for anything that is no finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        # repr reads back as the same double; the cast makes it one (1.5 alone is a decimal).
        return f"CAST('{value!r}' AS DOUBLE)" if math.isfinite(value) else None
    if value in _LONG:
        return f"({value})"
    return f"CAST('{value}' AS DECIMAL(38,0))"

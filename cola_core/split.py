"""The valid/invalid split (quarantine), with the codes of the broken rules beside each row.

Every row-level rule contributes ``(code, predicate)`` pairs. One projection computes the
array of codes a row breaks; ``valid`` is the rows whose array is empty and ``invalid`` the
others, so the two partition the input (no row is lost or duplicated). Nothing runs until
an action is taken on an output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Sequence

from cola_core.checks.base import BaseCheck
from cola_core.errors import ColaError
from cola_core.planner import ensure_columns

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["ColaSplit", "codes_column", "split_block"]

_CODES = "__cola_codes"


class ColaSplit(NamedTuple):
    """``valid`` keeps the input's schema exactly; ``invalid`` adds the annotate column, if asked."""

    valid: DataFrame
    invalid: DataFrame


def codes_column(df: DataFrame, checks: Sequence[BaseCheck]) -> Column:
    """``array<string>`` of the codes a row breaks, in rule order, each code once."""
    from pyspark.sql import functions as F

    pairs = [pair for check in checks if check.is_row_level for pair in check.violations(df)]
    if not pairs:
        return F.array().cast("array<string>")
    # A NULL predicate (e.g. a custom check comparing a NULL) never blames a row.
    flagged = [F.when(F.coalesce(predicate, F.lit(False)), F.lit(code)) for code, predicate in pairs]
    return F.array_distinct(F.array_compact(F.array(*flagged)))


def split_block(df: DataFrame, checks: Sequence[BaseCheck], annotate: str | None = None) -> ColaSplit:
    """Partition ``df`` by the row-level checks in ``checks``; aggregate checks are ignored."""
    from pyspark.sql import functions as F

    if annotate is not None and (not isinstance(annotate, str) or not annotate.strip()):
        raise ColaError(f"annotate must be a column name, got {annotate!r}")
    if annotate is not None and annotate.lower() in {c.lower() for c in df.columns}:
        raise ColaError(f"annotate column {annotate!r} already exists in the DataFrame; choose another name")
    row_checks = [check for check in checks if check.is_row_level]
    ensure_columns(df, row_checks)
    columns = [F.col(f"`{name}`") for name in df.columns]
    flagged = df.select(*columns, codes_column(df, row_checks).alias(_CODES))
    valid = flagged.where(F.size(_CODES) == 0).select(*columns)
    rejected = flagged.where(F.size(_CODES) > 0)
    extra = [F.col(_CODES).alias(annotate)] if annotate else []
    return ColaSplit(valid, rejected.select(*columns, *extra))

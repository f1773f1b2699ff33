"""The planner: the only place that starts Spark actions for ``run``.

A block costs one ``df.agg(...)`` holding every plain aggregate of every check, with aliases
namespaced per check (``_cola_<check>_<offset>``) so checks cannot collide; each check reads
back its own slice of the one row. Distinct-row counts (``unique``, ``duplicate_*``,
``distinct_count``) are grouped by column set, so ``unique(id)`` and ``duplicate_count(id)``
share one count, and each set is computed one of two ways:

- ``separate`` (the default): one extra aggregation per set,
  ``df.select(set).distinct().count()``;
- ``inline``: a ``count(DISTINCT ...)`` inside the block's agg.

Inline saves a job but not work: Spark plans a distinct inside a global agg by grouping the
whole table on the distinct key, so every other aggregate of the block is carried through
that hash aggregation and its shuffle, and two or more distinct sets add an Expand that
copies every input row once per set. On the benchmark's 2M-row block (``benchmarks/``,
``docs/sections/performance.md``) inline took about 1.4x the time and CPU of separate,
which is why separate is the default.

``schema`` reads the schema and starts no job. ``sql`` rules and custom checks that only
implement ``run(df)`` keep their own action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from cola_core.checks.base import BaseCheck
from cola_core.errors import ColaError, ColaRuleError
from cola_core.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "DISTINCT_STRATEGIES",
    "BlockPlan",
    "count_distinct_rows",
    "distinct_count_column",
    "distinct_key",
    "ensure_columns",
    "plan_block",
    "run_block",
]

DISTINCT_STRATEGIES = ("separate", "inline")


def distinct_key(columns: Sequence[str]) -> tuple[str, ...]:
    """The set a distinct count runs over: (a, b), (b, a) and (a, a, b) all count the same rows."""
    return tuple(sorted(set(columns)))


@dataclass
class BlockPlan:
    """What the block's checks need from Spark.

    Attributes:
        aggregates: every plain aggregate of every check, aliased ``_cola_<check>_<offset>``.
        slices: check index -> ``(start, stop)`` of its aggregates in ``aggregates``.
        distinct_needs: check index -> the distinct sets whose counts follow its slice.
        own_action: indexes of the checks that run themselves (``sql``, ``schema``, custom).
    """

    aggregates: list[Column] = field(default_factory=list)
    slices: dict[int, tuple[int, int]] = field(default_factory=dict)
    distinct_needs: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)
    own_action: list[int] = field(default_factory=list)

    @property
    def distinct_sets(self) -> list[tuple[str, ...]]:
        """Each distinct set once, in the order the checks first ask for it."""
        seen: dict[tuple[str, ...], None] = {}
        for sets in self.distinct_needs.values():
            seen.update(dict.fromkeys(sets))
        return list(seen)


def ensure_columns(df: DataFrame, checks: Sequence[BaseCheck]) -> None:
    """Refuse a rule that names a column the DataFrame lacks (reads the schema, no job)."""
    available = {name.lower() for name in df.columns}
    for check in checks:
        for column in check.columns_used(df):
            top_level = column.split(".", 1)[0]
            if column.lower() not in available and top_level.lower() not in available:
                raise ColaRuleError(
                    f"column {column!r} does not exist; the DataFrame has {', '.join(df.columns)}",
                    position=check.position,
                    rule_type=check.rule_type,
                    target=check.target,
                )


def plan_block(df: DataFrame, checks: Sequence[BaseCheck]) -> BlockPlan:
    """Collect the aggregates and distinct sets of every check that can share the scan."""
    plan = BlockPlan()
    for index, check in enumerate(checks):
        if not check.supports_aggregations:
            plan.own_action.append(index)
            continue
        columns = check.aggregations(df)
        start = len(plan.aggregates)
        plan.aggregates.extend(column.alias(f"_cola_{index}_{offset}") for offset, column in enumerate(columns))
        plan.slices[index] = (start, len(plan.aggregates))
        plan.distinct_needs[index] = [distinct_key(cols) for cols in check.distinct_sets(df)]
    return plan


def _columns(df: DataFrame, names: Sequence[str]) -> list[Column]:
    from pyspark.sql import functions as F

    # A whole-row set comes from df.columns, where a name may hold a dot or a space: quote
    # exact top-level names, and leave anything else (a nested "a.b") to Spark's resolver.
    top_level = set(df.columns)
    return [F.col("`" + name.replace("`", "``") + "`") if name in top_level else F.col(name) for name in names]


def distinct_count_column(df: DataFrame, column_set: Sequence[str]) -> Column:
    """An aggregate counting distinct rows over ``column_set``, NULL counted as one value."""
    from pyspark.sql import functions as F

    columns = _columns(df, column_set)
    if len(columns) == 1:
        # count(DISTINCT c) skips NULL, so add one when a NULL is present. A plain key also
        # groups faster than the one-field struct the general case needs.
        (column,) = columns
        has_null = F.when(F.count(F.lit(1)) > F.count(column), F.lit(1)).otherwise(F.lit(0))
        return F.count_distinct(column) + has_null
    # A struct is never NULL, even when its fields are, so NULL equals NULL here.
    return F.count_distinct(F.struct(*columns))


def count_distinct_rows(df: DataFrame, column_set: Sequence[str]) -> int:
    """One job: the distinct rows over ``column_set`` (``distinct`` treats NULLs as equal).

    Measured cheaper than ``agg(count_distinct(...))`` on the benchmark data.
    """
    return df.select(*_columns(df, column_set)).distinct().count()


def run_block(df: DataFrame, checks: Sequence[BaseCheck], distinct_strategy: str = "separate") -> list[CheckResult]:
    """Run every check of a block with as few scans as the checks allow.

    Args:
        df: the data the rules measure.
        checks: parsed checks, in rule order.
        distinct_strategy: ``"separate"`` or ``"inline"`` (see the module docstring).

    Returns:
        One result per check, in order.

    Raises:
        ColaError: for an unknown ``distinct_strategy``.
        ColaRuleError: for a rule naming a column the DataFrame lacks (before any job).
    """
    if distinct_strategy not in DISTINCT_STRATEGIES:
        raise ColaError(f"distinct_strategy must be 'separate' or 'inline', got {distinct_strategy!r}")
    ensure_columns(df, checks)
    plan = plan_block(df, checks)
    aggregates = list(plan.aggregates)
    distinct_counts: dict[tuple[str, ...], int] = {}
    inline_at: dict[tuple[str, ...], int] = {}
    for number, column_set in enumerate(plan.distinct_sets):
        if distinct_strategy == "inline":
            inline_at[column_set] = len(aggregates)
            aggregates.append(distinct_count_column(df, column_set).alias(f"_cola_distinct_{number}"))
        else:
            distinct_counts[column_set] = count_distinct_rows(df, column_set)
    row: list[Any] = list(df.agg(*aggregates).first()) if aggregates else []
    distinct_counts.update({column_set: int(row[at]) for column_set, at in inline_at.items()})

    results = []
    for index, check in enumerate(checks):
        if index in plan.slices:
            start, stop = plan.slices[index]
            values = row[start:stop] + [distinct_counts[s] for s in plan.distinct_needs[index]]
            result = check.from_aggregations(values)
        else:
            result = check.run(df)
        results.append(check.finish(result))
    return results

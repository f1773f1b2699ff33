"""The planner: the only place that starts Spark actions for ``run``.

A block costs one ``df.agg(...)`` for every plain aggregate of every check (aliases are
namespaced per check, so checks cannot collide), plus, per distinct column set, either a
``count(DISTINCT struct(...))`` inside that same agg (``inline``) or one extra aggregation
(``separate``). ``separate`` is the default: a distinct inside a large agg makes Spark plan an
Expand that multiplies every input row, and the benchmark in ``benchmarks/`` measured it
slower. ``sql`` rules and custom checks that only implement ``run(df)`` keep their own action;
``schema`` reads the schema and starts none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from cola_core.checks.base import BaseCheck
from cola_core.errors import ColaRuleError
from cola_core.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["DISTINCT_STRATEGIES", "BlockPlan", "ensure_columns", "run_block"]

DISTINCT_STRATEGIES = ("separate", "inline")


def distinct_key(columns: Sequence[str]) -> tuple[str, ...]:
    """The distinct count over (a, b) equals the one over (b, a): share it."""
    return tuple(sorted(set(columns)))


@dataclass
class BlockPlan:
    """Which aggregate columns belong to which check, and which distinct sets are needed."""

    aggregates: list[Any] = field(default_factory=list)
    slices: dict[int, tuple[int, int]] = field(default_factory=dict)
    distinct_needs: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)

    @property
    def distinct_sets(self) -> list[tuple[str, ...]]:
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
    plan = BlockPlan()
    for index, check in enumerate(checks):
        if not check.supports_aggregations:
            continue
        columns = check.aggregations(df)
        start = len(plan.aggregates)
        plan.aggregates.extend(column.alias(f"_cola_{index}_{offset}") for offset, column in enumerate(columns))
        plan.slices[index] = (start, len(plan.aggregates))
        plan.distinct_needs[index] = [distinct_key(cols) for cols in check.distinct_sets(df)]
    return plan


def run_block(df: DataFrame, checks: Sequence[BaseCheck], distinct_strategy: str = "separate") -> list[CheckResult]:
    """Run every check of a block with as few scans as the checks allow."""
    if distinct_strategy not in DISTINCT_STRATEGIES:
        raise ValueError(f"distinct_strategy must be one of {DISTINCT_STRATEGIES}, got {distinct_strategy!r}")
    ensure_columns(df, checks)
    plan = plan_block(df, checks)
    aggregates = list(plan.aggregates)
    distinct_counts: dict[tuple[str, ...], int] = {}
    if distinct_strategy == "inline":
        from pyspark.sql import functions as F

        inline_at = {}
        for column_set in plan.distinct_sets:
            inline_at[column_set] = len(aggregates)
            aggregates.append(F.count_distinct(F.struct(*column_set)).alias(f"_cola_distinct_{len(inline_at)}"))
    else:
        for column_set in plan.distinct_sets:
            distinct_counts[column_set] = df.select(*column_set).distinct().count()
    row = list(df.agg(*aggregates).first()) if aggregates else []
    if distinct_strategy == "inline":
        distinct_counts = {column_set: row[at] for column_set, at in inline_at.items()}

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

"""A prototype of the Py4J-lean planner changes proposed for issue 11, for measuring only.

Nothing here is imported by Cola: ``profile_py4j`` runs a block through these functions, with
each change switched on alone or all together, counts the round trips, and checks that the
numbers are still Cola's. Written against ``cola_core`` as of commit 4c990bb; the changes are:

- ``batch_conditions``: every ``where``/``expression`` of the block analysed in one
  ``select(named_struct(...))`` and one ``where(c1 AND c2 ...)`` (types, aggregates and
  windows, determinism), falling back to the per-condition path, and its messages, only
  when the batch finds a problem;
- ``no_alias``: aggregates are not aliased ``_cola_<check>_<n>``; the row is read by position,
  as ``run_block`` already does;
- ``dedupe``: a check asking for an aggregate the block already has (the same Column
  object, from the memoised builders below) shares its position instead of adding one;
- ``memo``: ``column_of`` per (DataFrame, name), ``scope_column`` per ``where`` text and
  ``count_rows()`` per ``where`` are built once per block (Columns are immutable values);
- ``count_if``: ``count_rows(condition)`` is ``F.count_if(condition)`` rather than
  ``F.count(F.when(condition, F.lit(1)))`` (both count the rows where it is TRUE).
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Sequence

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from cola_core.checks.base import BaseCheck

__all__ = ["CHANGES", "LeanPlan", "lean_changes", "lean_run"]

CHANGES = ("batch_conditions", "no_alias", "dedupe", "memo", "count_if")


def ensure_conditions_batched(df: DataFrame, checks: Sequence[BaseCheck]) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, StructType

    from cola_core import planner
    from cola_core.errors import ColaRuleError

    conditions = list(dict.fromkeys(c for check in checks for c in check.conditions()))
    if conditions:
        try:
            # A newline before each closing parenthesis, so that a condition ending in a
            # -- comment cannot swallow it.
            fields = ", ".join(f"'c{i}', (\n{c}\n)" for i, c in enumerate(conditions))
            struct = df.select(F.expr(f"named_struct({fields})")).schema.fields[0].dataType
            fine = isinstance(struct, StructType) and all(isinstance(f.dataType, BooleanType) for f in struct.fields)
            if fine:
                both = " AND ".join(f"(\n{c}\n)" for c in conditions)
                fine = planner._deterministic(df.where(F.expr(both)))
        except Exception:
            fine = False
        if not fine:
            planner.ensure_conditions(df, checks)  # finds the culprit, with today's message
            return
    for check in checks:
        try:
            check.analyse(df)
        except ColaRuleError as error:
            raise error.located(position=check.position, rule_type=check.rule_type, target=check.target) from None


@dataclass
class LeanPlan:
    aggregates: list[Column] = field(default_factory=list)
    positions: dict[int, list[int]] = field(default_factory=dict)
    distinct_needs: dict[int, list[Any]] = field(default_factory=dict)
    own_action: list[int] = field(default_factory=list)
    rows_at: dict[int, int] = field(default_factory=dict)

    @property
    def distinct_sets(self) -> list[Any]:
        seen: dict[Any, None] = {}
        for sets in self.distinct_needs.values():
            seen.update(dict.fromkeys(sets))
        return list(seen)


def plan_block_lean(df: DataFrame, checks: Sequence[BaseCheck], prepared: DataFrame, *, alias: bool, dedupe: bool) -> LeanPlan:
    from cola_core.planner import distinct_key

    plan = LeanPlan()
    at: dict[int, int] = {}
    kept: list[Column] = []  # every Column seen stays alive, so no id() is reused

    def place(column: Column, name: str) -> int:
        kept.append(column)
        if dedupe and id(column) in at:
            return at[id(column)]
        plan.aggregates.append(column.alias(name) if alias else column)
        at[id(column)] = len(plan.aggregates) - 1
        return at[id(column)]

    for index, check in enumerate(checks):
        if not check.supports_aggregations or (check.where is not None and not check.scopes_itself):
            plan.own_action.append(index)
            continue
        columns = check.aggregations(prepared)
        plan.positions[index] = [place(column, f"_cola_{index}_{n}") for n, column in enumerate(columns)]
        plan.distinct_needs[index] = [distinct_key(cols, check.where) for cols in check.distinct_sets(df)]
        if check.tolerance is not None:
            plan.rows_at[index] = place(check.count_rows(), f"_cola_{index}_rows")
    return plan


@contextlib.contextmanager
def lean_changes(changes: Sequence[str]) -> Iterator[None]:
    """Patch the memo and count_if changes into the loaded cola_core (restored on exit)."""
    from pyspark.sql import functions as F

    from cola_core import _columns
    from cola_core.checks.base import BaseCheck

    patches: list[tuple[Any, str, Any]] = []
    original_count_rows = BaseCheck.count_rows
    if "memo" in changes:
        column_cache: dict[tuple[int, str], Any] = {}
        scope_cache: dict[Any, Any] = {}
        rows_cache: dict[Any, Any] = {}
        original_column_of, original_scope = _columns.column_of, _columns.scope_column

        def column_of(df, name):
            key = (id(df), name)
            if key not in column_cache:
                column_cache[key] = (df, original_column_of(df, name))  # keep df alive: ids stay unique
            return column_cache[key][1]

        def scope_column(where):
            if where not in scope_cache:
                scope_cache[where] = original_scope(where)
            return scope_cache[where]

        for module_name, module in list(sys.modules.items()):
            if module_name.split(".")[0] != "cola_core":
                continue
            if getattr(module, "column_of", None) is original_column_of:
                patches.append((module, "column_of", column_of))
            if getattr(module, "scope_column", None) is original_scope:
                patches.append((module, "scope_column", scope_column))
        inner = original_count_rows

        def count_rows_memo(self, condition=None):
            if condition is not None:
                return inner(self, condition)
            if self.where not in rows_cache:
                rows_cache[self.where] = inner(self)
            return rows_cache[self.where]

        count_rows = count_rows_memo
    else:
        count_rows = original_count_rows
    if "count_if" in changes:
        below = count_rows

        def count_rows_if(self, condition=None):
            if condition is None:
                return below(self)
            return F.count_if(self.in_scope(condition))

        count_rows = count_rows_if
    if count_rows is not original_count_rows:
        patches.append((BaseCheck, "count_rows", count_rows))
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, value in patches:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def lean_run(df: DataFrame, rules: list[dict[str, Any]], changes: Sequence[str], calls: Any = None) -> list[Any]:
    """Cola's run_block with ``changes``; phases recorded on ``calls`` (a Py4JCalls) if given."""
    from cola_core import Cola, planner

    phase = calls.phase if calls is not None else (lambda name: contextlib.nullcontext())
    cola = Cola()
    with lean_changes(changes):
        with phase("parse"):
            checks = cola.parse(rules)
        with cola.sql_scope():
            with phase("ensure_columns"):
                planner.ensure_columns(df, checks)
            with phase("ensure_conditions"):
                if "batch_conditions" in changes:
                    ensure_conditions_batched(df, checks)
                else:
                    planner.ensure_conditions(df, checks)
            with phase("prepare_all"):
                prepared = planner.prepare_all(df, checks)
            with phase("plan_block"):
                plan = plan_block_lean(df, checks, prepared, alias="no_alias" not in changes, dedupe="dedupe" in changes)
            distinct_counts = {}
            with phase("distinct jobs"):
                for distinct_set in plan.distinct_sets:
                    column_set, where = distinct_set
                    distinct_counts[distinct_set] = planner.count_distinct_rows(df, column_set, where)
            with phase("agg (analysis)"):
                aggregated = prepared.agg(*plan.aggregates)
            with phase("first (job)"):
                row = list(aggregated.first())
            with phase("results"):
                results = []
                for index, check in enumerate(checks):
                    if index in plan.positions:
                        values = [row[p] for p in plan.positions[index]]
                        values += [distinct_counts[s] for s in plan.distinct_needs[index]]
                        result = check.from_aggregations(values)
                    else:
                        result = check.run(df)
                    rows_in_scope = int(row[plan.rows_at[index]]) if index in plan.rows_at else None
                    results.append(check.finish(result, rows_in_scope))
    return [r.failed_count if r.metric_value is None else r.metric_value for r in results]

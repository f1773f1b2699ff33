"""The planner: the only place that starts Spark actions for ``run``.

A block costs one ``df.agg(...)`` holding every plain aggregate of every check; each check
reads back its own positions of the one row, so checks cannot collide whatever their
Columns are named. An aggregate two checks ask for (the same Column, built once per block by
``_columns.shared_columns``) takes one position. Distinct-row counts (``unique``, ``duplicate_*``,
``distinct_count``) are grouped by column set, so ``unique(id)`` and ``duplicate_count(id)``
share one count, and each set is computed one of two ways:

- ``separate`` (the default): one extra aggregation per set,
  ``df.select(set).distinct().count()``;
- ``inline``: a ``count(DISTINCT ...)`` inside the block's agg.

Inline saves a job but not work: Spark plans a distinct inside a global agg by grouping the
whole table on the distinct key, so every other aggregate of the block is carried through
that hash aggregation and its shuffle, and two or more distinct sets add an Expand that
copies every input row once per set. On the benchmark's 2M-row block (``benchmarks/``,
``docs/performance.md``) inline took about 1.4x the time and CPU of separate,
which is why separate is the default.

A block of more than ``ONE_JOB_UP_TO`` aggregates is measured in jobs of at most
``AGGREGATES_PER_JOB`` each, sized alike. One aggregation of a thousand expressions is the
slowest plan Spark has for it: on ``benchmarks/wide.py``'s 800 rules over 300 columns (1,001
aggregates), chunks of 50 took under half the time of one ``agg``, and less than chunks of
100 or 200 (``docs/performance.md``, "Wide blocks"); reading the rows again costs far less.
Narrower blocks keep their one job. ``Cola(aggregates_per_job=N)`` sets the size for every block.
In a classic session the jobs run ``JOBS_AT_ONCE`` at a time, in threads that carry the
caller's job group and the session's tags: while one runs, the driver analyses the next.

``schema`` reads the schema and starts no job. ``sql`` rules and other self-running checks
keep their own action.

Before any of this, :func:`cola_core.plan.preflight.checked_block` refuses a rule Spark cannot
run on the DataFrame (no job) and binds each check to the sources it refers to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.common.columns import column_of, scope_column, shared_columns
from cola_core.common.sessions import is_classic
from cola_core.common.spark_errors import first_line, is_evaluation_failure
from cola_core.errors import ColaError
from cola_core.language.result import CheckResult
from cola_core.plan.preflight import checked_block

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "AGGREGATES_PER_JOB",
    "DISTINCT_STRATEGIES",
    "JOBS_AT_ONCE",
    "ONE_JOB_UP_TO",
    "BlockPlan",
    "DistinctSet",
    "count_distinct_rows",
    "distinct_count_column",
    "distinct_key",
    "measure_block",
    "plan_block",
    "prepare_all",
    "rows_in_jobs",
    "run_block",
]

DISTINCT_STRATEGIES = ("separate", "inline")
# A block of up to ONE_JOB_UP_TO aggregates is one job; a wider one, jobs of AGGREGATES_PER_JOB
# at most (see the module docstring). Cola(aggregates_per_job=N) sets the size for every block.
ONE_JOB_UP_TO = 200
AGGREGATES_PER_JOB = 50
# A block's jobs run this many at a time (in a classic session): while one job runs, the
# driver analyses and compiles the next, which took a quarter off benchmarks/wide.py's block.
JOBS_AT_ONCE = 2
# The columns of a distinct count, and the ``where`` scope it is counted in.
DistinctSet = tuple[tuple[str, ...], "str | None"]


def distinct_key(columns: Sequence[str], where: str | None = None) -> tuple[tuple[str, ...], str | None]:
    """The set a distinct count runs over: (a, b), (b, a) and (a, a, b) all count the same
    rows; rules scoped by the same ``where`` share it too."""
    return tuple(sorted(set(columns))), where


@dataclass
class BlockPlan:
    """What the block's checks need from Spark.

    Attributes:
        aggregates: every plain aggregate of every check, each once.
        positions: check index -> where its aggregates are in ``aggregates``, in its order.
        distinct_needs: check index -> the distinct sets whose counts follow its values.
        own_action: indexes of the checks that run themselves (``sql``, ``schema``, custom).
        rows_at: check index -> where its rows-in-scope count is (its ``rows_checked``, and
            what its tolerance is a share of).
    """

    aggregates: list[Column] = field(default_factory=list)
    positions: dict[int, list[int]] = field(default_factory=dict)
    distinct_needs: dict[int, list[DistinctSet]] = field(default_factory=dict)
    own_action: list[int] = field(default_factory=list)
    rows_at: dict[int, int] = field(default_factory=dict)

    def needing(self, distinct_set: DistinctSet) -> list[int]:
        """The checks whose results need ``distinct_set``'s count."""
        return [index for index, sets in self.distinct_needs.items() if distinct_set in sets]

    @property
    def distinct_sets(self) -> list[DistinctSet]:
        """Each distinct set once, in the order the checks first ask for it."""
        seen: dict[DistinctSet, None] = {}
        for sets in self.distinct_needs.values():
            seen.update(dict.fromkeys(sets))
        return list(seen)


def prepare_all(df: DataFrame, checks: Sequence[BaseCheck]) -> DataFrame:
    """Let every check add the helper columns it needs (see ``BaseCheck.prepare``)."""
    for check in checks:
        df = check.prepare(df)
    return df


def plan_block(df: DataFrame, checks: Sequence[BaseCheck], prepared: DataFrame | None = None) -> BlockPlan:
    """Collect the aggregates and distinct sets of every check that can share the scan.

    Args:
        df: the caller's DataFrame. Distinct sets are asked of it, so a whole-row set is the
            caller's columns and never a helper column that ``prepare`` added.
        prepared: ``df`` with the checks' helper columns (``prepare_all``), which their
            aggregates may read; ``df`` itself when omitted.
    """
    scanned = df if prepared is None else prepared
    plan = BlockPlan()
    # Where each aggregate already is, by the Column's identity (see _columns.shared_columns).
    placed: dict[int, int] = {}

    def place(column: Column) -> int:
        if id(column) not in placed:
            placed[id(column)] = len(plan.aggregates)
            plan.aggregates.append(column)
        return placed[id(column)]

    with shared_columns():
        for index, check in enumerate(checks):
            if check.runs_alone:
                plan.own_action.append(index)
                continue
            plan.positions[index] = [place(column) for column in check.aggregations(scanned)]
            plan.distinct_needs[index] = [distinct_key(cols, check.where) for cols in check.distinct_sets(df)]
            plan.rows_at[index] = place(check.count_rows())
    return plan


def _columns(df: DataFrame, names: Sequence[str]) -> list[Column]:
    # A whole-row set comes from df.columns, where a name may hold a dot or a space.
    return [column_of(df, name) for name in names]


def distinct_count_column(df: DataFrame, column_set: Sequence[str], where: str | None = None) -> Column:
    """An aggregate counting distinct rows over ``column_set`` (within ``where``), NULL
    counted as one value."""
    from pyspark.sql import functions as F

    scope = scope_column(where)

    def scoped(value: Column) -> Column:
        return value if scope is None else F.when(scope, value)

    columns = _columns(df, column_set)
    if len(columns) == 1:
        # count(DISTINCT c) skips NULL, so add one when a NULL is present. A plain key also
        # groups faster than the one-field struct the general case needs.
        (column,) = columns
        rows, present = F.count(scoped(F.lit(1))), F.count(scoped(column))
        has_null = F.when(rows > present, F.lit(1)).otherwise(F.lit(0))
        return F.count_distinct(scoped(column)) + has_null
    # A struct is never NULL, even when its fields are, so NULL equals NULL here; outside the
    # scope it is NULL, which count(DISTINCT ...) skips.
    return F.count_distinct(scoped(F.struct(*columns)))


def count_distinct_rows(df: DataFrame, column_set: Sequence[str], where: str | None = None) -> int:
    """One job: the distinct rows over ``column_set`` (``distinct`` treats NULLs as equal).

    Measured cheaper than ``agg(count_distinct(...))`` on the benchmark data.
    """
    scope = scope_column(where)
    rows = df if scope is None else df.where(scope)
    return rows.select(*_columns(df, column_set)).distinct().count()


def run_block(
    df: DataFrame,
    checks: Sequence[BaseCheck],
    distinct_strategy: str = "separate",
    aggregates_per_job: int | None = None,
) -> list[CheckResult]:
    """Run every check of a block with as few scans as the checks allow.

    Args:
        df: the data the rules measure.
        checks: parsed checks, in rule order.
        distinct_strategy: ``"separate"`` or ``"inline"`` (see the module docstring).
        aggregates_per_job: the most aggregates one job computes; by default the block's own
            width up to ``ONE_JOB_UP_TO``, else ``AGGREGATES_PER_JOB`` (see the module docstring).

    Returns:
        One result per check, in order.

    A rule that Spark cannot evaluate on the values it meets (bad data under ANSI mode, an
    author's ``raise_error``) comes back as a failed result that says why; the others keep
    their results.

    Raises:
        ColaError: for an unknown ``distinct_strategy``.
        ColaRuleError: for a rule naming a column the DataFrame lacks (before any job).
    """
    if distinct_strategy not in DISTINCT_STRATEGIES:
        raise ColaError(f"distinct_strategy must be 'separate' or 'inline', got {distinct_strategy!r}")
    checks = checked_block(df, checks)
    # Aggregates read the prepared rows; checks that run alone see the caller's DataFrame.
    prepared = prepare_all(df, checks)
    plan = plan_block(df, checks, prepared)
    return measure_block(df, checks, prepared, plan, distinct_strategy, aggregates_per_job=aggregates_per_job)


def measure_block(
    df: DataFrame,
    checks: Sequence[BaseCheck],
    prepared: DataFrame,
    plan: BlockPlan,
    distinct_strategy: str = "separate",
    observed: Sequence[Any] | None = None,
    distinct_counted: Mapping[DistinctSet, int] | None = None,
    aggregates_per_job: int | None = None,
) -> list[CheckResult]:
    """The results of checks already checked, prepared and planned (:func:`run_block`'s steps).

    Args:
        observed: the values of ``plan.aggregates``, in order, when they were measured on
            another pass over the rows (``split_write`` observes them on its write); then the
            block's own aggregation is not run. Distinct sets are then counted separately.
        distinct_counted: distinct sets already counted on that other pass.
    """
    aggregates = list(plan.aggregates)
    distinct_counts: dict[DistinctSet, int] = dict(distinct_counted or {})
    inline_at: dict[DistinctSet, int] = {}
    # Why a check could not be measured: Spark failed on the values it met (see _measure_each).
    broken: dict[int, str] = {}
    for number, distinct_set in enumerate(plan.distinct_sets):
        column_set, where = distinct_set
        if distinct_set in distinct_counts:
            continue
        if distinct_strategy == "inline" and observed is None:
            inline_at[distinct_set] = len(aggregates)
            aggregates.append(distinct_count_column(df, column_set, where).alias(f"_cola_distinct_{number}"))
            continue
        try:
            distinct_counts[distinct_set] = count_distinct_rows(df, column_set, where)
        except Exception as error:
            if not is_evaluation_failure(error):
                raise
            broken.update(dict.fromkeys(plan.needing(distinct_set), first_line(error)))
    row: list[Any]
    if observed is not None:
        row = list(observed)
    else:
        try:
            row = rows_in_jobs(prepared, aggregates, aggregates_per_job)
        except Exception as error:
            if not is_evaluation_failure(error):
                raise
            row = _measure_each(prepared, plan, aggregates, inline_at, broken)
    distinct_counts.update({column_set: int(row[at]) for column_set, at in inline_at.items() if row[at] is not None})

    results = []
    for index, check in enumerate(checks):
        if index in broken:
            result = _unmeasured(check, broken[index])
        elif index in plan.positions:
            distinct = [distinct_counts[s] for s in plan.distinct_needs[index]]
            values = [row[at] for at in plan.positions[index]] + distinct
            result = check.from_aggregations(values)
        else:
            scope = check.scope()
            try:
                result = check.run(df if scope is None else df.where(scope))
            except Exception as error:
                if not is_evaluation_failure(error):
                    raise
                result = _unmeasured(check, first_line(error))
        rows_in_scope = int(row[plan.rows_at[index]]) if index in plan.rows_at and index not in broken else None
        results.append(check.finish(result, rows_in_scope))
    return results


def _measure_each(
    prepared: DataFrame,
    plan: BlockPlan,
    aggregates: list[Column],
    inline_at: dict[DistinctSet, int],
    broken: dict[int, str],
) -> list[Any]:
    """The block's one row, measured check by check after the shared scan failed on the data.

    A value that makes Spark fail (an invalid cast in a user's condition, a division by zero,
    ``raise_error``) must not cost the other rules their results, as Deequ turns one
    analyzer's failure into that analyzer's metric. Only this path, taken when the scan
    has failed, costs one job per check. Checks that fail alone are recorded in ``broken``.
    """
    row: list[Any] = [None] * len(aggregates)
    for distinct_set, at in inline_at.items():
        try:
            row[at] = _one_row(prepared, [aggregates[at]])[0]
        except Exception as error:
            if not is_evaluation_failure(error):
                raise
            broken.update(dict.fromkeys(plan.needing(distinct_set), first_line(error)))
    for index, own in plan.positions.items():
        if index in broken:
            continue
        positions = [*own, *([plan.rows_at[index]] if index in plan.rows_at else [])]
        try:
            values = _one_row(prepared, [aggregates[at] for at in positions]) if positions else []
        except Exception as error:
            if not is_evaluation_failure(error):
                raise
            broken[index] = first_line(error)
            continue
        for at, value in zip(positions, values, strict=True):
            row[at] = value
    return row


def rows_in_jobs(df: DataFrame, aggregates: Sequence[Column] | Sequence[str], per_job: int | None) -> list[Any]:
    """The values of ``aggregates`` (Columns, or SQL text, which costs one call per job
    rather than one per aggregate), computed in as few jobs of at most ``per_job`` as there
    can be, each as large as the others (1,001 by 50: 21 jobs of 47 or 48, not 20 of 50 and one of 1)."""
    if not aggregates:
        return []
    if per_job is None:
        per_job = len(aggregates) if len(aggregates) <= ONE_JOB_UP_TO else AGGREGATES_PER_JOB
    jobs = -(-len(aggregates) // per_job)
    size = -(-len(aggregates) // jobs)
    groups = [aggregates[start : start + size] for start in range(0, len(aggregates), size)]
    if len(groups) == 1 or not is_classic(df):
        return [value for group in groups for value in _one_row(df, group)]
    from pyspark import inheritable_thread_target

    # Each job's thread carries the caller's job group and session tags, so that its jobs
    # are counted as the run's and cancelled with the session's.
    measure = inheritable_thread_target(df.sparkSession)(lambda group: _one_row(df, group))
    with ThreadPoolExecutor(JOBS_AT_ONCE, thread_name_prefix="cola-block") as pool:
        rows = list(pool.map(measure, groups))
    return [value for row in rows for value in row]


def _one_row(df: DataFrame, aggregates: Sequence[Column] | Sequence[str]) -> list[Any]:
    """The values of a global aggregation, which always has exactly one row."""
    if all(isinstance(aggregate, str) for aggregate in aggregates):
        frame = df.selectExpr(*aggregates)
    else:
        frame = df.agg(*aggregates)
    # collect() of the one row: first() analyses the plan again under a LIMIT, which costs a
    # wide block a fifth of its time. Over Spark Connect, first() keeps the error a rule's
    # evaluation failure raises in the form the split's fallback recognises.
    rows = frame.collect() if is_classic(df) else [frame.first()]
    assert len(rows) == 1 and rows[0] is not None, "a global aggregation returns one row, even over no rows"
    return list(rows[0])


def _unmeasured(check: BaseCheck, problem: str) -> CheckResult:
    """The failed result of a rule Spark failed on while measuring it: flagged as such
    (``evaluation_failed``), so that no reader has to find it in the message."""
    message = f"{check.render_code()}: Spark could not evaluate the rule on this data: {problem}"
    return CheckResult(check.rule_type, False, message, evaluation_failed=True)

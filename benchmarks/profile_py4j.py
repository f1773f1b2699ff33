"""Where Cola's Py4J round trips come from, phase by phase, against the hand-written plan.

    .venv/bin/python -m benchmarks.profile_py4j --rows 1000 --block both

For each block it prints:

1. the Py4J calls (and wall seconds) of each phase of ``run_block``, done step by step as
   ``cola_core.planner.run_block`` does them: parse, ``ensure_columns``, ``ensure_conditions``,
   ``prepare_all``, ``plan_block`` (building the Columns), the distinct counts, the agg
   (``DataFrame.agg``: Spark analyses the plan), ``first()`` (the job), and reading the results;
   and the same for the hand-written plan (b2);
2. the calls per rule type while building Columns (``check.aggregations`` + the aliases);
3. which project functions and which pyspark calls the round trips come from (``trace``);
4. what-if measurements: the same block planned with one change patched into this process
   (the repository is not touched), the calls it saves, and whether the 80 numbers stay the same.

The step-by-step phases mirror ``run_block`` as of commit 4c990bb; if the planner's steps
change, the "sum of phases" line stops matching the ``cola.run`` total, which says so.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any, Callable, Iterator

from benchmarks.generate import write_orders
from benchmarks.plans import BLOCK_SPECS, BlockSpec, assert_same_numbers, numbers_of
from benchmarks.py4j_calls import count_py4j_calls
from benchmarks.session import benchmark_session
from cola_core import Cola

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["main", "profile_cola", "profile_hand"]


def profile_cola(df: DataFrame, rules: list[dict[str, Any]], cola: Cola | None = None, trace: bool = False):
    """One run of the block, phase by phase as run_block does it; returns (calls, numbers)."""
    from cola_core import planner

    cola = cola or Cola()
    with count_py4j_calls(trace=trace) as calls:
        with calls.phase("parse"):
            checks = cola.parse(rules)
        with cola.sql_scope():
            with calls.phase("ensure_columns"):
                planner.ensure_columns(df, checks)
            with calls.phase("ensure_conditions"):
                planner.ensure_conditions(df, checks)
            with calls.phase("prepare_all"):
                prepared = planner.prepare_all(df, checks)
            with calls.phase("plan_block"):
                plan = planner.plan_block(df, checks, prepared)
            distinct_counts = {}
            with calls.phase("distinct jobs"):
                for distinct_set in plan.distinct_sets:
                    column_set, where = distinct_set
                    distinct_counts[distinct_set] = planner.count_distinct_rows(df, column_set, where)
            with calls.phase("agg (analysis)"):
                aggregated = prepared.agg(*plan.aggregates)
            with calls.phase("first (job)"):
                row = list(aggregated.first())
            with calls.phase("results"):
                results = []
                for index, check in enumerate(checks):
                    if index in plan.slices:
                        start, stop = plan.slices[index]
                        values = row[start:stop] + [distinct_counts[s] for s in plan.distinct_needs[index]]
                        result = check.from_aggregations(values)
                    else:
                        result = check.run(df)
                    rows_in_scope = int(row[plan.rows_at[index]]) if index in plan.rows_at else None
                    results.append(check.finish(result, rows_in_scope))
    return calls, numbers_of(results)


def profile_hand(df: DataFrame, spec: BlockSpec, trace: bool = False):
    """The hand-written plan (b2), phase by phase."""
    with count_py4j_calls(trace=trace) as calls:
        with calls.phase("plan_block"):
            aggregates = spec.aggregates()
        with calls.phase("distinct jobs"):
            distinct = {name: df.select(*cols).distinct().count() for name, cols in spec.distinct_sets.items()}
        with calls.phase("agg (analysis)"):
            aggregated = df.agg(*aggregates)
        with calls.phase("first (job)"):
            row = aggregated.first().asDict()
        with calls.phase("results"):
            numbers = spec.measures(row, distinct)
    return calls, numbers


PHASES = ("parse", "ensure_columns", "ensure_conditions", "prepare_all", "plan_block", "distinct jobs",
          "agg (analysis)", "first (job)", "results")


def _median_phases(runs: list) -> tuple[dict[str, int], dict[str, float]]:
    calls = {phase: runs[-1].phases.get(phase, 0) for phase in PHASES}
    seconds = {phase: statistics.median(run.phase_seconds.get(phase, 0.0) for run in runs) for phase in PHASES}
    return calls, seconds


def phase_table(df: DataFrame, spec: BlockSpec, repeats: int) -> str:
    cola = Cola()
    with count_py4j_calls() as whole:
        cola.run(df, spec.rules)
    cola_runs = [profile_cola(df, spec.rules, cola)[0] for _ in range(repeats)]
    hand_runs = [profile_hand(df, spec)[0] for _ in range(repeats)]
    (cola_calls, cola_seconds), (hand_calls, hand_seconds) = _median_phases(cola_runs), _median_phases(hand_runs)
    n = len(spec.rules)
    lines = [
        f"Py4J calls per phase, {n} rules (median wall ms of {repeats} runs):",
        "",
        "| Phase | Cola calls | Cola calls/rule | Cola ms | Hand-written calls | Hand calls/rule | Hand ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for phase in PHASES:
        lines.append(
            f"| {phase} | {cola_calls[phase]} | {cola_calls[phase] / n:.1f} | {1000 * cola_seconds[phase]:.1f} "
            f"| {hand_calls[phase]} | {hand_calls[phase] / n:.1f} | {1000 * hand_seconds[phase]:.1f} |"
        )
    ct, ht = sum(cola_calls.values()), sum(hand_calls.values())
    lines.append(
        f"| **total** | {ct} | {ct / n:.1f} | {1000 * sum(cola_seconds.values()):.1f} "
        f"| {ht} | {ht / n:.1f} | {1000 * sum(hand_seconds.values()):.1f} |"
    )
    lines.append(f"\n`cola.run` on the same block, counted whole: {whole.total} calls "
                 f"({'matches' if whole.total == ct else 'DIFFERS from'} the sum of phases).")
    return "\n".join(lines)


def per_rule_type(df: DataFrame, spec: BlockSpec) -> str:
    """Calls to build each check's Columns (aggregations, aliases, distinct sets), by rule type."""
    from cola_core import planner

    cola = Cola()
    checks = cola.parse(spec.rules)
    planner.ensure_columns(df, checks)
    per_type: dict[str, list[int]] = defaultdict(list)
    with cola.sql_scope():
        for index, check in enumerate(checks):
            with count_py4j_calls() as calls:
                planner.plan_block(df, [check])
            key = check.rule_type + (" +where" if check.where else "") + (" +tolerance" if check.tolerance else "")
            per_type[key].append(calls.total)
    lines = ["| Rule type | Rules | Calls per rule (plan_block) |", "|---|---:|---:|"]
    for key, counts in sorted(per_type.items(), key=lambda item: -statistics.mean(item[1])):
        lines.append(f"| {key} | {len(counts)} | {statistics.mean(counts):.1f} |")
    return "\n".join(lines)


def attribution(df: DataFrame, spec: BlockSpec, top: int) -> str:
    calls, _ = profile_cola(df, spec.rules, trace=True)
    lines = [f"Project functions that send the round trips ({calls.total} in all), innermost project frame:", ""]
    lines += ["| Calls | Function:line |", "|---:|---|"]
    lines += [f"| {n} | `{site}` |" for site, n in calls.sites.most_common(top)]
    lines += ["", "The pyspark call each round trip was for (outermost pyspark frame):", ""]
    lines += ["| Calls | pyspark entry point |", "|---:|---|"]
    lines += [f"| {n} | `{name}` |" for name, n in calls.pyspark_calls.most_common(top)]
    lines += ["", f"By command kind: {dict(calls.by_kind)}"]
    return "\n".join(lines)


# -- what-ifs ------------------------------------------------------------------------------


@contextlib.contextmanager
def patched(targets: list[tuple[Any, str, Any]]) -> Iterator[None]:
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in targets]
    for owner, name, value in targets:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def _everywhere(name: str, original: Any, replacement: Any) -> list[tuple[Any, str, Any]]:
    """Every loaded cola_core module that imported ``original`` under ``name``."""
    return [
        (module, name, replacement)
        for module_name, module in list(sys.modules.items())
        if module_name.split(".")[0] == "cola_core" and getattr(module, name, None) is original
    ]


def what_if_cached_column_of() -> list[tuple[Any, str, Any]]:
    """column_of memoised per (DataFrame, name): a block builds each column's Column once."""
    from cola_core import _columns

    original = _columns.column_of
    cache: dict[tuple[int, str], Any] = {}

    def column_of(df, name):
        key = (id(df), name)
        if key not in cache:
            cache[key] = original(df, name)
        return cache[key]

    return _everywhere("column_of", original, column_of)


def what_if_column_by_expr() -> list[tuple[Any, str, Any]]:
    """column_of through F.expr(quoted name) (3 calls), not F.col (13: F.col is @_with_origin)."""
    from cola_core import _columns

    original = _columns.column_of

    def column_of(df, name):
        from pyspark.sql import functions as F

        top = _columns.top_level_name(df.columns, name)
        return F.expr(_columns.quote(top)) if top is not None else original(df, name)

    return _everywhere("column_of", original, column_of)


def what_if_count_if() -> list[tuple[Any, str, Any]]:
    """count_rows(condition) as F.count_if(condition) instead of F.count(F.when(condition, F.lit(1)))."""
    from cola_core.checks.base import BaseCheck

    def count_rows(self, condition=None):
        from pyspark.sql import functions as F

        if condition is None and self.where is None:
            return F.count(F.lit(1))
        return F.count_if(self.in_scope(F.lit(True) if condition is None else condition))

    return [(BaseCheck, "count_rows", count_rows)]


def what_if_shared_scope() -> list[tuple[Any, str, Any]]:
    """The ``where`` Column built once per distinct condition text (scope_column memoised)."""
    from cola_core import _columns

    original = _columns.scope_column
    cache: dict[str | None, Any] = {}

    def scope_column(where):
        if where not in cache:
            cache[where] = original(where)
        return cache[where]

    return _everywhere("scope_column", original, scope_column)


def what_if_no_origin() -> list[tuple[Any, str, Any]]:
    """pyspark's DataFrame-debugging call-site capture off (what every ``@_with_origin`` Column
    method and F.col pays: ~10 round trips each). Not something Cola can set for the user;
    measured to show how much of every plan, Cola's and the hand-written one, it is."""
    import pyspark.errors.utils as utils

    return [(utils, "_enable_debugging_cache", False)]


WHAT_IFS: dict[str, Callable[[], list[tuple[Any, str, Any]]]] = {
    "column_of cached per block": what_if_cached_column_of,
    "column_of via F.expr(quoted)": what_if_column_by_expr,
    "count_rows via F.count_if": what_if_count_if,
    "scope Column built once per where": what_if_shared_scope,
    "pyspark call-site capture off (not a Cola change)": what_if_no_origin,
}


def what_ifs(df: DataFrame, spec: BlockSpec) -> str:
    from cola_core import planner

    base_calls, reference = profile_cola(df, spec.rules)
    started = time.time()
    hand_calls, _ = profile_hand(df, spec)
    lines = [
        "| Change (patched into this process) | plan_block calls | saved | all phases | saved | saved/rule | same numbers |",
        "|---|---:|---:|---:|---:|---:|---|",
        f"| (none: current code) | {base_calls.phases['plan_block']} | - | {base_calls.total} | - | - | - |",
    ]
    n = len(spec.rules)
    for name, make in WHAT_IFS.items():
        with patched(make()):
            calls, numbers = profile_cola(df, spec.rules)
        try:
            assert_same_numbers(spec, reference, numbers, name, freshness_slack=time.time() - started + 1)
            same = "yes"
        except AssertionError as error:
            same = f"NO: {error}"
        saved_plan = base_calls.phases["plan_block"] - calls.phases["plan_block"]
        saved = base_calls.total - calls.total
        lines.append(
            f"| {name} | {calls.phases['plan_block']} | {saved_plan} | {calls.total} | {saved} | {saved / n:.1f} | {same} |"
        )
    with patched(what_if_no_origin()):
        hand_off, _ = profile_hand(df, spec)
    lines.append(f"\nHand-written (b2) for comparison: {hand_calls.total} calls, "
                 f"{hand_off.total} with call-site capture off.")
    # Counted, not patched: what the aliases and the repeated row counts cost.
    traced, _ = profile_cola(df, spec.rules, trace=True)
    alias_calls = sum(n for site, n in traced.sites.items() if site.startswith("cola_core.planner.plan_block"))
    checks = Cola().parse(spec.rules)
    with Cola().sql_scope():
        plan = planner.plan_block(df, checks)
    texts = Counter(str(column).split("'")[1].rsplit(" AS ", 1)[0] for column in plan.aggregates)
    repeated = sum(count - 1 for count in texts.values())
    lines.append(
        f"\nAliases in plan_block (`_cola_<check>_<n>` on {len(plan.aggregates)} aggregates): {alias_calls} calls "
        f"({alias_calls / max(1, len(plan.aggregates)):.1f} per alias)."
    )
    lines.append(
        f"Aggregates that repeat one already in the block: {repeated} of {len(plan.aggregates)} "
        f"(most repeated: {', '.join(f'{t} x{c}' for t, c in texts.most_common(3))})."
    )
    return "\n".join(lines)


def lean_table(df: DataFrame, spec: BlockSpec) -> str:
    """The prototype changes (benchmarks.lean_prototype), each alone and all together."""
    from benchmarks import lean_prototype

    base, reference = profile_cola(df, spec.rules)
    started = time.time()
    n = len(spec.rules)
    lines = [
        "| Changes | ensure_conditions | plan_block | agg (analysis) | all phases | saved | saved/rule | calls/rule | same numbers |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| (none: current code) | {base.phases.get('ensure_conditions', 0)} | {base.phases['plan_block']} "
        f"| {base.phases['agg (analysis)']} | {base.total} | - | - | {base.total / n:.1f} | - |",
    ]
    combos = [(change,) for change in lean_prototype.CHANGES]
    combos += [("no_alias", "dedupe", "memo"), lean_prototype.CHANGES]
    for combo in combos:
        with count_py4j_calls() as calls:
            numbers = lean_prototype.lean_run(df, spec.rules, combo, calls)
        try:
            assert_same_numbers(spec, reference, numbers, "+".join(combo), freshness_slack=time.time() - started + 1)
            same = "yes"
        except AssertionError as error:
            same = f"NO: {error}"
        saved = base.total - calls.total
        lines.append(
            f"| {' + '.join(combo)} | {calls.phases.get('ensure_conditions', 0)} | {calls.phases.get('plan_block', 0)} "
            f"| {calls.phases.get('agg (analysis)', 0)} | {calls.total} | {saved} | {saved / n:.1f} "
            f"| {calls.total / n:.1f} | {same} |"
        )
    return "\n".join(lines)


def lean_timing(df: DataFrame, spec: BlockSpec, rounds: int) -> str:
    """Wall seconds of cola.run, the prototype with every change, and hand-written b2,
    alternating in a fresh order each round."""
    import random

    from benchmarks import lean_prototype
    from benchmarks.plans import agg_plus_distinct, cola_run

    plans = {
        "Cola now": cola_run(Cola(), spec.rules),
        "Cola, all prototype changes": lambda frame: lean_prototype.lean_run(frame, spec.rules, lean_prototype.CHANGES),
        "hand-written (b2)": agg_plus_distinct(spec),
    }
    seconds: dict[str, list[float]] = {name: [] for name in plans}
    python: dict[str, list[float]] = {name: [] for name in plans}
    order = random.Random(rounds)
    for plan in plans.values():
        plan(df)
    for _ in range(rounds):
        for name in order.sample(list(plans), len(plans)):
            cpu, wall = time.process_time(), time.perf_counter()
            plans[name](df)
            seconds[name].append(time.perf_counter() - wall)
            python[name].append(time.process_time() - cpu)
    hand = seconds["hand-written (b2)"]
    lines = ["| Plan | Median s | Paired ratio to b2 | Median Python CPU s |", "|---|---:|---:|---:|"]
    for name in plans:
        paired = statistics.median(a / b for a, b in zip(seconds[name], hand))
        lines.append(f"| {name} | {statistics.median(seconds[name]):.3f} | {paired:.2f}x | {statistics.median(python[name]):.3f} |")
    return "\n".join(lines)


def round_trip_cost(repeats: int = 2000) -> str:
    """Wall microseconds per Py4J round trip on this machine (a cheap JVM call, repeated)."""
    from pyspark.sql import SparkSession

    jvm = SparkSession.getActiveSession()._jvm
    System = jvm.java.lang.System
    System.nanoTime()
    started = time.perf_counter()
    for _ in range(repeats):
        System.nanoTime()
    cheap = (time.perf_counter() - started) / repeats * 1e6
    from pyspark.sql import functions as F

    column = F.col("amount")
    started = time.perf_counter()
    for _ in range(200):
        column.isNull()
    with count_py4j_calls() as calls:
        column.isNull()
    method = (time.perf_counter() - started) / 200 * 1e6
    return (f"One Py4J round trip (System.nanoTime): {cheap:.0f} µs; one Column method such as isNull "
            f"({calls.total} round trips with call-site capture): {method:.0f} µs.")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Profile Cola's Py4J round trips.")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--block", choices=("15", "80", "both"), default="both")
    parser.add_argument("--repeats", type=int, default=5, help="runs per phase timing (default 5)")
    parser.add_argument("--top", type=int, default=25, help="rows of the attribution tables (default 25)")
    parser.add_argument("--timing-rounds", type=int, default=0,
                        help="also time Cola, the prototype and b2 for this many rounds (default 0: no timing)")
    args = parser.parse_args(argv)
    spark = benchmark_session()
    df = spark.read.parquet(str(write_orders(spark, args.rows)))
    blocks = ("15", "80") if args.block == "both" else (args.block,)
    for block in blocks:  # warm every cache (pyspark's, the JVM's) once
        Cola().run(df, BLOCK_SPECS[block].rules)
        profile_hand(df, BLOCK_SPECS[block])
    print(round_trip_cost())
    for block in blocks:
        spec = BLOCK_SPECS[block]
        print(f"\n## {len(spec.rules)} rules, {args.rows:,} rows\n")
        print(phase_table(df, spec, args.repeats))
        print("\nBuilding Columns, by rule type:\n")
        print(per_rule_type(df, spec))
        print()
        print(attribution(df, spec, args.top))
        print("\nWhat-ifs:\n")
        print(what_ifs(df, spec))
        print("\nThe prototype changes (benchmarks/lean_prototype.py), alone and together:\n")
        print(lean_table(df, spec))
        if args.timing_rounds:
            print(f"\nTimed, {args.timing_rounds} rounds:\n")
            print(lean_timing(df, spec, args.timing_rounds))
    spark.stop()


if __name__ == "__main__":
    main()

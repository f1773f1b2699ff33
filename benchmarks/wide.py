"""Time a wide block: hundreds of rules over hundreds of columns, against hand-written plans.

The table has C columns (two of every three doubles, every third text) and R rows, written
once as parquet under the temp folder. Per column triple (a, b, c) the block has eight rules
(``--rules`` asks for more, and they start again at the first triple):
``not_null(a)``, ``range(a)``, ``max(a)``, ``missing_percent(b)``, ``range(b)``, ``avg(b)``,
``not_null(c)`` and ``regex(c)``: 800 rules over 300 columns. In one session, in alternating
order, each round times:

- ``cola``: ``Cola().run`` of the block;
- ``hand-1``: one hand-written ``agg`` of the same expressions (and the row count);
- ``hand-K``: the same expressions in chunks of K (a job each), for each K of ``--chunks``.

Every plan's numbers are checked equal to Cola's. The medians, each plan's ratio to Cola and
the best hand plan are printed; the session is started as Cola's own sessions are (no Python
call sites recorded, ``storage.session.lean_conf``).

    .venv/bin/python -m benchmarks.wide --columns 300 --rows 50000 --rounds 3

Measured figures are in ``docs/performance.md`` ("Wide blocks").
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.session import benchmark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PATTERN = "^[a-z0-9]+$"
METRICS = ("max", "avg", "missing_percent")


def columns_of(count: int) -> list[tuple[str, str]]:
    """(name, type) of the table's columns: every third is text."""
    return [(f"c{n}", "string" if n % 3 == 2 else "double") for n in range(count)]


def table(spark: Any, columns: int, rows: int) -> DataFrame:
    """The wide table, generated once per size: doubles with 1% NULLs and a few NaNs, text
    with a few values the regex refuses."""
    path = Path(tempfile.gettempdir(), f"cola-wide-{columns}x{rows}.parquet")
    if not path.exists():
        exprs = []
        for name, kind in columns_of(columns):
            n = int(name[1:])
            if kind == "double":
                exprs.append(
                    f"CASE WHEN (id + {n}) % 100 = 0 THEN NULL WHEN (id + {n}) % 997 = 0 THEN double('NaN') "
                    f"ELSE ((id * {n + 7}) % 1000) / 10.0 END AS {name}"
                )
            else:
                refused = f"(id + {n}) % 501 = 0"
                exprs.append(f"CASE WHEN {refused} THEN 'A-{n}' ELSE concat('v', id % {n + 11}) END AS {name}")
        spark.range(rows).selectExpr(*exprs).write.parquet(str(path))
    return spark.read.parquet(str(path))


def rules_of(columns: int, count: int | None = None) -> list[dict[str, Any]]:
    """Eight rules per column triple (the module docstring), ``count`` rules in all (8 per
    triple by default): past the last triple they start again, with other bounds."""
    triples = columns // 3
    count = 8 * triples if count is None else count
    rules: list[dict[str, Any]] = []
    for k in range(count):
        n, again = 3 * ((k // 8) % triples), k // (8 * triples)
        a, b, c = f"c{n}", f"c{n + 1}", f"c{n + 2}"
        rules.append(
            [
                {"type": "not_null", "columns": [a]},
                {"type": "range", "column": a, "min": 0, "max": 90 + (n + again) % 10},
                {"type": "max", "column": a, "must_be": f"<= {100 + again}"},
                {"type": "missing_percent", "column": b, "must_be": f"< {5 + again}"},
                {"type": "range", "column": b, "min": 1 + again, "max": 100},
                {"type": "avg", "column": b, "must_be": f"between {10 - again} and 90"},
                {"type": "not_null", "columns": [c]},
                {"type": "regex", "column": c, "pattern": PATTERN},
            ][k % 8]
        )
    return rules


def hand_expressions(rules: list[dict[str, Any]]) -> list[str]:
    """The block as a person would write it in SQL: one aggregate per rule, then the rows."""

    def outside(rule: dict[str, Any]) -> str:
        column = rule["column"]
        within = f"{column} >= {rule['min']} AND {column} <= {rule['max']}"
        return f"{column} IS NOT NULL AND (isnan({column}) OR NOT ({within}))"

    texts = []
    for rule in rules:
        kind = rule["type"]
        if kind == "not_null":
            texts.append(f"count(CASE WHEN {rule['columns'][0]} IS NULL THEN 1 END)")
        elif kind == "missing_percent":
            texts.append(f"count(CASE WHEN {rule['column']} IS NULL THEN 1 END)")
        elif kind == "range":
            texts.append(f"count(CASE WHEN {outside(rule)} THEN 1 END)")
        elif kind in ("max", "avg"):
            texts.append(f"{kind}({rule['column']})")
        else:
            texts.append(f"count(CASE WHEN NOT ifnull({rule['column']} RLIKE '{PATTERN}', false) THEN 1 END)")
    return [*texts, "count(1)"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time a wide block against hand-written plans.")
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--rules", type=int, help="rules in the block (default: 8 per 3 columns)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunks", default="50,100,200,400", help="hand chunk sizes to sweep")
    args = parser.parse_args(argv)

    from pyspark.sql import functions as F

    from cola_core import Cola

    spark = benchmark_session(lean=True)
    df = table(spark, args.columns, args.rows)
    rules = rules_of(args.columns, args.rules)
    cola = Cola()
    expressions = [F.expr(text) for text in hand_expressions(rules)]

    def hand(chunk: int) -> Callable[[], list[Any]]:
        def run() -> list[Any]:
            values: list[Any] = []
            for start in range(0, len(expressions), chunk):
                values += list(df.agg(*expressions[start : start + chunk]).collect()[0])
            return values

        return run

    def run_cola() -> list[Any]:
        # A metric over a column holding NaN has no value (Cola reports it as failed).
        return [
            (math.nan if r.metric_value is None else r.metric_value) if rule["type"] in METRICS else r.failed_count
            for rule, r in zip(rules, cola.run(df, rules), strict=True)
        ]

    plans: dict[str, Callable[[], list[Any]]] = {"cola": run_cola, "hand-1": hand(len(expressions))}
    plans.update({f"hand-{size}": hand(size) for size in map(int, args.chunks.split(","))})
    print(f"{args.columns} columns x {args.rows} rows, {len(rules)} rules, {args.rounds} rounds")
    times: dict[str, list[float]] = {name: [] for name in plans}
    answers: dict[str, list[Any]] = {}
    for round_number in range(args.rounds + 1):  # round 0 warms the JVM and is not counted
        order = list(plans) if round_number % 2 else list(reversed(plans))
        for name in order:
            started = time.perf_counter()
            answers[name] = plans[name]()
            if round_number:
                times[name].append(time.perf_counter() - started)
    hand_answer = answers["hand-1"]
    for name, answer in answers.items():
        if name.startswith("hand"):
            assert list(map(_number, answer)) == list(map(_number, hand_answer)), f"{name} differs from hand-1"
    mine, theirs = list(map(_number, answers["cola"])), list(map(_number, _per_rule(rules, hand_answer)))
    differ = [(rules[n], a, b) for n, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b]
    assert not differ, f"cola differs from the hand plan: {differ[:3]}"
    medians = {name: statistics.median(values) for name, values in times.items()}
    best = min((name for name in medians if name.startswith("hand")), key=medians.__getitem__)
    print(f"{'plan':>10} {'median s':>9} {'x cola':>7}  rounds")
    for name, median in medians.items():
        rounds = " ".join(f"{value:.1f}" for value in times[name])
        print(f"{name:>10} {median:>9.2f} {median / medians['cola']:>7.2f}  {rounds}")
    print(f"best hand plan: {best}; cola / best = {medians['cola'] / medians[best]:.2f}")


def _per_rule(rules: list[dict[str, Any]], row: list[Any]) -> list[Any]:
    """The hand row as Cola reports it: missing_percent as a percent of the rows."""
    rows = row[-1]
    return [
        100.0 * value / rows if rule["type"] == "missing_percent" else value
        for rule, value in zip(rules, row, strict=False)
    ]


def _number(value: Any) -> float | str:
    number = round(float(value), 6)
    return "NaN" if math.isnan(number) else number  # NaN equals NaN here


if __name__ == "__main__":
    main()

"""Time ``Cola().profile`` against a hand-written profile of the same statistics.

The table (parquet, written once under the temp folder) has ``--rows`` rows and 30 columns: a
key ``id``, nine doubles (with NULLs, a few NaN), five small whole-number codes, five text
columns of a few values, five of many (emails, some malformed), and five dates; with
``--columns N``, that mix repeated (and doubles to make up N). In one session,
in alternating order, each round times:

- ``cola``: ``Cola().profile(df)``;
- ``hand``: the same statistics written by hand: one ``df.agg`` of every column's counts,
  HyperLogLog estimate, bounds, moments, lengths and named-format matches (as SQL text), one
  grouped job for the columns of few values, and an exact distinct count of each column that
  may be a key (``id`` and the emails), as Cola counts them.

The hand plan's numbers are checked equal to Cola's first (rows, NULLs, bounds, top values).

    .venv/bin/python -m benchmarks.profile --rows 2000000 --rounds 3

The target: Cola at most 1.2x the hand plan at 2,000,000 rows and 30 columns. A wide table
(1,000 columns: 35 possible keys, 340 columns of few values) must work within the same bound:

    .venv/bin/python -m benchmarks.profile --rows 10000 --columns 1000 --rounds 1 --hand-chunk 50

(One hand-written aggregation of a 1,000-column profile's 11,700 aggregates runs out of the 2g
driver's memory while Spark plans it; in chunks of 50 it runs.)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.session import benchmark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

class Layout:
    """The benchmark table's columns by kind, for ``columns`` columns in all: the 30-column
    mix (a key, 9 doubles, 5 codes, 5 small texts, 5 emails, 5 dates) repeated, and doubles
    to make up the rest."""

    def __init__(self, columns: int) -> None:
        if columns < 30:
            raise SystemExit(f"--columns must be at least 30, got {columns}")
        times = (columns - 1) // 29
        self.doubles = [f"d{n}" for n in range(9 * times + (columns - 1) % 29)]
        self.codes = [f"code{n}" for n in range(5 * times)]
        self.small_text = [f"status{n}" for n in range(5 * times)]
        self.emails = [f"email{n}" for n in range(5 * times)]
        self.dates = [f"day{n}" for n in range(5 * times)]
        self.count = columns


def table(spark: Any, rows: int, layout: Layout) -> DataFrame:
    path = Path(tempfile.gettempdir(), f"cola-profile-{rows}" + ("" if layout.count == 30 else f"x{layout.count}")
                + ".parquet")
    if not path.exists():
        exprs = ["id"]
        exprs += [f"CASE WHEN (id + {n}) % 50 = 0 THEN NULL WHEN (id + {n}) % 9973 = 0 THEN double('NaN') "
                  f"ELSE ((id * {n % 23 + 7}) % 100000) / 100.0 END AS {name}" for n, name in enumerate(layout.doubles)]
        exprs += [f"int((id + {n}) % {3 + n % 5}) AS {name}" for n, name in enumerate(layout.codes)]
        exprs += [f"element_at(array('paid', 'pending', 'shipped', 'refunded'), int((id + {n}) % 4) + 1) AS {name}"
                  for n, name in enumerate(layout.small_text)]
        exprs += [f"CASE WHEN (id + {n}) % 97 = 0 THEN concat('user', id) ELSE concat('user', id, '@example.com') END "
                  f"AS {name}" for n, name in enumerate(layout.emails)]
        exprs += [f"date_add(DATE'2024-01-01', int((id + {n}) % 365)) AS {name}" for n, name in enumerate(layout.dates)]
        spark.range(rows).selectExpr(*exprs).write.parquet(str(path))
    return spark.read.parquet(str(path))


def hand_profile(df: DataFrame, layout: Layout, chunk: int | None = None) -> dict[str, Any]:
    """The statistics Cola's profile holds, as a person would write them in SQL."""
    from cola_core.checks.conditions import NAMED_FORMATS

    def text(pattern: str) -> str:
        return "'" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def distinct(value: str) -> str:
        # A HyperLogLog sketch of 2**14 buckets, as Cola's: approx_count_distinct at that
        # precision costs a second of planning per column.
        return f"hll_sketch_estimate(hll_sketch_agg({value}, 14))"

    def hashed(column: str) -> str:
        return f"CASE WHEN {column} IS NOT NULL THEN xxhash64({column}) END"

    exprs = ["count(1) AS rows"]
    for column in ["id", *layout.codes]:
        exprs += [f"count({column})", distinct(column), f"min({column})", f"max({column})",
                  f"avg({column})", f"stddev_samp({column})"]
    for column in layout.doubles:
        finite = f"CASE WHEN NOT isnan({column}) AND {column} NOT IN (double('inf'), double('-inf')) THEN {column} END"
        exprs += [f"count({column})", distinct(hashed(column)),
                  f"count(CASE WHEN isnan({column}) THEN 1 END)",
                  f"count(CASE WHEN {column} IN (double('inf'), double('-inf')) THEN 1 END)",
                  f"min({finite})", f"max({finite})", f"avg({finite})", f"stddev_samp({finite})"]
    for column in layout.dates:
        exprs += [f"count({column})", distinct(f"unix_date({column})"), f"min({column})", f"max({column})",
                  f"avg(unix_date({column}))", f"stddev_samp(unix_date({column}))"]
    for column in layout.small_text + layout.emails:
        exprs += [f"count({column})", distinct(hashed(column)), f"min(length({column}))",
                  f"max(length({column}))"]
        exprs += [f"count(CASE WHEN {column} RLIKE {text(pattern)} THEN 1 END)" for pattern in NAMED_FORMATS.values()]
    # One aggregation, or (--hand-chunk) one job per chunk of that many aggregates, in order.
    size = chunk or len(exprs)
    chunks = [exprs[first:first + size] for first in range(0, len(exprs), size)]
    row = [value for chunked in chunks for value in df.selectExpr(*chunked).collect()[0]]
    small = layout.codes + layout.small_text
    stacked = ", ".join(f"{n}, CAST({column} AS STRING)" for n, column in enumerate(small))
    stacked_rows = df.selectExpr(f"stack({len(small)}, {stacked}) AS (n, v)")
    counted = stacked_rows.where("v IS NOT NULL").groupBy("n", "v").count()
    top: dict[str, list[tuple[str, int]]] = {column: [] for column in small}
    for grouped in counted.collect():
        top[small[grouped["n"]]].append((grouped["v"], grouped["count"]))
    # The columns whose estimate says they may be keys, counted exactly, a job each, as Cola does.
    keys = {column: df.selectExpr(f"count(DISTINCT {column})").collect()[0][0] for column in ["id", *layout.emails]}
    return {"rows": row[0], "keys": keys,
            "top": {column: sorted(pairs, key=lambda pair: (-pair[1], pair[0])) for column, pairs in top.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time Cola().profile against a hand-written profile.")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--columns", type=int, default=30, help="columns of the table (at least 30)")
    parser.add_argument(
        "--hand-chunk", type=int, default=None, metavar="N",
        help="the hand plan's aggregates in jobs of N each, rather than one aggregation (which runs out of "
        "a 2g driver's memory at 1,000 columns)",
    )
    args = parser.parse_args(argv)

    from cola_core import Cola

    spark = benchmark_session(lean=True)
    layout = Layout(args.columns)
    df = table(spark, args.rows, layout)
    plans = {"cola": lambda: Cola().profile(df), "hand": lambda: hand_profile(df, layout, args.hand_chunk)}
    times: dict[str, list[float]] = {name: [] for name in plans}
    answers: dict[str, Any] = {}
    for round_number in range(args.rounds + 1):  # round 0 warms the JVM and is not counted
        for name in (list(plans) if round_number % 2 else list(reversed(plans))):
            started = time.perf_counter()
            answers[name] = plans[name]()
            if round_number:
                times[name].append(time.perf_counter() - started)
    profile, hand = answers["cola"], answers["hand"]
    assert profile.rows == hand["rows"], (profile.rows, hand["rows"])
    for column, distinct in hand["keys"].items():
        assert (profile.column(column).distinct, profile.column(column).distinct_exact) == (distinct, True), column
    for column, pairs in hand["top"].items():
        assert list(profile.column(column).top_values or ()) == pairs, column
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.rows} rows x {layout.count} columns, {args.rounds} rounds")
    for name, median in medians.items():
        print(f"{name:>5} {median:8.2f} s  rounds " + " ".join(f"{value:.1f}" for value in times[name]))
    print(f"cola / hand = {medians['cola'] / medians['hand']:.2f}")


if __name__ == "__main__":
    main()

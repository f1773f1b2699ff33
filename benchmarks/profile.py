"""Time ``Cola().profile`` against a hand-written profile of the same statistics.

The table (parquet, written once under the temp folder) has ``--rows`` rows and 30 columns: a
key ``id``, nine doubles (with NULLs, a few NaN), five small whole-number codes, five text
columns of a few values, five of many (emails, some malformed), and five dates. In one session,
in alternating order, each round times:

- ``cola``: ``Cola().profile(df)``;
- ``hand``: the same statistics written by hand: one ``df.agg`` of every column's counts,
  HyperLogLog estimate, bounds, moments, lengths and named-format matches (as SQL text), one
  grouped job for the columns of few values, and an exact distinct count of each column that
  may be a key (``id`` and the emails), as Cola counts them.

The hand plan's numbers are checked equal to Cola's first (rows, NULLs, bounds, top values).

    .venv/bin/python -m benchmarks.profile --rows 2000000 --rounds 3

The target: Cola at most 1.2x the hand plan at 2,000,000 rows and 30 columns.
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

DOUBLES = [f"d{n}" for n in range(9)]
CODES = [f"code{n}" for n in range(5)]
SMALL_TEXT = [f"status{n}" for n in range(5)]
EMAILS = [f"email{n}" for n in range(5)]
DATES = [f"day{n}" for n in range(5)]


def table(spark: Any, rows: int) -> DataFrame:
    path = Path(tempfile.gettempdir(), f"cola-profile-{rows}.parquet")
    if not path.exists():
        exprs = ["id"]
        exprs += [f"CASE WHEN (id + {n}) % 50 = 0 THEN NULL WHEN (id + {n}) % 9973 = 0 THEN double('NaN') "
                  f"ELSE ((id * {n + 7}) % 100000) / 100.0 END AS {name}" for n, name in enumerate(DOUBLES)]
        exprs += [f"int((id + {n}) % {3 + n}) AS {name}" for n, name in enumerate(CODES)]
        exprs += [f"element_at(array('paid', 'pending', 'shipped', 'refunded'), int((id + {n}) % 4) + 1) AS {name}"
                  for n, name in enumerate(SMALL_TEXT)]
        exprs += [f"CASE WHEN (id + {n}) % 97 = 0 THEN concat('user', id) ELSE concat('user', id, '@example.com') END "
                  f"AS {name}" for n, name in enumerate(EMAILS)]
        exprs += [f"date_add(DATE'2024-01-01', int((id + {n}) % 365)) AS {name}" for n, name in enumerate(DATES)]
        spark.range(rows).selectExpr(*exprs).write.parquet(str(path))
    return spark.read.parquet(str(path))


def hand_profile(df: DataFrame) -> dict[str, Any]:
    """The statistics Cola's profile holds, as a person would write them in SQL."""
    from cola_core.checks.conditions import NAMED_FORMATS

    def text(pattern: str) -> str:
        return "'" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"

    exprs = ["count(1) AS rows"]
    for column in ["id", *CODES]:
        exprs += [f"count({column})", f"approx_count_distinct({column}, 0.01)", f"min({column})", f"max({column})",
                  f"avg({column})", f"stddev_samp({column})"]
    for column in DOUBLES:
        finite = f"CASE WHEN NOT isnan({column}) AND {column} NOT IN (double('inf'), double('-inf')) THEN {column} END"
        exprs += [f"count({column})", f"approx_count_distinct({column}, 0.01)",
                  f"count(CASE WHEN isnan({column}) THEN 1 END)",
                  f"count(CASE WHEN {column} IN (double('inf'), double('-inf')) THEN 1 END)",
                  f"min({finite})", f"max({finite})", f"avg({finite})", f"stddev_samp({finite})"]
    for column in DATES:
        exprs += [f"count({column})", f"approx_count_distinct({column}, 0.01)", f"min({column})", f"max({column})",
                  f"avg(unix_date({column}))", f"stddev_samp(unix_date({column}))"]
    for column in SMALL_TEXT + EMAILS:
        exprs += [f"count({column})", f"approx_count_distinct({column}, 0.01)", f"min(length({column}))",
                  f"max(length({column}))"]
        exprs += [f"count(CASE WHEN {column} RLIKE {text(pattern)} THEN 1 END)" for pattern in NAMED_FORMATS.values()]
    row = df.selectExpr(*exprs).collect()[0]
    small = CODES + SMALL_TEXT
    stacked = ", ".join(f"{n}, CAST({column} AS STRING)" for n, column in enumerate(small))
    stacked_rows = df.selectExpr(f"stack({len(small)}, {stacked}) AS (n, v)")
    counted = stacked_rows.where("v IS NOT NULL").groupBy("n", "v").count()
    top: dict[str, list[tuple[str, int]]] = {column: [] for column in small}
    for grouped in counted.collect():
        top[small[grouped["n"]]].append((grouped["v"], grouped["count"]))
    # The columns whose estimate says they may be keys, counted exactly, a job each, as Cola does.
    keys = {column: df.selectExpr(f"count(DISTINCT {column})").collect()[0][0] for column in ["id", *EMAILS]}
    return {"rows": row[0], "keys": keys,
            "top": {column: sorted(pairs, key=lambda pair: (-pair[1], pair[0])) for column, pairs in top.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time Cola().profile against a hand-written profile.")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    from cola_core import Cola

    spark = benchmark_session(lean=True)
    df = table(spark, args.rows)
    plans = {"cola": lambda: Cola().profile(df), "hand": lambda: hand_profile(df)}
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
    print(f"{args.rows} rows x 30 columns, {args.rounds} rounds")
    for name, median in medians.items():
        print(f"{name:>5} {median:8.2f} s  rounds " + " ".join(f"{value:.1f}" for value in times[name]))
    print(f"cola / hand = {medians['cola'] / medians['hand']:.2f}")


if __name__ == "__main__":
    main()

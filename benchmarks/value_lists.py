"""Time rules with long ``valid_values`` lists: how building and analysing the list scales.

Two ``invalid_count`` rules (a string column and an int column), each with a list of N values,
over 100 rows, in one warm session: ``run`` and ``split`` (with both outputs counted), and the
Py4J round trips ``run`` makes. The table is tiny on purpose: what is timed is the driver's
cost of a long list, which does not depend on the rows.

    .venv/bin/python -m benchmarks.value_lists 10000 100000

Measured figures are in ``docs/performance.md`` ("Long value lists").
"""

from __future__ import annotations

import argparse
import time

from benchmarks.py4j_calls import count_py4j_calls
from benchmarks.session import benchmark_session


def rules_of(size: int) -> list[dict]:
    return [
        {"type": "invalid_count", "column": "s", "valid_values": [f"v{n}" for n in range(size)], "must_be": "= 0"},
        {"type": "invalid_count", "column": "id", "valid_values": list(range(5, size)), "must_be": "= 0"},
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time rules with long valid_values lists.")
    parser.add_argument("sizes", nargs="+", type=int, metavar="N", help="values per list")
    args = parser.parse_args(argv)

    from cola_core import Cola

    spark = benchmark_session()
    df = spark.createDataFrame([(n, f"v{n}") for n in range(100)], "id int, s string")
    cola = Cola()
    cola.run(df, rules_of(10))  # warm: the session's first job, pyspark's lookups
    print(f"{'values':>8} {'run s':>7} {'split s':>8} {'py4j calls':>11}")
    for size in args.sizes:
        rules = rules_of(size)
        with count_py4j_calls() as calls:
            started = time.perf_counter()
            results = cola.run(df, rules)
            ran = time.perf_counter() - started
        started = time.perf_counter()
        valid, invalid = cola.split(df, rules)
        counts = (valid.count(), invalid.count())
        split = time.perf_counter() - started
        assert counts == (95, 5), counts  # ids 0-4 are outside the int list
        assert [r.severity for r in results] == ["pass", "fail"], results
        print(f"{size:>8} {ran:>7.2f} {split:>8.2f} {calls.total:>11}")


if __name__ == "__main__":
    main()

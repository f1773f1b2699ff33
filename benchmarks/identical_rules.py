"""How long ``Cola().parse`` takes on a block of identical rules (aliases of one rule, as a YAML
anchor repeats it) against a block of as many different rules: both linear in the block.

Each identical rule after the first gets the next ``#n`` suffix on its code and rule id
(``ruleset.naming``); before the suffixes were found by counting up from ``#2`` for every rule,
5,000 identical rules took about 22 s and 10,000 about 100 s, against 0.3 s for 5,000
different ones.

    python -m benchmarks.identical_rules            # 5,000 and 10,000 rules, best of 3
    python -m benchmarks.identical_rules 2000 4000  # other sizes

Pure Python: no Spark session is started.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from cola_core import Cola

__all__ = ["different_rules", "identical_rules", "main"]


def identical_rules(count: int) -> list[dict[str, Any]]:
    """``count`` times one rule object, as YAML aliases of one anchor give it."""
    rule = {"type": "not_null", "columns": ["id"]}
    return [rule] * count


def different_rules(count: int) -> list[dict[str, Any]]:
    """``count`` rules of the same type, each over its own column."""
    return [{"type": "not_null", "columns": [f"c{index}"]} for index in range(count)]


def _best_of(runs: int, block: list[dict[str, Any]]) -> float:
    cola = Cola()
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        cola.parse(block)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: list[str]) -> None:
    sizes = [int(size) for size in argv] or [5_000, 10_000]
    for size in sizes:
        identical, different = _best_of(3, identical_rules(size)), _best_of(3, different_rules(size))
        print(f"{size:>6,} rules: identical {identical:6.2f} s, different {different:6.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])

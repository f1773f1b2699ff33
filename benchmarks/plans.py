"""The plans the benchmark compares, each returning the numbers a block measures, in rule order.

- ``cola_run``: (a) ``Cola.run`` on the block;
- ``single_agg``: (b1) one hand-written ``df.agg`` with the distinct counts inside it;
- ``agg_plus_distinct``: (b2) a hand-written plain ``df.agg`` plus one distinct aggregation
  per column set;
- ``one_action_per_check``: (c) every check runs its own Spark action(s), as the engine did
  before it had a planner.

A number is what the rule measured: its metric value, or its failed count for a rule with
none. The numbers are a list in rule order (codes repeat in the 80-rule block), so a
hand-written plan can be checked against Cola number by number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchmarks import hand80
from benchmarks.block import BLOCK, BLOCK_80, CPF_PATTERN
from benchmarks.generate import STATUSES
from cola_core import CheckResult, Cola
from cola_core.checks.conditions import NAMED_FORMATS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["BLOCK_SPECS", "BlockSpec", "Plan", "agg_plus_distinct", "assert_same_numbers", "cola_run",
           "numbers_of", "one_action_per_check", "single_agg"]

Measures = list[Any]
Plan = Callable[["DataFrame"], Measures]


@dataclass(frozen=True)
class BlockSpec:
    """A rule block and its best hand-written equivalent.

    Attributes:
        name: ``"15"`` or ``"80"``, as ``--block`` names it.
        rules: the block as a user writes it.
        aggregates: the hand-written plain aggregates, aliased, for one ``df.agg``.
        distinct_sets: name -> columns whose distinct rows the block counts.
        inline_distinct: the distinct counts as aggregates inside the agg (b1), aliased by name.
        inline_counts: the distinct counts from b1's row (count_distinct skips NULL).
        measures: the agg's row and the distinct counts -> the block's numbers, in rule order.
    """

    name: str
    rules: list[dict[str, Any]]
    aggregates: Callable[[], list[Column]]
    distinct_sets: Mapping[str, tuple[str, ...]]
    inline_distinct: Callable[[], list[Column]]
    inline_counts: Callable[[Mapping[str, Any]], dict[str, int]]
    measures: Callable[[Mapping[str, Any], Mapping[str, int]], Measures]

    def is_freshness(self, index: int) -> bool:
        return self.rules[index]["type"] == "freshness"


def numbers_of(results: Sequence[CheckResult]) -> Measures:
    """What each rule measured: the metric value, or the failed count for a non-metric rule."""
    return [r.failed_count if r.metric_value is None else r.metric_value for r in results]


def cola_run(cola: Cola, rules: list[dict[str, Any]]) -> Plan:
    return lambda df: numbers_of(cola.run(df, rules))


def one_action_per_check(cola: Cola, rules: list[dict[str, Any]]) -> Plan:
    def run(df: DataFrame) -> Measures:
        # Built-in checks scope themselves (``where``) inside their own aggregation.
        return numbers_of([check.finish(check.run(df)) for check in cola.parse(rules)])

    return run


def single_agg(spec: BlockSpec) -> Plan:
    """(b1): the distinct counts inside the one agg."""

    def run(df: DataFrame) -> Measures:
        row = df.agg(*spec.aggregates(), *spec.inline_distinct()).first().asDict()
        return spec.measures(row, spec.inline_counts(row))

    return run


def agg_plus_distinct(spec: BlockSpec) -> Plan:
    """(b2): the plain agg, and each distinct column set in an aggregation of its own."""

    def run(df: DataFrame) -> Measures:
        distinct = {name: df.select(*columns).distinct().count() for name, columns in spec.distinct_sets.items()}
        row = df.agg(*spec.aggregates()).first().asDict()
        return spec.measures(row, distinct)

    return run


# -- the 15-rule block -------------------------------------------------------------------


def _plain_aggregates_15() -> list[Column]:
    """What a person writes for the 13 plain rules: one Column per number."""
    from pyspark.sql import functions as F

    def rows_where(condition: Column) -> Column:
        return F.count(F.when(condition, F.lit(1)))

    amount, cpf, email, status = F.col("amount"), F.col("cpf"), F.col("email"), F.col("status")
    return [
        F.count(F.lit(1)).alias("rows"),
        rows_where(F.col("order_id").isNull()).alias("null_order_ids"),
        rows_where(F.col("customer_id").isNull()).alias("null_customer_ids"),
        rows_where(amount < 0).alias("negative_amounts"),
        rows_where(cpf.isNull() | ~cpf.rlike(CPF_PATTERN)).alias("bad_cpfs"),
        rows_where(cpf.isNull()).alias("missing_cpfs"),
        rows_where(email.isNotNull() & ~email.rlike(NAMED_FORMATS["email"])).alias("invalid_emails"),
        rows_where(status.isNotNull() & ~status.isin(*STATUSES)).alias("invalid_statuses"),
        F.avg(amount).alias("avg_amount"),
        F.min(amount).alias("min_amount"),
        F.max(amount).alias("max_amount"),
        F.stddev_samp(amount).alias("stddev_amount"),
        (F.unix_micros(F.current_timestamp()) - F.unix_micros(F.max("created_at"))).alias("age_micros"),
    ]


def _inline_distinct_15() -> list[Column]:
    from pyspark.sql import functions as F

    return [F.count_distinct("order_id").alias("ids")]


def _measures_15(row: Mapping[str, Any], distinct: Mapping[str, int]) -> Measures:
    rows = row["rows"]
    duplicates = rows - distinct["ids"]
    return [
        rows,
        row["null_order_ids"],
        row["null_customer_ids"],
        duplicates,
        row["negative_amounts"],
        row["bad_cpfs"],
        100.0 * row["missing_cpfs"] / rows,
        100.0 * row["invalid_emails"] / rows,
        row["invalid_statuses"],
        row["avg_amount"],
        row["min_amount"],
        row["max_amount"],
        row["stddev_amount"],
        duplicates,
        row["age_micros"] / 1_000_000,
    ]


def _inline_counts_80(row: Mapping[str, Any]) -> dict[str, int]:
    # customer_id is the one distinct column with NULLs: distinct() counts NULL as a value.
    return {
        "ids": row["ids"],
        "customers": row["customers"] + (1 if row["null_customer_id"] else 0),
        "statuses": row["statuses"],
    }


BLOCK_SPECS: dict[str, BlockSpec] = {
    "15": BlockSpec(
        "15", BLOCK, _plain_aggregates_15, {"ids": ("order_id",)}, _inline_distinct_15,
        # order_id has no NULLs, so the plain count_distinct equals Cola's NULL-as-a-value count.
        lambda row: {"ids": row["ids"]}, _measures_15,
    ),
    "80": BlockSpec(
        "80", BLOCK_80, hand80.aggregates, hand80.DISTINCT_SETS, hand80.inline_distinct_aggregates,
        _inline_counts_80, hand80.measures,
    ),
}


def assert_same_numbers(
    spec: BlockSpec, expected: Measures, actual: Measures, label: str, freshness_slack: float
) -> None:
    """Fail loudly when a plan measures something else than Cola.

    Args:
        freshness_slack: seconds between the two measurements; freshness is measured against
            each query's own ``current_timestamp()``, so it may differ by that much.
    """
    if len(expected) != len(actual):
        raise AssertionError(f"{label} measures {len(actual)} numbers, Cola measures {len(expected)}")
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        if spec.is_freshness(index):
            same = abs(got - want) <= freshness_slack
        elif isinstance(want, float) or isinstance(got, float):
            same = math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
        else:
            same = got == want
        if not same:
            rule = spec.rules[index]
            raise AssertionError(f"{label} measures rule {index + 1} ({rule}) = {got!r}, Cola measures {want!r}")

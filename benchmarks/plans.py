"""The plans the benchmark compares, each returning the 15 numbers the block measures.

- ``cola_run``: (a) ``Cola.run`` on the block;
- ``single_agg``: (b1) one hand-written ``df.agg`` with the distinct count inside it;
- ``agg_plus_distinct``: (b2) a hand-written plain ``df.agg`` plus one distinct aggregation;
- ``one_action_per_check``: (c) every check runs its own Spark action(s), as the engine did
  before it had a planner.

The numbers are keyed by rule code, so a hand-written plan can be checked against Cola.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from benchmarks.block import BLOCK, CPF_PATTERN
from benchmarks.generate import STATUSES
from cola_core import CheckResult, Cola
from cola_core.checks.validity import NAMED_FORMATS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["FRESHNESS", "Plan", "agg_plus_distinct", "assert_same_numbers", "cola_run", "numbers_of",
           "one_action_per_check", "single_agg"]

Measures = dict[str, float]
Plan = Callable[["DataFrame"], Measures]

FRESHNESS = "freshness(created_at)"


def numbers_of(results: Sequence[CheckResult]) -> Measures:
    """What each rule measured: the metric value, or the failed count for a non-metric rule."""
    return {r.code: r.failed_count if r.metric_value is None else r.metric_value for r in results}


def cola_run(cola: Cola) -> Plan:
    return lambda df: numbers_of(cola.run(df, BLOCK))


def one_action_per_check(cola: Cola) -> Plan:
    def run(df: DataFrame) -> Measures:
        return numbers_of([check.finish(check.run(df)) for check in cola.parse(BLOCK)])

    return run


def _plain_aggregates() -> list[Column]:
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


def _measures(row: Mapping[str, Any], distinct_ids: int) -> Measures:
    rows = row["rows"]
    duplicates = rows - distinct_ids
    return {
        "row_count": rows,
        "not_null(order_id)": row["null_order_ids"],
        "not_null(customer_id)": row["null_customer_ids"],
        "unique(order_id)": duplicates,
        "range(amount,0,)": row["negative_amounts"],
        f"regex(cpf,{CPF_PATTERN})": row["bad_cpfs"],
        "missing_percent(cpf)": 100.0 * row["missing_cpfs"] / rows,
        "invalid_percent(email)": 100.0 * row["invalid_emails"] / rows,
        "invalid_count(status)": row["invalid_statuses"],
        "avg(amount)": row["avg_amount"],
        "min(amount)": row["min_amount"],
        "max(amount)": row["max_amount"],
        "stddev(amount)": row["stddev_amount"],
        "duplicate_count(order_id)": duplicates,
        FRESHNESS: row["age_micros"] / 1_000_000,
    }


def single_agg(df: DataFrame) -> Measures:
    """(b1): the distinct count inside the one agg. order_id has no NULLs, so the plain
    ``count_distinct`` equals Cola's NULL-as-a-value count."""
    from pyspark.sql import functions as F

    row = df.agg(*_plain_aggregates(), F.count_distinct("order_id").alias("distinct_ids")).first()
    return _measures(row.asDict(), row["distinct_ids"])


def agg_plus_distinct(df: DataFrame) -> Measures:
    """(b2): the plain agg, and the distinct ids in an aggregation of their own."""
    distinct_ids = df.select("order_id").distinct().count()
    row = df.agg(*_plain_aggregates()).first()
    return _measures(row.asDict(), distinct_ids)


def assert_same_numbers(expected: Measures, actual: Measures, label: str, freshness_slack: float) -> None:
    """Fail loudly when a plan measures something else than Cola.

    Args:
        freshness_slack: seconds between the two measurements; freshness is measured against
            each query's own ``current_timestamp()``, so it may differ by that much.
    """
    if expected.keys() != actual.keys():
        raise AssertionError(f"{label} measures {sorted(actual)}, Cola measures {sorted(expected)}")
    for key, want in expected.items():
        got = actual[key]
        if key == FRESHNESS:
            same = abs(got - want) <= freshness_slack
        elif isinstance(want, float) or isinstance(got, float):
            same = math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
        else:
            same = got == want
        if not same:
            raise AssertionError(f"{label} measures {key} = {got!r}, Cola measures {want!r}")

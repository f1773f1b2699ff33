"""The best hand-written plan for ``BLOCK_80``: what a person writes with the DataFrame API to
measure the same 80 numbers, in the same order.

A person shares what the rules share: one row count, one count per ``where`` scope, one
aggregate for two rules that measure the same thing (``range(amount, min 0)`` with and
without a tolerance; ``not_null(email)`` and ``missing_count(email)``). NULL is guarded
where the column has NULLs (customer_id, email, cpf) and the rule's semantics need it; the
generated table has no NaN, so no NaN guards (as in the 15-rule hand-written plan).

``aggregates()`` is the one ``df.agg``; ``DISTINCT_SETS`` the column sets counted with
``df.select(cols).distinct().count()``; ``measures(v, d)`` turns the agg's row ``v`` and the
distinct counts ``d`` into the 80 numbers Cola reports (metric value, else failed count).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from benchmarks.block import CPF_PATTERN, EMAIL_PATTERN
from benchmarks.generate import STATUSES
from cola_core.checks.conditions import NAMED_FORMATS

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["DISTINCT_SETS", "aggregates", "inline_distinct_aggregates", "measures"]

# name -> the columns whose distinct rows are counted (NULL as one value, as distinct() does).
DISTINCT_SETS: dict[str, tuple[str, ...]] = {
    "ids": ("order_id",),
    "customers": ("customer_id",),
    "statuses": ("status",),
}


def aggregates() -> list[Column]:
    """The one ``df.agg`` of the hand-written plan, each aggregate aliased."""
    from pyspark.sql import functions as F

    def rows_where(condition: Column) -> Column:
        return F.count(F.when(condition, F.lit(1)))

    order_id, customer_id, email, cpf = F.col("order_id"), F.col("customer_id"), F.col("email"), F.col("cpf")
    amount, status, created_at = F.col("amount"), F.col("status"), F.col("created_at")
    paid, pending = status == "paid", status == "pending"
    shipped, cancelled = status == "shipped", status == "cancelled"
    no_customer = customer_id.isNull()
    email_null, cpf_null = email.isNull(), cpf.isNull()
    bad_email = email.isNotNull() & ~email.rlike(NAMED_FORMATS["email"])
    newest = F.max(created_at)
    paid_newest = F.max(F.when(paid, created_at))
    now = F.unix_micros(F.current_timestamp())

    def ts(text: str) -> Column:
        return F.lit(text).cast("timestamp")

    named = {
        "rows": F.count(F.lit(1)),
        "rows_paid": rows_where(paid),
        "rows_pending": rows_where(pending),
        "rows_positive_amount": rows_where(amount >= 0),
        "null_order_id": rows_where(order_id.isNull()),
        "null_customer_id": rows_where(no_customer),
        "null_email": rows_where(email_null),
        "null_cpf": rows_where(cpf_null),
        "null_amount": rows_where(amount.isNull()),
        "null_status": rows_where(status.isNull()),
        "null_created_at": rows_where(created_at.isNull()),
        "paid_null_customer": rows_where(paid & no_customer),
        "big_null_cpf": rows_where((amount > 100) & cpf_null),
        "negative_amount": rows_where(amount < 0),
        "amount_above_10000": rows_where(amount > 10000),
        "amount_beyond_1000": rows_where((amount < -1000) | (amount > 1000)),
        "customer_out_of_range": rows_where((customer_id < 0) | (customer_id > 99999)),
        "negative_order_id": rows_where(order_id < 0),
        "created_out_of_range": rows_where((created_at < ts("2023-01-01")) | (created_at > ts("2025-01-01"))),
        "shipped_negative": rows_where(shipped & (amount < 0)),
        "positive_customer_below_1": rows_where((amount > 0) & (customer_id < 1)),
        "bad_cpf": rows_where(cpf_null | ~cpf.rlike(CPF_PATTERN)),
        "email_without_at": rows_where(email_null | ~email.rlike("@")),
        "status_not_lower": rows_where(~status.rlike("^[a-z]+$")),
        "open_email_not_user": rows_where((status != "cancelled") & (email_null | ~email.rlike("^user[0-9]+"))),
        "status_blank": rows_where(status.isin("", "??")),
        "cpf_null_or_zero": rows_where(cpf_null | (cpf == "00000000000")),
        "pending_null_customer": rows_where(pending & no_customer),
        "status_invalid": rows_where(~status.isin(*STATUSES)),
        "email_invalid": rows_where(bad_email),
        "cpf_invalid": rows_where(cpf.isNotNull() & ~cpf.rlike(NAMED_FORMATS["cpf"])),
        "cpf_not_11": rows_where(F.length(cpf) != 11),
        "amount_invalid": rows_where((amount < 0) | (amount > 1000)),
        "email_too_long": rows_where(F.length(email) > 30),
        "status_junk": rows_where(status.isin("??", "", "PAID ")),
        "email_not_example": rows_where(email.isNotNull() & ~email.rlike(EMAIL_PATTERN)),
        "positive_status_invalid": rows_where((amount >= 0) & ~status.isin(*STATUSES)),
        "avg_amount": F.avg(amount),
        "min_amount": F.min(amount),
        "max_amount": F.max(amount),
        "sum_amount": F.sum(amount),
        "stddev_amount": F.stddev_samp(amount),
        "avg_paid_amount": F.avg(F.when(paid, amount)),
        "min_customer": F.min(customer_id),
        "max_customer": F.max(customer_id),
        "avg_customer": F.avg(customer_id),
        "sum_customer": F.sum(customer_id),
        "min_order_id": F.min(order_id),
        "max_order_id": F.max(order_id),
        "stddev_customer": F.stddev_samp(customer_id),
        "max_cancelled_amount": F.max(F.when(cancelled, amount)),
        "avg_anonymous_amount": F.avg(F.when(no_customer, amount)),
        "age_micros": now - F.unix_micros(newest),
        "paid_age_micros": now - F.unix_micros(paid_newest),
        "zero_amount": rows_where(amount == 0),
        "short_email": rows_where(email_null | (F.length(email) <= 5)),
        "unpaid_negative": rows_where(~status.isin("paid", "shipped") & (amount < 0)),
        "created_in_future": rows_where(created_at > ts("2025-01-01 00:00:00")),
        "customer_too_big": rows_where(customer_id >= 100000),
        "pending_big_amount": rows_where(pending & (amount >= 500)),
        "cpf_not_bigint": rows_where(cpf.isNotNull() & cpf.try_cast("bigint").isNull()),
        "email_not_int": rows_where(email.isNotNull() & email.try_cast("int").isNull()),
        "cpf_not_decimal": rows_where(cpf.isNotNull() & cpf.try_cast("decimal(11,0)").isNull()),
        "statuses_seen": F.collect_set(F.when(status.isin(*STATUSES), status)),
        "wanted_statuses_seen": F.collect_set(F.when(status.isin("paid", "refunded"), status)),
        "paid_email_invalid": rows_where(paid & bad_email),
        "cpf_not_digits": rows_where(cpf_null | ~cpf.rlike("^[0-9]+$")),
    }
    return [column.alias(name) for name, column in named.items()]


def inline_distinct_aggregates() -> list[Column]:
    """The distinct counts inside the agg, for the single-agg variant (count_distinct skips
    NULL; ``measures`` adds the NULL back for customer_id, the only set with NULLs)."""
    from pyspark.sql import functions as F

    return [F.count_distinct(*columns).alias(name) for name, columns in DISTINCT_SETS.items()]


def _percent(part: int, whole: int) -> float:
    return 100.0 * part / whole


def _missing(seen: Any, wanted: tuple[str, ...]) -> int:
    return len(set(wanted) - set(seen or []))


def measures(v: Mapping[str, Any], d: Mapping[str, int]) -> list[Any]:
    """The 80 numbers, in the block's order."""
    rows = v["rows"]
    excess_ids, excess_customers = rows - d["ids"], rows - d["customers"]
    return [
        # 1-3
        rows, 0 if rows >= 1 else 1, 0,
        # 4-14
        v["null_order_id"], v["null_customer_id"], v["null_email"], v["null_cpf"], v["null_amount"],
        v["null_status"], v["null_created_at"], v["null_email"] + v["null_cpf"], v["paid_null_customer"],
        v["null_customer_id"], v["big_null_cpf"],
        # 15-19
        excess_ids, excess_ids, _percent(excess_customers, rows), d["statuses"], excess_customers,
        # 20-27
        v["negative_amount"], v["amount_above_10000"], v["amount_beyond_1000"], v["customer_out_of_range"],
        v["negative_order_id"], v["created_out_of_range"], v["shipped_negative"], v["positive_customer_below_1"],
        # 28-31
        v["bad_cpf"], v["email_without_at"], v["status_not_lower"], v["open_email_not_user"],
        # 32-37
        v["null_customer_id"], _percent(v["null_email"], rows), v["status_blank"],
        _percent(v["cpf_null_or_zero"], rows), _percent(v["pending_null_customer"], v["rows_pending"]),
        v["null_created_at"],
        # 38-47
        v["status_invalid"], _percent(v["email_invalid"], rows), v["cpf_invalid"], v["cpf_not_11"],
        v["amount_invalid"], _percent(v["email_too_long"], rows), v["status_junk"], v["email_not_example"],
        _percent(v["positive_status_invalid"], v["rows_positive_amount"]), v["customer_out_of_range"],
        # 48-62
        v["avg_amount"], v["min_amount"], v["max_amount"], v["sum_amount"], v["stddev_amount"],
        v["avg_paid_amount"], v["min_customer"], v["max_customer"], v["avg_customer"], v["sum_customer"],
        v["min_order_id"], v["max_order_id"], v["stddev_customer"], v["max_cancelled_amount"],
        v["avg_anonymous_amount"],
        # 63-64
        v["age_micros"] / 1_000_000, v["paid_age_micros"] / 1_000_000,
        # 65-71
        v["zero_amount"], v["short_email"], v["negative_order_id"], v["created_in_future"],
        v["unpaid_negative"], v["customer_too_big"], v["pending_big_amount"],
        # 72-74
        v["cpf_not_bigint"], v["email_not_int"], v["cpf_not_decimal"],
        # 75-76
        _missing(v["statuses_seen"], STATUSES), _missing(v["wanted_statuses_seen"], ("paid", "refunded")),
        # 77-80
        v["negative_amount"], _percent(v["paid_email_invalid"], v["rows_paid"]), v["cpf_not_digits"],
        v["null_email"],
    ]

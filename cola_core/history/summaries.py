"""What the history says over time: the monitoring summaries and the HTML report's trends and index.

The summaries (``daily_summary``, ``dimension_summary``, ``rule_trend``, ``top_offenders``) are
what ``cola history`` prints and users call; ``history_trends`` and ``index_rows`` are what
``cola_core.report.pages`` draws. Each reads the rows that count, the latest attempt of each
data interval with excluded runs left out (``cola_core.history.index``), and groups and orders
by the data's date (UTC), never by when a run ran.

Apart from ``cola_core.history.store`` because they only read it, and are queries over many
runs rather than part of reading or writing one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cola_core.errors import ColaError
from cola_core.history.index import TrendPoint, index_entries
from cola_core.history.store import collected, read_history
from cola_core.storage.specs import OutputSpec, history_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "daily_summary",
    "dimension_summary",
    "history_trends",
    "index_rows",
    "rule_trend",
    "top_offenders",
]


# -- monitoring: summaries over the store ------------------------------------------------------


def _counted(history: DataFrame) -> DataFrame:
    """The rows that count: per dataset, rule, kind, map index and data interval, the latest
    attempt's (excluded runs left out), as the baselines and the index read the store."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    interval = ("dataset", "rule_id", "run_kind", "map_index", "data_date")
    latest = Window.partitionBy(*interval).orderBy(F.col("validated_at").desc(), F.col("run_id").desc())
    return (
        history.where(~F.coalesce(F.col("excluded"), F.lit(False)))
        .withColumn("_attempt", F.row_number().over(latest))
        .where(F.col("_attempt") == 1)
        .drop("_attempt")
    )


def _utc_date(column: str) -> Any:
    """The UTC calendar date of a timestamp column, whatever the session's time zone (which
    ``to_date`` would use: a midnight-UTC interval would fall on the day before in New York)."""
    from pyspark.sql import functions as F

    return F.date_from_unix_date(F.floor(F.unix_seconds(F.col(column)) / 86400).cast("int"))


def _recent(spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, dataset: str | None,
            days: int | None) -> DataFrame:
    """The rows that count (:func:`_counted`), ``data_date`` made the data's UTC date; only
    ``dataset``'s, and only data dates of the last ``days`` days (today, UTC, being one)."""
    from pyspark.sql import functions as F

    rows = read_history(spark, store)
    if dataset is not None:
        rows = rows.where(F.col("dataset") == F.lit(dataset))
    # The interval's start kept as a number: a day may hold several intervals (an hourly DAG).
    rows = _counted(rows).withColumn("_data_micros", F.unix_micros("data_date"))
    rows = rows.withColumn("data_date", _utc_date("data_date"))
    if days is not None:
        today = dt.datetime.now(dt.timezone.utc).date()
        rows = rows.where(F.col("data_date") > F.lit(today - dt.timedelta(days=days)))
    return rows


def _outcomes() -> list[Any]:
    from pyspark.sql import functions as F

    return [
        F.count(F.lit(1)).alias("results"),
        F.count(F.when(F.col("severity") == "pass", 1)).alias("passed"),
        F.count(F.when(F.col("severity") == "warn", 1)).alias("warned"),
        F.count(F.when(F.col("severity") == "fail", 1)).alias("failed"),
        F.round(100.0 * F.count(F.when(F.col("passed"), 1)) / F.count(F.lit(1)), 2).alias("pass_rate"),
    ]


def daily_summary(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """Per data date (UTC) and dataset: the runs that count (each interval's latest attempt),
    their results, how many passed, warned and failed, and the pass rate in percent (a warn
    passes). Newest data date first."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("data_date", "dataset")
        .agg(F.count_distinct("run_id").alias("runs"), *_outcomes())
        .orderBy(F.col("data_date").desc(), "dataset")
    )


def dimension_summary(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """Per data date (UTC), dataset and dimension (NULL for rules without one): results and
    outcomes of each interval's latest attempt."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("data_date", "dataset", "dimension")
        .agg(*_outcomes())
        .orderBy(F.col("data_date").desc(), "dataset", F.col("dimension").asc_nulls_last())
    )


def rule_trend(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, rule_id: str | None = None,
    dataset: str | None = None, days: int | None = 30,
) -> DataFrame:
    """Per rule and data date (UTC): the outcomes of its intervals' latest attempts, and the
    average and the last metric value (of the newest interval that day). Oldest data date
    first, as a trend reads."""
    from pyspark.sql import functions as F

    rows = _recent(spark, history, dataset, days)
    if rule_id is not None:
        rows = rows.where(F.col("rule_id") == F.lit(rule_id))
    return (
        rows.groupBy("dataset", "rule_id", "data_date")
        .agg(
            F.first("code").alias("code"), *_outcomes(),
            F.avg("metric_value").alias("avg_metric"), F.max_by("metric_value", "_data_micros").alias("last_metric"),
        )
        .orderBy("dataset", "rule_id", "data_date")
    )


def top_offenders(
    spark: SparkSession, history: Mapping[str, Any] | str | OutputSpec, top_n: int = 10, dataset: str | None = None,
    days: int | None = None,
) -> DataFrame:
    """The ``top_n`` rules with the lowest pass rate over their intervals' latest attempts
    (then the most failures), worst first."""
    from pyspark.sql import functions as F

    return (
        _recent(spark, history, dataset, days)
        .groupBy("dataset", "rule_id")
        .agg(F.max_by("code", "data_date").alias("code"), *_outcomes())
        .orderBy("pass_rate", F.col("failed").desc(), "dataset", "rule_id")
        .limit(top_n)
    )


# -- the HTML report's trends and index (cola_core.report.pages draws them) ------------------------------


def _last_runs(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, runs: int, dataset: str | None,
    until: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """The index entries (``history_index.index_entries``) of the store, or of ``dataset``'s
    data intervals up to ``until``.

    Spark keeps, per dataset and rule, the latest attempt of each of its last ``runs`` data
    intervals, and only those rows are collected; ``index_entries`` then reads them as it
    reads a whole store, so the index is the same whoever reads the store. One query.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ColaError(f"runs must be a whole number >= 1, got {runs!r}")
    rows = read_history(spark, store).where(
        F.col("rule_id").isNotNull() & ~F.coalesce(F.col("excluded"), F.lit(False))
    )
    if dataset is not None:
        rows = rows.where(F.col("dataset") == F.lit(dataset))
    if until is not None:
        rows = rows.where(F.col("data_date") <= F.lit(until))
    latest_attempt = Window.partitionBy("dataset", "rule_id", "data_date").orderBy(
        F.col("validated_at").desc(), F.col("run_id").desc()
    )
    newest = Window.partitionBy("dataset", "rule_id").orderBy(F.col("data_date").desc())
    # Times as microseconds since the epoch, not timestamps: collect() gives a timestamp as a
    # naive datetime in this process's local time zone, which would show a run at another hour
    # than its report (tz-aware UTC) on any host not set to UTC. The number is the same in
    # classic mode and over Spark Connect, whatever the session's time zone.
    kept = (
        rows.select("*", F.row_number().over(latest_attempt).alias("_attempt"))
        .where(F.col("_attempt") == 1)
        .select("*", F.row_number().over(newest).alias("_newest"))
        .where(F.col("_newest") <= runs)
        .select(
            "dataset", "rule_id", "code", "check_name", "severity", "metric_value", "run_id",
            F.unix_micros("data_date").alias("data_micros"), F.unix_micros("validated_at").alias("validated_micros"),
            "excluded",
        )
    )
    return index_entries([row.asDict() for row in collected(kept, history_spec(store))], runs)


def history_trends(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, dataset: str, runs: int = 20,
    until: dt.datetime | None = None,
) -> dict[str, list[TrendPoint]]:
    """Per ``rule_id`` of ``dataset``: its last ``runs`` data intervals (up to the data date
    ``until``, when given), oldest first, each ``(data_date, metric_value, severity)`` of the
    interval's latest attempt: the ``trends`` of ``cola_core.report.pages.render_html``. ``data_date``
    is a tz-aware UTC datetime whatever this process's or the session's time zone. Excluded
    runs are left out. An empty dict when the store does not exist yet.

    Raises:
        ColaError: ``runs`` is not a whole number >= 1.
        ColaOutputError: the store exists but is not a Cola history.
    """
    return {entry["rule_id"]: entry["trend"] for entry in _last_runs(spark, store, runs, dataset, until)}


def index_rows(
    spark: SparkSession, store: Mapping[str, Any] | str | OutputSpec, runs: int = 20
) -> list[dict[str, Any]]:
    """One dict per dataset and rule in the store, the ``rows`` of ``cola_core.report.pages.render_index``
    (see ``cola_core.history.index.index_entries``): from the latest attempt of its newest data
    interval ``code``, ``check_name``, ``severity``, ``data_date`` and ``validated_at``
    (tz-aware UTC); ``trend``, its last ``runs`` intervals, oldest first; ``current``, False
    for a rule its dataset's newest interval did not check. Sorted by dataset and rule.
    Excluded runs are left out.

    Raises:
        ColaError: ``runs`` is not a whole number >= 1.
        ColaOutputError: the store exists but is not a Cola history.
    """
    return _last_runs(spark, store, runs, None)

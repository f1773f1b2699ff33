"""The baselines of change and anomaly rules: a rule's earlier values, read from the history store.

Baselines compare with the latest earlier *data* interval, never with an attempt at the same
one (``cola_core.history.index`` says which attempt of an interval counts), and like with like:
a check with earlier checks, a split with earlier splits (``run_kind``), a mapped task instance
with the same instance (``map_index``).

Apart from ``cola_core.history.store`` because it is a question a run asks of the store before
its rules are judged, one query for the whole block, and not part of reading or writing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cola_core.history.store import RunInfo, _load, collected
from cola_core.storage.specs import OutputSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["read_baselines"]


def read_baselines(
    spark: SparkSession, store: OutputSpec, run: RunInfo, needs: Mapping[str, int]
) -> dict[str, list[float]]:
    """The earlier values of each rule's metric, newest first: for each ``rule_id`` in
    ``needs``, the values of its last ``needs[rule_id]`` data intervals *before* the run's
    ``data_date`` on ``run.dataset``, each from that interval's latest attempt (excluded runs
    left out), by runs of the same kind and map index. An attempt at the run's own interval
    (a retry, a cleared task, a rerun) is never a baseline, and an interval whose latest
    attempt measured no number gives none. One query for the whole block; an empty dict when
    the store does not exist yet."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    history = _load(spark, store)
    if not needs or history is None:
        return {}
    wanted = F.col("rule_id").isin(list(needs))
    # Rows written before run_kind existed count for both kinds.
    same_kind = F.col("run_kind").isNull() | (F.col("run_kind") == F.lit(run.run_kind))
    earlier = (
        (F.col("dataset") == F.lit(run.dataset)) & wanted & ~F.coalesce(F.col("excluded"), F.lit(False))
        & (F.col("data_date") < F.lit(run.data_moment)) & same_kind
        & F.col("map_index").eqNullSafe(F.lit(run.map_index).cast("int"))
    )
    latest_attempt = Window.partitionBy("rule_id", "data_date").orderBy(
        F.col("validated_at").desc(), F.col("run_id").desc()
    )
    newest = Window.partitionBy("rule_id").orderBy(F.col("data_date").desc())
    query = (
        history
        .where(earlier)
        .select("rule_id", "data_date", "metric_value", F.row_number().over(latest_attempt).alias("attempt"))
        .where((F.col("attempt") == 1) & F.col("metric_value").isNotNull())
        .select("rule_id", "metric_value", F.row_number().over(newest).alias("newest"))
        .where(F.col("newest") <= max(needs.values()))
    )
    rows = collected(query, store)
    values: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        if row["newest"] <= needs[row["rule_id"]]:
            values.setdefault(row["rule_id"], []).append((row["newest"], float(row["metric_value"])))
    return {rule_id: [value for _, value in sorted(ranked)] for rule_id, ranked in values.items()}

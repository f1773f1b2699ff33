"""Which kind of Spark session a caller holds: classic (a JVM in this process) or Spark Connect.

Some work is done differently in each: a classic session reaches Hadoop's file system and
Spark's listeners through its JVM, a Connect client has neither and sends plans to a server.
Every place that chooses asks :func:`is_classic`, so the test is written once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_classic"]


def is_classic(spark_or_df: Any) -> bool:
    """Whether ``spark_or_df`` (a SparkSession or a DataFrame) belongs to a classic session,
    one with a JVM in this process; False over Spark Connect and for None."""
    if spark_or_df is None:
        return False
    session = getattr(spark_or_df, "sparkSession", spark_or_df)
    return getattr(session, "_jvm", None) is not None

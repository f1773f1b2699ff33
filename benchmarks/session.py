"""The Spark session the benchmark runs in (local mode, UI off, fixed configuration), and how
many rows its jobs read."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["benchmark_session", "input_records"]


def benchmark_session(
    *, cores: int = 2, adaptive: bool = False, shuffle_partitions: int = 4, lean: bool = False
) -> SparkSession:
    """A ``local[cores]`` session.

    Args:
        cores: local threads (the benchmark machine has 2).
        adaptive: adaptive query execution. Off by default, as in the tests, because AQE
            submits every shuffle stage as a job of its own, so the job column would stop
            meaning "scans".
        shuffle_partitions: ``spark.sql.shuffle.partitions``; with AQE off Spark's default of
            200 would time 200 near-empty tasks per distinct aggregation instead of the plan.
        lean: no Python call sites recorded, as in the sessions Cola's command line and
            operators start (``cola_core.storage.session.lean_conf``).
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("cola-benchmark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.adaptive.enabled", str(adaptive).lower())
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.python.sql.dataFrameDebugging.enabled", str(not lean).lower())
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def input_records(context: Any, jobs: Iterable[int]) -> int:
    """Rows read from files (and from persisted blocks) by ``jobs``: the sum of their stages'
    input metrics, read from the application's status store (``cola_core.plan.cost``). Over
    a parquet source, a read of the whole source adds its row count once."""
    from cola_core.plan.cost import input_metrics

    return input_metrics(context, jobs)[1]

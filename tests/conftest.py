"""Shared fixtures: one local Spark session for the whole run, and a Spark job counter."""

from __future__ import annotations

import os
import sys
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import pytest


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    # Executors must run the same interpreter as the tests, whatever is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("cola-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        # One JVM serves hundreds of tests; the 1g default leaves little room for their plans.
        .config("spark.driver.memory", "2g")
        # Adaptive execution turns one query into several jobs; off, job counts are deterministic.
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@dataclass
class JobCount:
    jobs: int = 0


class JobCounter:
    """Counts the Spark jobs started inside a ``with counter.count() as c:`` block."""

    def __init__(self, spark) -> None:
        self._context = spark.sparkContext

    @contextmanager
    def count(self) -> Iterator[JobCount]:
        group = f"cola-test-{uuid.uuid4().hex}"
        result = JobCount()
        self._context.setJobGroup(group, "counted by a test")
        try:
            yield result
        finally:
            self._context.setLocalProperty("spark.jobGroup.id", None)
            result.jobs = len(self._context.statusTracker().getJobIdsForGroup(group))


@pytest.fixture
def job_counter(spark) -> JobCounter:
    return JobCounter(spark)

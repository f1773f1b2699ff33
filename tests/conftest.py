"""Shared fixtures: one local Spark session for the whole run, a Spark job counter, and the small
DataFrames and history stores several test modules read (helpers that are not fixtures live in
``cola_helpers``)."""

from __future__ import annotations

import datetime as dt
import os
import sys

import pytest
from hypothesis import settings

from cola_helpers import CONNECT, SPLIT_ORDERS, SPLIT_SCHEMA, JobCounter, history_day
from connect_server import FAST_JVM, connect_server

# No hypothesis deadline: these tests assert what a rule block does, never how fast (speed is
# measured by benchmarks/). With a deadline, a busy machine fails a correct example as "flaky".
settings.register_profile("cola", deadline=None)
settings.load_profile("cola")

# Command-line runs, spark-submits and the docs' shell sessions each start a JVM for a few
# seconds of work (connect_server.FAST_JVM). The session below serves the whole run and
# leaves it out: over minutes, C2's faster code pays for its compiling.
os.environ.setdefault("SPARK_SUBMIT_OPTS", FAST_JVM)


@pytest.fixture(scope="session")
def connect_url():
    """The local Spark Connect server's URL in the Connect run (started once, always stopped),
    else None."""
    if not CONNECT:
        yield None
        return
    with connect_server() as url:
        yield url


@pytest.fixture(scope="session")
def session_args(connect_url) -> list[str]:
    """The ``cola`` flags that make a command-line run use the same Spark as the tests."""
    return ["--remote", connect_url] if connect_url else []


@pytest.fixture(scope="session")
def spark(connect_url):
    from pyspark.sql import SparkSession

    # Executors must run the same interpreter as the tests, whatever is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if connect_url:
        # The server carries the same settings as the classic session below (connect_server).
        session = SparkSession.builder.remote(connect_url).getOrCreate()
        yield session
        session.stop()
        return
    # Without FAST_JVM: this JVM serves the whole run.
    submit_opts = os.environ.pop("SPARK_SUBMIT_OPTS") if os.environ.get("SPARK_SUBMIT_OPTS") == FAST_JVM else None
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
    if submit_opts is not None:
        os.environ["SPARK_SUBMIT_OPTS"] = submit_opts
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def job_counter(spark) -> JobCounter:
    if CONNECT:
        # Over Connect, the cost is asserted by counting Cola's actions (test_connect.py).
        pytest.skip("classic mode only: job counts need sparkContext's status tracker, which Spark Connect lacks")
    return JobCounter(spark)


@pytest.fixture
def three_rows(spark):
    """``id int`` holding 1, 2 and 3."""
    return spark.createDataFrame([(1,), (2,), (3,)], "id int")


ORDER_LINES_SCHEMA = "id int, line int, status string, amount double, email string, qty string, starts int, ends int, dt date"


@pytest.fixture(scope="session")
def order_lines(spark):
    """Five order lines for the rule options, the split and the row rules: two orders of two
    lines (one a duplicate), NULL emails and amounts, text quantities, dates."""
    rows = [
        (1, 1, "live", 10.0, "a@x.io", "3", 1, 2, dt.date(2024, 1, 1)),
        (1, 2, "live", -4.0, None, "x", 5, 4, dt.date(2024, 1, 1)),
        (2, 1, "deleted", None, None, "7", 1, None, dt.date(2024, 1, 2)),
        (2, 1, "deleted", 30.0, "c@x.io", None, 2, 3, dt.date(2024, 1, 2)),
        (3, 1, "live", 50.0, "d@x.io", "4.5", 3, 9, dt.date(2024, 1, 4)),
    ]
    return spark.createDataFrame(rows, ORDER_LINES_SCHEMA)


@pytest.fixture(scope="session")
def benchmark_orders(spark, tmp_path_factory):
    """The benchmark's orders table, 5,000 rows, read back from parquet as the benchmark does."""
    from benchmarks.generate import generate_orders

    path = tmp_path_factory.mktemp("orders") / "orders.parquet"
    generate_orders(spark, 5000).write.parquet(str(path))
    return spark.read.parquet(str(path))


@pytest.fixture
def split_orders(spark, tmp_path):
    """``SPLIT_ORDERS`` as a parquet source, so that every read of it is a counted file scan."""
    path = str(tmp_path / "source")
    spark.createDataFrame(SPLIT_ORDERS, SPLIT_SCHEMA).coalesce(1).write.parquet(path)
    return spark.read.parquet(path)


@pytest.fixture
def split_tables(spark):
    """Makes a table of ``SPLIT_SCHEMA``: ``split_tables(name, rows=(), partition_by=())`` drops
    ``name``, then writes ``rows`` to it (``rows=None``: only drops it); every table named is
    dropped after the test."""
    names = []

    def table(name: str, rows=(), partition_by=()):
        names.append(name)
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        if rows is not None:
            writer = spark.createDataFrame(list(rows), SPLIT_SCHEMA).write
            if partition_by:
                writer = writer.partitionBy(*partition_by)
            writer.saveAsTable(name)
        return name

    yield table
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.fixture
def people(spark):
    """``id int, email string``: three people, the first and the last without an email."""
    return spark.createDataFrame([(1, None), (2, "b@x.io"), (3, None)], "id int, email string")


@pytest.fixture
def monitored_store(spark, tmp_path):
    """A hand-built history store (its path) of dataset ``orders``: rules r1 and r2, two runs an
    hour apart on March 1st, 2026 and one on March 2nd."""
    from cola_core import CheckResult
    from cola_core.history.append import append_history
    from cola_core.history.store import RunInfo

    store = str(tmp_path / "h")
    days = {
        1: [("r1", "fail", "Completeness", 2.0), ("r2", "pass", "Validity", 1.0)],
        2: [("r1", "pass", "Completeness", 0.0), ("r2", "warn", "Validity", 3.0)],
    }
    for day, results in days.items():
        # Day 1 has two runs, an hour apart: with no data date given, each is keyed by its own time.
        for hour, run in enumerate(("a", "b") if day == 1 else ("c",)):
            made = [CheckResult("x", severity != "fail", "m", int(severity == "fail"), metric, severity,
                                code=rule_id.upper(), dimension=dimension, rule_id=rule_id)
                    for rule_id, severity, dimension, metric in results]
            append_history(spark, store, made, RunInfo(dataset="orders", run_id=f"{run}{day}",
                                                      validated_at=history_day(day) + dt.timedelta(hours=hour)))
    return store

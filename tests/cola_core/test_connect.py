"""Spark Connect (issue 15): the engine as a Connect client gives what it gives in classic mode.

The rule suites marked ``connect`` run a second time over a local Spark Connect server
(``COLA_SPARK_CONNECT=1``, see ``scripts/test``), so their exact expectations hold on both.
This module adds what only a comparison or a Connect client can show:

- the Connect run really is a client (the suites cannot silently fall back on classic);
- the whole batch of ``test_run_batch_spark`` compared field by field with a classic run of
  it in another process (one process cannot hold both kinds of session);
- the cost over Connect, where there is no ``sparkContext`` to count jobs with: the
  ExecutePlan requests Cola sends, counted on the client;
- ``cola check|split --remote``, and the errors classic raises eagerly and Connect lazily.

Tests that need the other mode say so and skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cola_core import Cola, ColaError, ColaOutputError, ColaRuleError, ColaSourceError
from cola_helpers import CONNECT, ORDERS_ARGV
from test_run_batch_spark import RULES

pytestmark = [pytest.mark.spark, pytest.mark.connect]

ROOT = Path(__file__).resolve().parents[2]
only_connect = pytest.mark.skipif(not CONNECT, reason="over Spark Connect only (COLA_SPARK_CONNECT=1)")


# -- the run is what it says ---------------------------------------------------------------------


def test_the_session_is_a_connect_client_exactly_in_the_connect_run(spark):
    assert (type(spark).__module__ == "pyspark.sql.connect.session") is CONNECT
    assert (getattr(spark, "_jvm", None) is None) is CONNECT


# -- the whole batch, field by field against classic mode ----------------------------------------

# Runs test_run_batch_spark's batch (each rule alone, then all in one block, with samples) and
# prints every result as JSON. Freshness is measured against the clock, so its value and its
# message (which holds the value) are left out; its verdict is compared.
BATCH = """
import json, sys
sys.path[:0] = [sys.argv[1]]
sys.path.append(sys.argv[2])
from pyspark.sql import SparkSession
remote = sys.argv[3] if len(sys.argv) > 3 else None
builder = SparkSession.builder.remote(remote) if remote else (
    SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2").config("spark.sql.adaptive.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC"))
spark = builder.getOrCreate()
import test_run_batch_spark as batch
df = spark.createDataFrame(batch.ROWS, batch.SCHEMA)
cola = batch.make_cola()
def fields(result):
    d = {**result.to_dict(), "rows_checked": result.rows_checked}
    if d["rule_type"] == "freshness":
        d.pop("metric_value"); d.pop("message")
    return d
out = {label: [fields(r) for r in cola.run(df, [rule], samples=2)] for label, rule in batch.RULES}
out["(one block)"] = [fields(r) for r in cola.run(df, [rule for _, rule in batch.RULES], samples=2)]
print(json.dumps(out, default=str, sort_keys=True))
"""


def _classic_environment() -> dict[str, str]:
    """This process's environment without what makes pyspark a Connect client (a child starts
    whichever session it is told to)."""
    return {key: value for key, value in os.environ.items()
            if key not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "COLA_SPARK_CONNECT")}


def _batch(*remote: str) -> dict:
    env = {**_classic_environment(), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-c", BATCH, str(ROOT), str(ROOT / "tests"), *remote],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@only_connect
def test_every_rule_type_gives_the_same_results_as_in_classic_mode_field_by_field(connect_url):
    classic, connect = _batch(), _batch(connect_url)
    assert len(classic) == len(RULES) + 1  # each rule alone, and the block
    assert {label: results for label, results in connect.items() if results != classic[label]} == {}
    failed_with_samples = [r for results in classic.values() for r in results if r.get("samples")]
    assert len(failed_with_samples) > 20  # the samples were compared too, not only verdicts


# -- the cost over Connect: the requests Cola sends ----------------------------------------------


@contextmanager
def requests_sent(spark) -> Iterator[Counter]:
    """Count the ExecutePlan requests sent in the block, by kind: ``root`` (a query whose rows
    come back: an action) or the command's name (``write_operation``, ``sql_command``...).

    The client's one method every execution goes through is wrapped, and still called:
    nothing is faked, only counted.
    """
    client = spark.client
    kinds: Counter = Counter()
    real = client._execute_and_fetch_as_iterator

    def counted(request, *args, **kwargs):
        kind = request.plan.WhichOneof("op_type")
        kinds[kind if kind == "root" else request.plan.command.WhichOneof("command_type")] += 1
        return real(request, *args, **kwargs)

    client._execute_and_fetch_as_iterator = counted
    try:
        yield kinds
    finally:
        del client._execute_and_fetch_as_iterator


AGGREGATES = [
    {"type": "not_null", "columns": ["id"]},
    {"type": "range", "column": "amount", "min": 0},
    {"type": "row_count", "min": 1},
    {"type": "missing_percent", "column": "email", "must_be": "< 50%"},
    {"type": "mean", "column": "amount", "must_be": "> 0"},
]
# Each distinct column set is counted apart (the planner's "separate" strategy).
DISTINCT = [{"type": "unique", "columns": ["id"]}, {"type": "distinct_count", "column": "status", "must_be": "> 1"}]


@pytest.fixture(scope="module")
def orders(spark):
    rows = [(1, "a@x.io", 10.0, "paid"), (2, None, -5.0, "paid"), (2, "c@x.io", 7.5, "open"), (None, "d@x.io", 1.0, "open")]
    return spark.createDataFrame(rows, "id int, email string, amount double, status string")


@only_connect
def test_a_block_of_aggregate_rules_is_one_action_and_samples_one_more(spark, orders):
    with requests_sent(spark) as plain:
        results = Cola().run(orders, AGGREGATES)
    with requests_sent(spark) as sampled:
        Cola().run(orders, AGGREGATES, samples=2)
    with requests_sent(spark) as distinct:
        Cola().run(orders, AGGREGATES + DISTINCT)
    assert [r.severity for r in results] == ["fail", "fail", "pass", "pass", "pass"]
    assert plain == Counter(root=1)
    assert sampled == Counter(root=2)
    assert distinct == Counter(root=3)


@only_connect
def test_a_reference_rule_over_a_query_adds_one_action(spark, orders):
    reference = {"query": "SELECT * FROM VALUES ('paid') AS t(status)"}
    with requests_sent(spark) as sent:
        [result] = Cola().run(orders, [{"type": "foreign_key", "column": "status", "reference": reference}])
    assert (result.failed_count, result.passed) == (2, False)
    # The query is sent once as a command (Connect runs spark.sql at once, as classic does),
    # then the one scan.
    assert sent == Counter(root=1, sql_command=1)


@only_connect
def test_split_write_is_one_write_and_a_copy_of_the_valid_rows_when_annotated(spark, orders, tmp_path):
    rules = [{"type": "not_null", "columns": ["id"]}, {"type": "range", "column": "amount", "min": 0}]
    with requests_sent(spark) as plain:
        split = Cola().split_write(orders, rules, str(tmp_path / "v1"), str(tmp_path / "i1"))
    with requests_sent(spark) as annotated:
        Cola().split_write(orders, rules, str(tmp_path / "v2"), str(tmp_path / "i2"), annotate="codes")
    assert (split.valid_count, split.invalid_count) == (2, 2)
    assert [spark.read.parquet(str(tmp_path / name)).count() for name in ("v1", "i1", "v2", "i2")] == [2, 2, 2, 2]
    # The counts and the aggregates are observed during the write: no action of their own.
    assert plain == Counter(write_operation=1)
    # The valid rows lack the codes column, so they are copied out of staging (as in classic mode).
    assert annotated == Counter(write_operation=2)


@only_connect
def test_a_pinned_split_is_refused_over_connect_before_any_request(spark, orders, tmp_path):
    # A Connect localCheckpoint replies with no observed metrics: a streaming batch over
    # Connect is staged as files instead (test_job_stream.py runs one over Connect).
    from cola_core.plan.pinned_split import pinned_split

    checks = Cola()._checks([{"type": "not_null", "columns": ["id"]}])
    with requests_sent(spark) as sent, pytest.raises(ColaError) as raised, pinned_split(
        orders, checks, str(tmp_path / "v"), str(tmp_path / "i")
    ):
        pass
    assert str(raised.value) == "a pinned split needs a classic Spark session: over Spark Connect, use staged_split"
    assert sent == Counter()


# -- errors classic raises at once and Connect only when it runs ----------------------------------


def test_a_missing_reference_table_is_a_source_error_before_any_scan(spark, orders):
    rule = {"type": "foreign_key", "column": "status", "reference": {"table": "no_such_statuses"}}
    with pytest.raises(ColaSourceError) as raised:
        Cola().run(orders, [rule])
    assert str(raised.value).startswith(
        "rules[0] (foreign_key): cannot read the reference: cannot read the table no_such_statuses: "
        "[TABLE_OR_VIEW_NOT_FOUND]"
    )
    with pytest.raises(ColaSourceError) as raised:
        Cola().split(orders, [rule])
    assert str(raised.value).startswith(
        "rules[0] (foreign_key): cannot read the reference: cannot read the table no_such_statuses: "
        "[TABLE_OR_VIEW_NOT_FOUND]"
    )


def test_a_missing_reconcile_reference_is_a_source_error(spark, orders):
    rule = {"type": "reconcile", "aggregate": "count", "must_be": "< 1%", "reference": {"table": "no_such_ledger"}}
    with pytest.raises(ColaSourceError) as raised:
        Cola().run(orders, [rule])
    assert str(raised.value).startswith(
        "rules[0] (reconcile): cannot read the reference: cannot read the table no_such_ledger: "
        "[TABLE_OR_VIEW_NOT_FOUND]"
    )


@only_connect
def test_path_outputs_that_the_client_cannot_publish_are_refused_before_anything_is_written(spark, orders, tmp_path):
    rules = [{"type": "not_null", "columns": ["id"]}]
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, rules, "s3a://bucket/valid", str(tmp_path / "invalid"))
    assert str(raised.value) == (
        "over Spark Connect, Cola can only publish to local paths the server shares with this client, not "
        "'s3a://bucket/valid': the client has no access to the server's file systems"
    )
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, rules, "relative/valid", str(tmp_path / "invalid"))
    assert str(raised.value) == (
        "over Spark Connect, a path output must be absolute, got 'relative/valid': the server resolves relative "
        "paths against its own working folder"
    )
    assert os.listdir(tmp_path) == []


# -- the command line as a Connect client --------------------------------------------------------


def _cola(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cola_core", *args], capture_output=True, text=True, cwd=cwd,
                          env=_classic_environment(), timeout=600)


@only_connect
def test_cola_split_remote_writes_plain_path_outputs(connect_url, spark, tmp_path):
    done = _cola(
        "split", "--remote", connect_url, "--rules", str(ROOT / "tests/cola_core/data/rules_split.json"),
        *ORDERS_ARGV, "--valid-output", str(tmp_path / "valid"), "--invalid-output", str(tmp_path / "invalid"),
        "--results", str(tmp_path / "results.json"), cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    summary = json.loads((tmp_path / "results.json").read_text())
    assert (summary["valid_count"], summary["invalid_count"]) == (
        spark.read.parquet(str(tmp_path / "valid")).count(), spark.read.parquet(str(tmp_path / "invalid")).count(),
    )
    rows = len((ROOT / "tests/cola_core/data/orders.csv").read_text().splitlines()) - 1
    assert summary["valid_count"] + summary["invalid_count"] == rows


def test_remote_must_be_a_connect_url_and_excludes_master(tmp_path):
    rules = str(ROOT / "tests/cola_core/data/rules_split.json")
    done = _cola("check", "--remote", "http://host:15002", "--rules", rules, *ORDERS_ARGV, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "cola check: error: argument --remote: a Spark Connect URL looks like sc://host:15002, got 'http://host:15002'"
    )
    done = _cola("check", "--remote", "sc://host:1", "--master", "local[1]", "--rules", rules, *ORDERS_ARGV,
                 cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "cola: error: give master or remote, not both: a Spark Connect client has no master of its own\n"


@pytest.mark.parametrize(
    ("where", "condition"),
    [("max(amount) > 0", "INVALID_WHERE_CONDITION"), ("row_number() over (order by id) = 1", "WINDOW_FUNCTION")],
)
def test_an_aggregate_or_window_where_is_a_rule_error_before_any_scan(spark, orders, where, condition):
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(orders, [{"type": "not_null", "columns": ["id"], "where": where}])
    assert str(raised.value).startswith(f"rules[0] (not_null): Spark cannot evaluate {where!r} on this DataFrame: [")
    assert condition in str(raised.value)


STOPPED = """
import os, sys
sys.path[:0] = [sys.argv[1]]
from cola_core.storage.session import spark_session, stop_session
spark, started = spark_session(sys.argv[2])
print(started, type(spark).__module__, "SPARK_CONNECT_MODE_ENABLED" in os.environ, spark.range(3).count())
stop_session(spark)
print("SPARK_CONNECT_MODE_ENABLED" in os.environ)
spark, started = spark_session("local[1]")
print(started, type(spark).__module__, spark.range(2).count())
stop_session(spark)
"""


@only_connect
def test_after_a_connect_session_the_process_can_start_a_classic_one(connect_url):
    done = subprocess.run([sys.executable, "-c", STOPPED, str(ROOT), connect_url], capture_output=True, text=True,
                          env=_classic_environment(), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "True pyspark.sql.connect.session True 3", "False", "True pyspark.sql.session 2",
    ]


UNREACHABLE = """
import socket, sys
sys.path[:0] = [sys.argv[1]]
from pyspark.sql import SparkSession
from pyspark.sql.connect.client.retries import DefaultPolicy
from cola_core import Cola
from cola_core.history.store import read_history
from cola_core.plan.preflight import _ensure_condition, _nested_problem

with socket.socket() as probe:  # a port nothing listens on
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
spark = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").create()
# The client's own retries would wait minutes for a server that is not coming.
spark.client.set_retry_policies([DefaultPolicy(max_retries=1, initial_backoff=10, max_backoff=10)])
df = spark.range(3)
sql, = Cola().parse([{"type": "sql", "query": "SELECT count(*) = 0 FROM _validation_df"}])
match, = Cola().parse([{"type": "foreign_key", "column": "id", "reference": {"table": "r"}}])
calls = {
    "condition": lambda: _ensure_condition(df, "id > 0"),
    "nested": lambda: _nested_problem(df, "a.b"),
    "sql": lambda: sql.analyse(df),
    "reference": lambda: match.reference_type(df, "id"),
    "history": lambda: read_history(spark, "/nowhere/history"),
    "run": lambda: Cola().run(df, [{"type": "not_null", "columns": ["id"], "where": "id > 0"}]),
}
for name, call in calls.items():
    try:
        call()
        print(name, "returned")
    except Exception as error:
        print(name, type(error).__name__, "UNAVAILABLE" in str(error))
"""


@only_connect
def test_a_server_that_cannot_be_reached_is_a_crash_never_a_rule_or_source_error():
    # Cola classifies Spark's analysis errors into rule and source errors (exit 2, not retried);
    # a lost or absent server must stay what it is, so that Airflow retries the task.
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", UNREACHABLE, str(ROOT)], capture_output=True,
                          text=True, env={**_classic_environment(), "SPARK_CONNECT_MODE_ENABLED": "1"}, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        f"{name} SparkConnectGrpcException True"
        for name in ("condition", "nested", "sql", "reference", "history", "run")
    ]

"""Helpers shared by the engine's tests (importable because tests/ holds the conftest).

Anything two test modules would otherwise each define lives here: the fixture data folder,
small runners (``run_one``, ``run_all``, ``jobs_of``), readers of results and splits, the
orders a split publishes, rule factories, the Spark job counter, history stores built run by
run (``runs_of``) and one whose rows cannot be read (``broken_history_file``, for the Airflow
tests too), what the HTML pages' tests read of a page (``rows_of``, ``assert_self_contained``),
and message fragments several suites compare exactly.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from benchmarks.session import input_records
from cola_core import BaseCheck, CheckResult, Cola, ColaRuleError

# tests/cola_core/data: the orders CSV and the rules files the command-line tests read.
DATA = Path(__file__).parent / "cola_core" / "data"
# The orders CSV as command-line source flags (``cola check ... *ORDERS_ARGV``).
ORDERS_ARGV = ["--input", str(DATA / "orders.csv"), "--format", "csv", "--option", "header=true",
               "--option", "inferSchema=true"]
# What `cola check --rules rules_fail.yaml *ORDERS_ARGV` costs Spark, in Spark's own count
# (jobs, stages that ran, rows read, bytes read): the CSV's header and the schema's inference
# (2 jobs), the block's aggregates and the unique rule's count; the same under spark-submit.
ORDERS_FAIL_COST = (6, 6, 20, 860)
# What every threshold error ends with (cola_core.errors.ThresholdError).
THRESHOLD_HINT = "a threshold looks like '< 5%', '>= 10', 'between 1 and 2' or '< 1d'"


# The engine suite's second run: every test session of this process is a Spark Connect client
# of a local server (tests/connect_server.py) instead of a classic local session.
CONNECT = os.environ.get("COLA_SPARK_CONNECT") == "1"


# -- running rules ---------------------------------------------------------------------------


def run_one(df, rule, **cola_options) -> CheckResult:
    """The result of one rule run on its own."""
    [result] = Cola(**cola_options).run(df, [rule])
    return result


def run_all(df, *rules, **run_options) -> list[CheckResult]:
    """The results of ``rules`` run as one block by a default ``Cola``."""
    return Cola().run(df, list(rules), **run_options)


def refused(rule) -> str:
    """The message of the ColaRuleError a malformed rule raises."""
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    return str(raised.value)


def metric(rule_type, passed, message, failed_count, value, severity=None, name=None, code=None) -> CheckResult:
    """A metric rule's expected result, its fields in the order the metric tests write them."""
    return CheckResult(rule_type, passed, message, failed_count, value, severity, name, code=code)


def cost_taken(summary: dict) -> tuple[dict, tuple[int | None, int | None, int | None, int | None]]:
    """A run's summary without its ``cost``, and that cost's ``(jobs, stages, rows_read,
    bytes_read)``: the counts are exact (Spark's own), the seconds are only checked to be a
    measured time, since they are the one thing a rerun may change."""
    from cola_core.plan.cost import SparkCost

    rest = dict(summary)
    cost = SparkCost.from_dict(rest.pop("cost"))
    assert 0 < cost.seconds < 600, cost
    return rest, (cost.jobs, cost.stages, cost.rows_read, cost.bytes_read)


def summary_outline(summary: dict) -> list[tuple]:
    """A results summary (``report.summarise``) as (rule_type, severity, failed_count, metric_value, code)."""
    return [(r["rule_type"], r["severity"], r["failed_count"], r["metric_value"], r["code"]) for r in summary["results"]]


# -- reading rows ----------------------------------------------------------------------------


def sorted_rows(rows):
    """Rows in a stable order; NULLs make tuples unorderable, so order by repr."""
    return sorted(rows, key=repr)


def codes_of(df, column="dq", key="id") -> list[tuple]:
    """An annotated split's rows as sorted (key, line, codes) triples."""
    return sorted((row[key], row["line"], tuple(row[column])) for row in df.collect())


# -- the orders split_write publishes ------------------------------------------------------
# Shared by test_plan_staged_split, test_plan_staging_write and test_plan_split_destinations
# (their fixtures, split_orders and split_tables, are in conftest).

SPLIT_ORDERS = [
    (1, "ana@x.io", 10.0, "paid"),
    (2, None, 5.0, "paid"),
    (3, "bo@x.io", -2.0, "open"),
    (3, "cy@x.io", 7.0, "open"),
    (4, "di@x.io", 3.0, "paid"),
    (5, "ed@x.io", 8.0, "open"),
]
SPLIT_SCHEMA = "order_id int, email string, amount double, status string"
SPLIT_COLUMNS = ["order_id", "email", "amount", "status"]
SPLIT_RULES = [
    {"type": "not_null", "columns": ["email"]},
    {"type": "range", "column": "amount", "min": 0, "code": "AMOUNT_NEGATIVE"},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "row_count", "min": 1},
    {"type": "avg", "column": "amount", "must_be": "> 0"},
]
# What SPLIT_RULES split SPLIT_ORDERS into: the valid rows, and the invalid ones with their codes.
SPLIT_VALID_ROWS = [(1, "ana@x.io", 10.0, "paid"), (4, "di@x.io", 3.0, "paid"), (5, "ed@x.io", 8.0, "open")]
SPLIT_INVALID_ROWS = [
    (2, None, 5.0, "paid", ["not_null(email)"]),
    (3, "bo@x.io", -2.0, "open", ["AMOUNT_NEGATIVE", "unique(order_id)"]),
    (3, "cy@x.io", 7.0, "open", ["unique(order_id)"]),
]


def parquet_rows(spark, path, *columns) -> list[tuple]:
    """The ``columns`` of the parquet files at ``path``, as sorted tuples (arrays as lists)."""
    df = spark.read.parquet(str(path))
    return sorted_rows(tuple(list(v) if isinstance(v, list) else v for v in row) for row in df.select(*columns).collect())


def persisted_rdds(spark) -> set[int]:
    """The ids of the RDDs the classic session holds persisted (pinned rows among them)."""
    return set(spark.sparkContext._jsc.getPersistentRDDs().keySet())  # a copy of the map, as it is now


def remove_blocks_persisted_since(spark, before: set[int]) -> None:
    """Remove the blocks of every RDD persisted since ``before``: what losing the executors
    that hold them does, which local mode cannot cause (a mock of that failure, done for real
    on the blocks)."""
    rdds = spark.sparkContext._jsc.getPersistentRDDs()  # java.util.Map of id -> JavaRDD
    for rdd_id in set(rdds.keySet()) - before:
        rdds.get(rdd_id).unpersist(True)


def visible_files(folder: Path) -> list[str]:
    """What a listing of ``folder`` shows a person (Hadoop's hidden checksum files aside)."""
    return sorted(name for name in os.listdir(folder) if not name.startswith("."))


# -- rule factories --------------------------------------------------------------------------


def fk(**extra) -> dict[str, Any]:
    """A foreign_key rule: orders.customer_id against the ``ref_customers`` view's ``id``."""
    return {"type": "foreign_key", "column": "customer_id", "reference": {"table": "ref_customers"},
            "reference_columns": ["id"], **extra}


def rec(**fields) -> dict[str, Any]:
    """A reconcile rule against the ``ref_ledger`` view."""
    return {"type": "reconcile", "reference": {"table": "ref_ledger"}, **fields}


# -- counting Spark jobs ---------------------------------------------------------------------


@dataclass
class JobCount:
    jobs: int = 0
    # Rows read from files by those jobs (their stages' input metrics): with a parquet source,
    # the number of times the source was read, times its rows.
    input_records: int = 0


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
            jobs = list(self._context.statusTracker().getJobIdsForGroup(group))
            result.jobs = len(jobs)
            result.input_records = input_records(self._context, jobs)


def jobs_of(job_counter: JobCounter, df, rules, cola: Cola | None = None) -> int:
    """The Spark jobs one ``run`` of ``rules`` starts."""
    with job_counter.count() as counted:
        (cola or Cola()).run(df, rules)
    return counted.jobs


# -- history stores built run by run ---------------------------------------------------------

# A small block for the history tests: a failing rule with a dimension, a metric, a sql rule.
HISTORY_RULES = [
    {"type": "not_null", "columns": ["email"], "id": "emails", "dimension": "Completeness"},
    {"type": "row_count", "must_be": "> 0"},
    {"type": "sql", "query": "SELECT count(*) > 0 FROM _validation_df"},
]


def history_day(day: int) -> dt.datetime:
    """06:00 UTC on March ``day``, 2026: when the history tests' ``day``-th run ran."""
    return dt.datetime(2026, 3, day, 6, 0, tzinfo=dt.timezone.utc)


def runs_of(spark, store, counts, rules, exclude=()):
    """Run ``rules`` once per row count, one day apart; the results of each run, in order."""
    from cola_core.history.retention import exclude_run
    from cola_core.history.store import RunInfo

    outcomes = []
    for day, rows in enumerate(counts, start=1):
        info = RunInfo(dataset="orders", run_id=f"run-{day}", validated_at=history_day(day))
        outcomes.append(Cola().run(spark.range(rows), rules, history=store, run_info=info))
        if f"run-{day}" in exclude:
            exclude_run(spark, store, f"run-{day}")
    return outcomes


# -- a history store that cannot be read ----------------------------------------------------


def broken_history_file(store: Path) -> Path:
    """A history store (created at ``store``) holding one file whose footer (the schema) reads
    but whose data does not: a run checks the store's columns and appends to it, and only the
    trend query, when the page is built, reads the rows and fails (a SparkException, no
    ColaError). Returns that file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cola_core.history.store import HISTORY_SCHEMA

    types = {"string": pa.string(), "boolean": pa.bool_(), "bigint": pa.int64(), "double": pa.float64(),
             "int": pa.int32(), "timestamp": pa.timestamp("us", tz="UTC")}
    schema = pa.schema([pa.field(name, types[kind]) for name, kind in
                        (column.split() for column in HISTORY_SCHEMA.split(","))])
    row: dict = dict.fromkeys(schema.names)
    row.update(run_id="old", dataset="orders", rule_id="r", severity="pass", excluded=False,
               validated_at=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    store.mkdir(parents=True)
    path = store / "part-broken.parquet"
    # No statistics: no filter on the dataset can skip the file unread.
    pq.write_table(pa.Table.from_pylist([row], schema=schema), path, compression="none", write_statistics=False)
    data = bytearray(path.read_bytes())
    footer_start = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    data[4:footer_start] = b"\xff" * (footer_start - 4)  # the pages, between the magic and the footer
    path.write_bytes(bytes(data))
    return path


# -- custom checks ---------------------------------------------------------------------------


class NoFutureDateCheck(BaseCheck):
    """Seed 001's custom check: it implements ``aggregations``, so it joins the single scan."""

    def aggregations(self, df):
        from pyspark.sql import functions as F

        return [F.count(F.when(F.col(self.params["column"]) > F.current_date(), F.lit(1)))]

    def from_aggregations(self, values):
        failed = int(values[0])
        if failed:
            return CheckResult("no_future_date", False, f"{failed} future dates", failed)
        return CheckResult("no_future_date", True)


# -- the HTML pages (cola_core.report): a run's report, a history's index and what they share ---

# Text that would run or break a page if it were not escaped, and how a page shows it.
HOSTILE = "<script>alert(1)</script> \"q\" 'a' & b"
HOSTILE_TEXT = "&lt;script&gt;alert(1)&lt;/script&gt; &quot;q&quot; &#x27;a&#x27; &amp; b"


def at(day: int) -> dt.datetime:
    """Noon UTC on ``day`` of May 2026: a run's time, or a trend point's, in the pages' tests."""
    return dt.datetime(2026, 5, day, 12, 0, tzinfo=dt.timezone.utc)


def rows_of(page: str) -> list[str]:
    """The body rows of the results table (of a report without samples), or of the index."""
    section = page.split("<h2>Results</h2>", 1)[-1]
    return re.findall(r"<tr>.*?</tr>", section.split("<tbody>", 1)[1].split("</tbody>")[0])


class _Nesting(HTMLParser):
    """Every element opened is closed, in order (void elements aside)."""

    VOID = frozenset({"meta", "br"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.mismatched: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass  # <polyline .../>

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.mismatched.append(tag)


def assert_self_contained(page: str) -> None:
    for reach in ("http://", "https://", "src=", "<script", "<link", "@import", "url("):
        assert reach not in page
    nesting = _Nesting()
    nesting.feed(page)
    assert (nesting.open, nesting.mismatched) == ([], [])


# -- messages of the structure pre-pass (cola_core.language.structure), for rules and rules files ----

ALLOWED = "a rule holds only text, numbers, true/false, null, dates, lists and objects"
KEYS = 'keys are always text, such as "column"'
CYCLE = "contains itself (a self-reference, as YAML anchors and aliases can make); write the value out in full"
FINITE = "a number in a rule must be finite"
SURROGATE = "half of a UTF-16 pair, which UTF-8 cannot encode"
UNICODE = ("a rule's text must be valid Unicode (in JSON, a \\ud800-\\udfff escape is only half of a character: "
           "write the pair, or the character itself)")
REPEATED = ("twice in one object; only the last value would count, so a reader would see a rule that is not "
            "the one run: write each key once")


def too_deep(max_depth: int) -> str:
    """The pre-pass's message for a value nested deeper than ``max_depth``."""
    return f"nests deeper than {max_depth} levels; a rule is an object of parameters, a few levels deep at most"


# -- a rule that exhausts the JVM, run in a process of its own ----------------------------------

# The end of such a process's script, once it has ``spark``, ``df``, ``rules`` and ``out`` (a
# folder): it runs the rules, then splits into ``out``, and prints what came of each as JSON,
# with what ``out`` holds after and whether the session still answers.
RUN_SPLIT_AND_SAY = """
results = [(r.severity, r.message) for r in Cola().run(df, rules)]
try:
    Cola().split_write(df, rules, out + "/valid", out + "/invalid")
    split = None
except Exception as error:
    split = [type(error).__name__, str(error)]
print(json.dumps({"results": results, "split": split, "left": sorted(os.listdir(out)), "alive": spark.range(3).count()}))
"""

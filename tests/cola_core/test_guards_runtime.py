"""The run-time net: what the guard cannot read before Spark (a size or a recursion depth the
data gives) is measured as that rule's failure, never a crash of the run, and the other rules
keep their exact results."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cola_core import Cola
from cola_helpers import RUN_SPLIT_AND_SAY

pytestmark = pytest.mark.spark

# Java's regex engine recurses once per round of a repeated group, so a long value overflows
# the JVM's stack; the backtracking guard has nothing to refuse in it (it never backtracks).
_STACK = """
import json, os, sys
from cola_core import Cola
from cola_core.storage.session import spark_session
out = sys.argv[1]
spark, _ = spark_session("local[1]", [("spark.ui.enabled", "false"), ("spark.sql.shuffle.partitions", "1")])
df = spark.createDataFrame([("a" * 20000, 1), ("ab", 2), ("c", None)], "name string, id int")
rules = [{"type": "not_null", "columns": ["id"]},
         {"type": "invalid_count", "column": "name", "valid_regex": "(a|b)*", "must_be": "= 0"},
         {"type": "row_count", "min": 1}]
""" + RUN_SPLIT_AND_SAY

STACK_OVERFLOW = (
    "java.lang.StackOverflowError (the JVM's stack ran out: a regex that repeats a group, such as (a|b)*, "
    "recurses once per character of a long value; [ab]* matches the same without recursing)"
)


def test_a_regex_that_overflows_the_stack_on_a_long_value_fails_alone(tmp_path):
    """The issue's case: ``^(a|b)*$`` on a 20,000-character value. In its own process, as a
    stack overflow is fatal to a local JVM unless Cola's session keeps the task's failure a
    task's (``spark.executor.killOnFatalError.depth=0``, which the tests' shared session lacks)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-c", _STACK, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.splitlines()[-1])
    unmeasured = f"invalid_count(name): Spark could not evaluate the rule on this data: {STACK_OVERFLOW}"
    assert outcome == {
        "results": [["fail", "not_null(id): 1 NULL value (id: 1)"], ["fail", unmeasured],
                    ["pass", "row_count = 3 is within bounds (min 1)"]],
        "split": ["ColaError", f"the split cannot be written, as a row rule fails on the data: {unmeasured}"],
        "left": [],
        "alive": 3,
    }


def test_a_sequence_over_timestamps_past_sparks_array_limit_fails_alone(spark):
    """A timestamp sequence whose bounds come from the data: Spark refuses the 284-billion-element
    array (COLLECTION_SIZE_LIMIT_EXCEEDED, SQLSTATE 54000) on the row; that rule fails saying
    so, and the other rules are measured. Its constant form is refused before Spark
    (test_guards_sqlsize.py)."""
    df = spark.createDataFrame([(1,), (None,)], "id int").selectExpr("id", "timestamp'2000-01-01' AS t")
    huge = "size(sequence(t, t + interval 9000 years, interval 1 second)) > 0"
    results = Cola().run(df, [
        {"type": "not_null", "columns": ["id"]},
        {"type": "expression", "expression": huge},
        {"type": "row_count", "min": 1},
    ])
    assert [(r.severity, r.message) for r in results] == [
        ("fail", "not_null(id): 1 NULL value (id: 1)"),
        ("fail", f"expression({huge}): Spark could not evaluate the rule on this data: "
                 "[COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER] Can't create array with 284012611201 elements which "
                 "exceeding the array size limit 2147483632, the value of parameter(s) `count` in the function "
                 "`sequence` is invalid. SQLSTATE: 54000"),
        ("pass", "row_count = 2 is within bounds (min 1)"),
    ]
    assert results[1].evaluation_failed

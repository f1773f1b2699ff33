"""The planner: how many Spark jobs a block starts, and what each check gets back.

Jobs are counted with a job group and ``statusTracker`` (the ``job_counter`` fixture), on a
session with adaptive execution off, so a count is exact.
"""

from __future__ import annotations

import datetime as dt
import warnings

import pytest

from benchmarks.block import BLOCK, non_distinct_rules
from cola_core import BaseCheck, CheckResult, Cola
from cola_core.errors import ColaError
from cola_core.plan.planner import distinct_key, plan_block, run_block
from cola_helpers import NoFutureDateCheck

UNIQUE_ID = {"type": "unique", "columns": ["order_id"]}
DUPLICATES_ID = {"type": "duplicate_count", "column": "order_id", "must_be": "= 0"}
SQL_QUERY = {"type": "sql", "query": "SELECT count(*) > 0 FROM _validation_df WHERE amount < 0"}
STATUSES = {"query": "SELECT * FROM VALUES ('paid'), ('pending'), ('shipped'), ('cancelled') AS t(status)"}
FOREIGN_KEY = {"type": "foreign_key", "column": "status", "reference": STATUSES}


class CountedRowsCheck(BaseCheck):
    """A custom check that only implements ``run``: one ``count()`` of its own."""

    def run(self, df):
        rows = df.count()
        return CheckResult("counted_rows", rows > 0, f"{rows} rows", 0)


class AliasedCheck(BaseCheck):
    """Aliases its aggregates with names another instance uses too."""

    def aggregations(self, df):
        from pyspark.sql import functions as F

        return [F.max(self.params["column"]).alias("value"), F.count(F.lit(1)).alias("_cola_0_0")]

    def from_aggregations(self, values):
        return CheckResult("aliased", True, f"{values[0]} of {values[1]}")


def make_cola(distinct_strategy: str = "separate") -> Cola:
    cola = Cola(distinct_strategy=distinct_strategy)
    cola.register("no_future_date", NoFutureDateCheck)
    cola.register("counted_rows", CountedRowsCheck)
    cola.register("aliased", AliasedCheck)
    return cola


def jobs_of(job_counter, cola: Cola, df, rules) -> int:
    with job_counter.count() as counted:
        cola.run(df, rules)
    return counted.jobs


# -- job counts ------------------------------------------------------------------------------


def test_the_benchmark_block_has_13_plain_rules_and_15_in_all():
    assert len(non_distinct_rules()) == 13
    assert len(BLOCK) == 15
    assert [rule for rule in BLOCK if rule not in non_distinct_rules()] == [UNIQUE_ID, DUPLICATES_ID]


@pytest.mark.parametrize("strategy", ["separate", "inline"])
def test_13_plain_rules_start_exactly_one_job(job_counter, benchmark_orders, strategy):
    assert jobs_of(job_counter, make_cola(strategy), benchmark_orders, non_distinct_rules()) == 1


@pytest.mark.parametrize(("strategy", "jobs"), [("separate", 2), ("inline", 1)])
def test_unique_and_duplicate_count_on_one_column_set_share_one_count(job_counter, benchmark_orders, strategy, jobs):
    assert jobs_of(job_counter, make_cola(strategy), benchmark_orders, BLOCK) == jobs


def test_each_distinct_column_set_adds_one_job_when_separate(job_counter, benchmark_orders):
    rules = [
        *BLOCK,
        {"type": "distinct_count", "columns": ["status", "customer_id"], "must_be": "> 0"},
        {"type": "duplicate_percent", "columns": ["customer_id", "status"], "must_be": "< 100%"},
    ]
    assert jobs_of(job_counter, make_cola("separate"), benchmark_orders, rules) == 3
    assert jobs_of(job_counter, make_cola("inline"), benchmark_orders, rules) == 1


def test_each_sql_query_rule_adds_exactly_one_job(job_counter, benchmark_orders):
    cola = make_cola()
    plain = non_distinct_rules()
    assert jobs_of(job_counter, cola, benchmark_orders, [*plain, SQL_QUERY]) == 2
    second = {"type": "sql", "query": "SELECT max(amount) <= 1000 FROM _validation_df"}
    assert jobs_of(job_counter, cola, benchmark_orders, [*plain, SQL_QUERY, second]) == 3


def test_a_sql_failed_rows_rule_adds_exactly_one_job(job_counter, benchmark_orders):
    rule = {"type": "sql", "failed_rows": "SELECT * FROM _validation_df WHERE amount < 0"}
    assert jobs_of(job_counter, make_cola(), benchmark_orders, [*non_distinct_rules(), rule]) == 2


def test_a_custom_check_with_aggregations_joins_the_scan(job_counter, benchmark_orders):
    rules = [*non_distinct_rules(), {"type": "no_future_date", "column": "created_at"}]
    with job_counter.count() as counted:
        results = make_cola().run(benchmark_orders, rules)
    assert counted.jobs == 1
    assert results[-1] == CheckResult("no_future_date", True, code="no_future_date(created_at)")


def test_a_custom_check_with_only_run_keeps_its_own_job(job_counter, benchmark_orders):
    rules = [*non_distinct_rules(), {"type": "counted_rows"}]
    with job_counter.count() as counted:
        results = make_cola().run(benchmark_orders, rules)
    assert counted.jobs == 2
    assert results[-1] == CheckResult("counted_rows", True, "5000 rows", code="counted_rows")


@pytest.mark.parametrize(
    "rule",
    [FOREIGN_KEY, {"type": "reconcile", "aggregate": "count", "must_be": "< 1%",
                   "reference": {"query": "SELECT * FROM range(5000)"}},
     {"type": "reference_match", "keys": ["order_id"], "columns": ["status", "amount"],
      "absolute_difference": {"amount": 1}, "missing": "ignore",
      "reference": {"query": "SELECT id AS order_id, 'paid' AS status, 10.0 AS amount FROM range(100)"}}],
    ids=["foreign_key", "reconcile", "reference_match"],
)
def test_a_reference_rule_adds_one_job_over_the_reference_not_a_scan_of_the_data(job_counter, benchmark_orders, rule):
    # foreign_key and reference_match broadcast the reference, grouped by key, into the scan;
    # reconcile's reference aggregate is a scalar subquery of the scan. Either way Spark runs
    # one job for the reference.
    assert jobs_of(job_counter, make_cola(), benchmark_orders, [*non_distinct_rules(), rule]) == 2


def test_a_schema_only_block_starts_no_job(job_counter, benchmark_orders):
    rules = [
        {"type": "schema", "required_columns": ["order_id", "email"]},
        {"type": "schema", "column_types": {"amount": "double", "order_id": "string"}},
    ]
    with job_counter.count() as counted:
        results = make_cola().run(benchmark_orders, rules)
    assert counted.jobs == 0
    assert [r.passed for r in results] == [True, False]
    assert results[1].message == "schema: column order_id is bigint, expected string"


# -- what each check gets back ---------------------------------------------------------------


def test_both_distinct_strategies_give_identical_results(benchmark_orders):
    # Freshness moves with current_timestamp(); everything else must be equal to the last bit.
    rules = [
        *[rule for rule in BLOCK if rule["type"] != "freshness"],
        {"type": "distinct_count", "columns": ["customer_id", "status"], "must_be": "> 0"},
        {"type": "distinct_count", "column": "cpf", "must_be": "> 0"},
        {"type": "duplicate_count", "must_be": "= 0"},
        {"type": "unique", "columns": ["customer_id"]},
    ]
    separate = make_cola("separate").run(benchmark_orders, rules)
    inline = make_cola("inline").run(benchmark_orders, rules)
    assert inline == separate
    assert [r.code for r in separate[-4:]] == [
        "distinct_count(customer_id,status)",
        "distinct_count(cpf)",
        "duplicate_count",
        "unique(customer_id)",
    ]


@pytest.mark.parametrize("strategy", ["separate", "inline"])
def test_distinct_counts_treat_null_as_one_value(spark, strategy):
    df = spark.createDataFrame(
        [(1, "a"), (1, "a"), (None, "a"), (None, "a"), (None, None), (None, None), (2, None)],
        "k bigint, v string",
    )
    rules = [
        {"type": "distinct_count", "column": "k", "must_be": "> 0"},
        {"type": "distinct_count", "columns": ["k", "v"], "must_be": "> 0"},
        {"type": "unique", "columns": ["v"]},
        {"type": "duplicate_count", "must_be": "= 0"},
    ]
    results = make_cola(strategy).run(df, rules)
    # As select(cols).distinct().count(): {1, NULL, 2}; {(1,a), (NULL,a), (NULL,NULL), (2,NULL)}; {a, NULL}.
    assert [r.metric_value for r in results] == [3, 4, None, 3]
    assert results[2].failed_count == 5
    assert results[2].message == "unique(v): 5 duplicate rows (7 rows, 2 distinct)"


@pytest.mark.parametrize("strategy", ["separate", "inline"])
def test_whole_row_distinct_counts_quote_column_names(spark, strategy):
    df = spark.createDataFrame([(1, 2), (1, 2), (1, 3)], "`a.b` int, `c d` int")
    (result,) = make_cola(strategy).run(df, [{"type": "duplicate_count", "must_be": "= 0"}])
    assert (result.metric_value, result.message) == (1, "duplicate_count = 1 violates must_be (= 0)")


@pytest.mark.parametrize("strategy", ["separate", "inline"])
def test_a_whole_row_distinct_set_never_includes_helper_columns(benchmark_orders, strategy):
    # foreign_key's prepare adds a lookup column to the scanned rows; the whole row is still
    # the caller's columns (the separate count runs on the caller's DataFrame).
    rules = [{"type": "duplicate_count", "must_be": "= 0"}, FOREIGN_KEY]
    duplicates, lookup = make_cola(strategy).run(benchmark_orders, rules)
    assert duplicates.message == "duplicate_count = 0 meets must_be (= 0)"
    assert lookup.message == "foreign_key(status): 26 values not found in the reference"


def test_aggregates_are_read_by_position_so_checks_cannot_collide(benchmark_orders):
    # Issue 11: the planner no longer aliases aggregates (_cola_<check>_<n>), which cost 11
    # Py4J round trips each; checks read their values by position, so the names the checks
    # chose, equal or not, never matter.
    rules = [
        {"type": "aliased", "column": "amount"},
        {"type": "aliased", "column": "order_id"},
        {"type": "row_count", "must_be": "= 5000"},
    ]
    checks = make_cola().parse(rules)
    plan = plan_block(benchmark_orders, checks)
    # Every scanned check's rows_checked is the block's one count(1), placed after the first
    # check's own aggregates; row_count's count is that same Column.
    assert plan.positions == {0: [0, 1], 1: [3, 4], 2: [2]}
    assert plan.rows_at == {0: 2, 1: 2, 2: 2}
    assert benchmark_orders.agg(*plan.aggregates).columns == ["value", "_cola_0_0", "count(1)", "value", "_cola_0_0"]
    results = run_block(benchmark_orders, checks)
    assert [r.message for r in results] == ["999.85 of 5000", "4999 of 5000", "row_count = 5000 meets must_be (= 5000)"]


def test_the_plan_shares_a_distinct_set_and_runs_the_rest_alone(benchmark_orders):
    rules = [
        {"type": "unique", "columns": ["order_id", "email"]},
        {"type": "duplicate_count", "columns": ["email", "order_id", "email"], "must_be": "= 0"},
        {"type": "distinct_count", "column": "status", "must_be": "> 0"},
        SQL_QUERY,
        {"type": "schema", "required_columns": ["order_id"]},
        {"type": "counted_rows"},
    ]
    plan = plan_block(benchmark_orders, make_cola().parse(rules))
    email_id, status = (("email", "order_id"), None), (("status",), None)
    assert plan.distinct_sets == [email_id, status]
    assert plan.distinct_needs == {0: [email_id], 1: [email_id], 2: [status]}
    assert plan.own_action == [3, 4, 5]


def test_distinct_key_ignores_order_and_repeats():
    assert distinct_key(["b", "a", "b"]) == (("a", "b"), None)
    assert distinct_key(["b", "a"], "amount > 0") == (("a", "b"), "amount > 0")


def test_an_unknown_distinct_strategy_is_refused_before_any_job(job_counter, benchmark_orders):
    with job_counter.count() as counted, pytest.raises(ColaError) as caught:
        run_block(benchmark_orders, make_cola().parse(BLOCK), "both")
    assert str(caught.value) == "distinct_strategy must be 'separate' or 'inline', got 'both'"
    assert counted.jobs == 0


def test_cola_refuses_an_unknown_distinct_strategy_when_built():
    with pytest.raises(ColaError) as caught:
        Cola(distinct_strategy="both")
    assert str(caught.value) == "distinct_strategy must be 'separate' or 'inline', got 'both'"


@pytest.mark.spark
def test_a_rule_spark_cannot_evaluate_on_the_data_fails_alone_and_the_others_keep_their_results(spark):
    """Bad data is measured, never a crash: a condition that fails under ANSI mode on one
    value (an invalid cast, a division by zero) costs only its own rule."""
    df = spark.createDataFrame([(1, "a"), (2, "5"), (None, "7")], "id int, s string")
    cast_error = ("[CAST_INVALID_INPUT] The value '{}' of the type \"STRING\" cannot be cast to \"INT\" because it is "
                  "malformed. Correct the value as per the syntax, or change its target type. Use `try_cast` to "
                  "tolerate malformed input and return NULL instead. SQLSTATE: 22018")
    rules = [
        {"type": "not_null", "columns": ["id"]},
        {"type": "not_null", "columns": ["id"], "where": "cast(s AS int) > 0"},
        {"type": "expression", "expression": "id / (id - id) > 0"},
        {"type": "unique", "columns": ["id"], "where": "cast(s AS int) > 0"},
        {"type": "sql", "query": "SELECT count(*) = cast('boom' AS int) FROM _validation_df"},
        {"type": "row_count", "min": 1},
        {"type": "expression", "expression": "id / (id - id) > 0", "severity": "warn"},
    ]
    results = Cola().run(df, rules)
    unevaluated = "Spark could not evaluate the rule on this data: "
    assert [(r.severity, r.failed_count, r.message) for r in results] == [
        ("fail", 1, "not_null(id): 1 NULL value (id: 1)"),
        ("fail", 0, "not_null(id): " + unevaluated + cast_error.format("a")),
        ("fail", 0, "expression(id / (id - id) > 0): " + unevaluated + "[DIVIDE_BY_ZERO] Division by zero. Use "
         "`try_divide` to tolerate divisor being 0 and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" "
         "to \"false\" to bypass this error. SQLSTATE: 22012"),
        ("fail", 0, "unique(id): " + unevaluated + cast_error.format("a")),
        ("fail", 0, "sql: " + unevaluated + cast_error.format("boom")),
        ("pass", 0, "row_count = 3 is within bounds (min 1)"),
        ("warn", 0, "expression(id / (id - id) > 0): " + unevaluated + "[DIVIDE_BY_ZERO] Division by zero. Use "
         "`try_divide` to tolerate divisor being 0 and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" "
         "to \"false\" to bypass this error. SQLSTATE: 22012"),
    ]


@pytest.mark.spark
def test_a_failure_that_is_not_about_the_data_is_still_raised(spark):
    from cola_core.checks import BaseCheck

    class Broken(BaseCheck):
        def aggregations(self, df):
            from pyspark.sql import functions as F

            return [F.count(F.lit(1))]

        def from_aggregations(self, values):
            raise RuntimeError("a bug in a custom check")

    df = spark.createDataFrame([(1,)], "id int")
    cola = Cola()
    cola.register("broken", Broken)
    with pytest.raises(RuntimeError, match="a bug in a custom check"):
        cola.run(df, [{"type": "broken"}])


class _Worded(BaseCheck):
    """A custom check whose own failure is worded like an unmeasured rule, but was measured."""

    def run(self, df):
        return CheckResult("worded", False, "the vendor could not evaluate this, on purpose", 1)


@pytest.mark.spark
def test_a_rule_spark_fails_on_is_flagged_as_such_and_the_others_are_not(spark):
    from cola_core.report.results import summarise

    df = spark.createDataFrame([(1, "a"), (None, "5")], "id int, s string")
    cola = Cola()
    cola.register("worded", _Worded)
    rules = [{"type": "expression", "expression": "id / (id - id) > 0"}, {"type": "not_null", "columns": ["id"]},
             {"type": "worded"}, {"type": "unique", "columns": ["id"], "where": "cast(s AS int) > 0"}]
    results = cola.run(df, rules)
    assert [(r.severity, r.evaluation_failed) for r in results] == [
        ("fail", True), ("fail", False), ("fail", False), ("fail", True)
    ]
    written = summarise(results)["results"]
    assert [r.get("evaluation_failed") for r in written] == [True, None, None, True]


@pytest.mark.spark
def test_samples_skip_a_rule_spark_cannot_evaluate_and_keep_the_others(spark):
    df = spark.createDataFrame([(1, "a"), (None, "5")], "id int, s string")
    rules = [{"type": "expression", "expression": "id / (id - id) > 0"}, {"type": "not_null", "columns": ["id"]}]
    results = Cola().run(df, rules, samples=2)
    assert [(r.severity, r.samples) for r in results] == [("fail", None), ("fail", [{"id": None, "s": "5"}])]


@pytest.mark.spark
def test_failures_spark_does_not_classify_but_that_come_from_the_values_fail_only_their_rule(spark):
    df = spark.createDataFrame([("<a>",), (None,)], "s string")
    rules = [
        {"type": "expression", "expression": "xpath_string(s, 'a') IS NOT NULL", "null_is_valid": True},
        {"type": "expression", "expression": "split(s, '(')[0] IS NOT NULL", "null_is_valid": True},
        {"type": "expression", "expression": "to_number(s, '999') IS NOT NULL", "null_is_valid": True},
        {"type": "not_null", "columns": ["s"]},
    ]
    results = Cola().run(df, rules)
    unevaluated = ": Spark could not evaluate the rule on this data: "
    assert [r.message for r in results[:3]] == [
        "expression(xpath_string(s, 'a') IS NOT NULL)" + unevaluated + "org.xml.sax.SAXParseException; lineNumber: 1; "
        "columnNumber: 4; XML document structures must start and end within the same entity.",
        "expression(split(s, '(')[0] IS NOT NULL)" + unevaluated + "java.util.regex.PatternSyntaxException: Unclosed "
        "group near index 1",
        "expression(to_number(s, '999') IS NOT NULL)" + unevaluated + "[INVALID_FORMAT.MISMATCH_INPUT] The format is "
        "invalid: 999. The input \"STRING\" <a> does not match the format. SQLSTATE: 42601",
    ]
    assert [(r.severity, r.message) for r in results[3:]] == [("fail", "not_null(s): 1 NULL value (s: 1)")]


# -- the Python side: Py4J round trips per rule ----------------------------------------------
#
# Building a block's Columns talks to the JVM: every Column method records its call site there
# first. Measured with benchmarks/py4j_calls.py on the benchmark's blocks (pyspark 4.2.0,
# after one warm-up run; the counts do not depend on the data's size):
#
#   block      Cola before issue 11   Cola now   hand-written plan (b2)
#   15 rules   84.6 per rule          25.3       38.1
#   80 rules   106.3 per rule         31.0       34.9
#
# The bounds leave a little room for another pyspark patch release; the hand-written plan is
# counted in the same test, and Cola must stay below it.
PY4J_CALLS_PER_RULE = {"15": 27.0, "80": 33.0}


@pytest.mark.parametrize("block", ["15", "80"])
def test_a_block_costs_fewer_py4j_calls_per_rule_than_the_hand_written_plan(benchmark_orders, block):
    from benchmarks.plans import BLOCK_SPECS, agg_plus_distinct, cola_run
    from benchmarks.py4j_calls import count_py4j_calls

    spec = BLOCK_SPECS[block]
    plans = {"cola": cola_run(Cola(), spec.rules), "hand": agg_plus_distinct(spec)}
    per_rule = {}
    for name, plan in plans.items():
        plan(benchmark_orders)  # warm: regex patterns compiled once, pyspark's lookups cached
        with count_py4j_calls() as calls:
            plan(benchmark_orders)
        per_rule[name] = calls.total / len(spec.rules)
    assert per_rule["cola"] <= PY4J_CALLS_PER_RULE[block], per_rule
    assert per_rule["cola"] < per_rule["hand"], per_rule


# A range over a number or date column, and a regex over a text column, are written as one
# SQL expression (common.sqltext) instead of a Column tree of a dozen functions and
# operators, and counted with one expression of text (BaseCheck.count_where) that equal rules
# share: 4.2 Py4J round trips per rule here, the block's own calls included (the 40 regex rules
# have 3 patterns), where the Column path took 47 and the expression inside count(when(...))
# 11.2 (pyspark 4.2.0, call sites recorded, as this session does). The bound leaves a little room.
WIDE_RULE_CALLS = 5.0


def test_range_and_regex_rules_cost_one_expression_each(spark):
    from benchmarks.py4j_calls import count_py4j_calls

    if not hasattr(spark, "_jvm"):
        pytest.skip("classic mode only: Spark Connect builds its Columns without Py4J")
    df = spark.createDataFrame(
        [(1.0, 5, "ab", dt.date(2024, 1, 2)), (float("nan"), 50, "a1", dt.date(2024, 3, 1)), (None, None, None, None)],
        "x double, n int, s string, d date",
    )
    rules = [
        *({"type": "range", "column": "x", "min": 0, "max": 1 + i} for i in range(40)),
        *({"type": "range", "column": "n", "max": 10 + i} for i in range(40)),
        *({"type": "range", "column": "d", "min": "2024-01-01", "max": f"2024-02-{1 + i:02d}"} for i in range(28)),
        *({"type": "regex", "column": "s", "pattern": f"^[a-z]{{{1 + i % 3}}}$"} for i in range(40)),
    ]
    Cola().run(df, rules)  # warm: pyspark's lookups cached
    with count_py4j_calls() as calls:
        results = Cola().run(df, rules)
    assert calls.total / len(rules) <= WIDE_RULE_CALLS, calls.total / len(rules)
    # NaN lies in no interval; NULL passes a range and fails a regex.
    assert [r.failed_count for r in results] == [
        *([1] * 40),
        *([1] * 40),
        *([1] * 28),
        *([3, 2, 3] * 13 + [3]),
    ]


def test_the_round_trips_per_rule_do_not_grow_with_the_block(spark):
    """No step of building a block talks to the JVM per pair of rules: 400 distinct range and
    regex rules cost no more Py4J round trips per rule than 50 (the block's own calls, spread
    over more rules, outweigh the eight more jobs)."""
    from benchmarks.py4j_calls import count_py4j_calls

    if not hasattr(spark, "_jvm"):
        pytest.skip("classic mode only: Spark Connect builds its Columns without Py4J")
    df = spark.createDataFrame([(1.5, "ab"), (None, "abc")], "x double, s string")
    per_rule = {}
    for size in (50, 400):
        rules = [
            {"type": "range", "column": "x", "max": i} if i % 2 else {"type": "regex", "column": "s", "pattern": f"^[a-z]{{{i}}}$"}
            for i in range(size)
        ]
        Cola().run(df, rules)  # warm: pyspark's lookups cached
        with count_py4j_calls() as calls:
            Cola().run(df, rules)
        per_rule[size] = calls.total / size
    assert per_rule[400] <= per_rule[50], per_rule  # 5.0 and 6.5 (pyspark 4.2.0)


# -- wide blocks: several jobs of alike size ------------------------------------------------


def test_a_block_wider_than_aggregates_per_job_runs_in_jobs_of_alike_size(spark, job_counter):
    from cola_helpers import jobs_of

    if not hasattr(spark, "_jvm"):
        pytest.skip("job counts are read from the classic session's status tracker")
    df = spark.createDataFrame([(float(n), n) for n in range(20)], "x double, n int")
    # 250 distinct range rules and the shared row count: 251 aggregates, six jobs of 41 or 42.
    rules = [{"type": "range", "column": "x" if i % 2 else "n", "min": 0, "max": 5 + i} for i in range(250)]
    assert jobs_of(job_counter, df, rules) == 6
    assert jobs_of(job_counter, df, rules, Cola(aggregates_per_job=100)) == 3
    assert jobs_of(job_counter, df, rules, Cola(aggregates_per_job=251)) == 1
    # A narrower block keeps its one job (the 80-rule benchmark block has 100 aggregates).
    assert jobs_of(job_counter, df, rules[:199]) == 1
    expected = [max(0, 20 - (5 + i) - 1) for i in range(250)]
    for cola in (Cola(), Cola(aggregates_per_job=7)):
        assert [r.failed_count for r in cola.run(df, rules)] == expected


def test_equal_conditions_without_a_where_share_one_aggregate(spark, job_counter):
    """not_null and missing_percent of one column count the same NULLs, and a range written
    twice (say, once to fail, once to warn) counts the same rows: each condition is
    one aggregate, so 250 rules of 50 conditions stay in one job. A scoped rule keeps its own."""
    from cola_core.common.columns import shared_columns
    from cola_helpers import jobs_of

    if not hasattr(spark, "_jvm"):
        pytest.skip("job counts are read from the classic session's status tracker")
    df = spark.createDataFrame([(float(n) if n % 4 else None, n) for n in range(20)], "x double, n int")
    rules = [{"type": "range", "column": "n", "min": 0, "max": 5 + i % 50} for i in range(250)]
    assert jobs_of(job_counter, df, rules) == 1
    pair = [
        {"type": "not_null", "columns": ["x"]},
        {"type": "missing_percent", "column": "x", "must_be": "< 10"},
        {"type": "range", "column": "n", "max": 9},
        {"type": "range", "column": "n", "max": 9, "severity": "warn"},
        {"type": "range", "column": "n", "max": 9, "where": "n > 14"},
    ]
    with shared_columns():
        counts = [check.aggregations(df) for check in Cola().parse(pair)]
    assert counts[0][0] is counts[1][1]  # the NULLs of x, once
    assert counts[2][0] is counts[3][0]  # n > 9, once
    assert counts[4][0] is not counts[2][0]  # the scoped rule counts n > 9 among n > 14
    results = Cola().run(df, pair)
    assert [(r.passed, r.failed_count) for r in results] == [(False, 5), (False, 5), (False, 10), (True, 10), (False, 5)]
    assert results[1].message == "missing_percent(x) = 25 violates must_be (< 10)"


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "200"])
def test_aggregates_per_job_must_be_a_whole_number_of_at_least_one(bad):
    with pytest.raises(ColaError) as raised:
        Cola(aggregates_per_job=bad)
    assert str(raised.value) == f"aggregates_per_job must be a whole number of at least 1, got {bad!r}"


def test_a_wide_block_runs_in_its_planned_jobs_with_every_rule_measured(spark, job_counter):
    """benchmarks/wide.py's block at 150 columns (400 rules, 401 aggregates: 9 jobs of 44
    or 45); the benchmark runs 1,000 columns and 2,672 rules."""
    from benchmarks.wide import columns_of, rules_of

    if not hasattr(spark, "_jvm"):
        pytest.skip("job counts are read from the classic session's status tracker")
    exprs = [
        f"CASE WHEN id = 0 THEN NULL ELSE double(id * 10) END AS {name}" if kind == "double"
        else f"CASE WHEN id = 3 THEN 'A-b' ELSE concat('v', id) END AS {name}"
        for name, kind in columns_of(150)
    ]
    df = spark.range(4).selectExpr(*exprs)
    rules = rules_of(150)
    with job_counter.count() as counted, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = Cola().run(df, rules)
    # Run two at a time, in threads that carry the caller's job group (so all 9 are counted
    # here) and the session's tags, which PySpark warns about when they are not given.
    assert counted.jobs == 9
    assert [str(warning.message) for warning in caught] == []
    assert not any(r.evaluation_failed for r in results)
    # Per triple: 1 NULL; 0 out of range (10, 20, 30 within 0..90+); max 30; 25% missing;
    # 0 out of 1..100; avg 20; no NULL text; one text the regex refuses.
    assert {(r.rule_type, r.failed_count, r.metric_value) for r in results} == {
        ("not_null", 1, None), ("range", 0, None), ("max", 0, 30.0), ("missing_percent", 1, 25.0),
        ("avg", 0, 20.0), ("not_null", 0, None), ("regex", 1, None),
    }


def test_a_statistic_that_is_null_exactly_when_nothing_was_measured_takes_one_aggregate(spark):
    """min, max and a non-decimal avg are NULL exactly when no value was measured, so they need
    no count of values beside them; sum (which overflows to NULL), a decimal's avg and stddev
    (which needs two values) keep theirs. The block's row count is one aggregate for all."""
    df = spark.createDataFrame(
        [(None, None), (None, None)], "x double, d decimal(10,2)"
    )
    rules = [{"type": kind, "column": "x", "must_be": "> 0"} for kind in ("min", "max", "avg", "sum", "stddev")]
    rules.append({"type": "avg", "column": "d", "must_be": "> 0"})
    checks = Cola().parse(rules)
    plan = plan_block(df, checks)
    assert [len(plan.positions[n]) for n in range(6)] == [2, 2, 2, 3, 3, 3]  # the rows count is one of them
    assert len(plan.aggregates) == 1 + 3 + 3 * 2  # the rows, three statistics, three with their count
    unmeasured = "{}: nothing was measured ({}), so must_be (> 0) is not met"
    assert [r.message for r in Cola().run(df, rules)] == [
        unmeasured.format(f"{kind}({column})", f"{column} has no non-NULL values")
        for kind, column in [("min", "x"), ("max", "x"), ("avg", "x"), ("sum", "x"), ("stddev", "x"), ("avg", "d")]
    ]
    assert [r.message for r in Cola().run(df.limit(0), rules[:1])] == [
        unmeasured.format("min(x)", "the DataFrame is empty")
    ]
    # One value: measured, where stddev needs two.
    one = spark.createDataFrame([(4.0, None)], "x double, d decimal(10,2)")
    assert [r.message for r in Cola().run(one, rules[1:5:3])] == [
        "max(x) = 4 meets must_be (> 0)", unmeasured.format("stddev(x)", "x has 1 of the 2 non-NULL values needed")
    ]

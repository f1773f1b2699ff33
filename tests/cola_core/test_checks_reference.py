"""``foreign_key`` and ``reconcile``: the data held against a reference (a file, a table or a
view). Every test compares whole results or exact rows, messages and job counts."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cola_core import CheckResult, Cola, ColaRuleError
from cola_core.checks.reference_base import comparison_type
from cola_core.errors import ColaSourceError
from cola_core.plan.preflight import read_inputs
from cola_helpers import fk, jobs_of, rec, refused, run_one, sorted_rows

pytestmark = [pytest.mark.spark, pytest.mark.connect]


@pytest.fixture
def orders(spark):
    return spark.createDataFrame(
        [(1, 10, "BR", 5.0), (2, 11, "BR", 7.5), (3, 99, "US", 1.0), (4, None, "US", 2.0), (5, 98, None, 3.0)],
        "order_id int, customer_id int, country string, amount double",
    )


@pytest.fixture
def customers(spark):
    # bigint ids against the orders' int keys; 11 twice and a NULL id must change nothing.
    df = spark.createDataFrame(
        [(10, "BR"), (11, "BR"), (12, "US"), (11, "BR"), (None, "US"), (98, "US")], "id bigint, cc string"
    )
    df.createOrReplaceTempView("ref_customers")
    return df


# -- foreign_key: results ------------------------------------------------------------------


def test_keys_absent_from_the_reference_fail_and_null_keys_pass(orders, customers):
    # Only 99 is absent from the reference; the NULL key passes.
    assert run_one(orders, fk()) == CheckResult(
        "foreign_key", False, "foreign_key(customer_id): 1 value not found in the reference", 1,
        code="foreign_key(customer_id)",
    )


def test_several_missing_values_are_counted_per_row(spark, customers):
    df = spark.createDataFrame([(99,), (99,), (7,), (10,)], "customer_id int")
    assert run_one(df, fk()).message == "foreign_key(customer_id): 3 values not found in the reference"


def test_every_present_key_found_passes(spark, customers):
    df = spark.createDataFrame([(10,), (11,), (None,), (11,)], "customer_id int")
    assert run_one(df, fk()) == CheckResult(
        "foreign_key", True, "foreign_key(customer_id): all present keys found in the reference", 0,
        code="foreign_key(customer_id)",
    )


def test_reference_columns_default_to_the_rule_columns(spark, customers):
    df = spark.createDataFrame([(10,), (13,)], "id int")
    rule = {"type": "foreign_key", "column": "id", "reference": {"table": "ref_customers"}}
    assert run_one(df, rule).message == "foreign_key(id): 1 value not found in the reference"


def test_composite_key_must_match_on_every_column(orders, customers):
    rule = {"type": "foreign_key", "columns": ["customer_id", "country"], "reference": {"table": "ref_customers"},
            "reference_columns": ["id", "cc"]}
    # (10,BR) (11,BR) found; (99,US) absent; (NULL,US) and (98,NULL) have a NULL in the key.
    assert run_one(orders, rule) == CheckResult(
        "foreign_key", False, "foreign_key(customer_id,country): 1 key not found in the reference", 1,
        code="foreign_key(customer_id,country)",
    )
    # Each column alone is in the reference, but the pair (12, BR) is not.
    df = orders.sparkSession.createDataFrame([(12, "BR"), (12, "US")], "customer_id int, country string")
    assert run_one(df, rule).failed_count == 1


def test_reference_from_parquet_files(spark, tmp_path, orders):
    path = str(tmp_path / "customers")
    spark.createDataFrame([(10,), (11,), (99,)], "id bigint").write.parquet(path)
    rule = fk(reference={"path": path, "format": "parquet"})
    assert run_one(orders, rule).message == "foreign_key(customer_id): 1 value not found in the reference"


def test_reference_from_a_query(orders):
    rule = fk(reference={"query": "SELECT id FROM VALUES (10), (11), (98), (99) AS t(id)"})
    assert run_one(orders, rule).message == "foreign_key(customer_id): all present keys found in the reference"


def test_string_keys_against_numeric_reference_compare_as_text(spark, customers):
    # Under ANSI Spark a plain string = bigint would cast 'x' and fail the job; as text it is just absent.
    df = spark.createDataFrame([("10",), ("x",), ("11",)], "customer_id string")
    assert run_one(df, fk()).message == "foreign_key(customer_id): 1 value not found in the reference"


def _types():
    from pyspark.sql import types as T

    return {
        "int": T.IntegerType(), "bigint": T.LongType(), "smallint": T.ShortType(), "double": T.DoubleType(),
        "decimal(10,2)": T.DecimalType(10, 2), "decimal(38,10)": T.DecimalType(38, 10), "date": T.DateType(),
        "timestamp": T.TimestampType(), "string": T.StringType(), "boolean": T.BooleanType(),
    }


@pytest.mark.parametrize(
    ("data_type", "reference_type", "compared_as"),
    [
        ("int", "int", None),
        ("int", "bigint", "bigint"),
        ("smallint", "double", "double"),
        ("decimal(10,2)", "int", "decimal(12,2)"),
        ("decimal(38,10)", "bigint", "decimal(38,10)"),
        ("date", "timestamp", "timestamp"),
        ("string", "int", "string"),
        ("boolean", "string", "string"),
    ],
)
def test_key_types_are_compared_as_one_type(data_type, reference_type, compared_as):
    # Pure Python: built from the type classes, so no Spark session is needed.
    types = _types()
    assert comparison_type(types[data_type], types[reference_type]) == compared_as


def test_decimal_and_date_keys_find_their_reference(spark):
    df = spark.createDataFrame([(dt.date(2024, 1, 31), Decimal("1.00")), (dt.date(2024, 2, 1), Decimal("2.50"))],
                               "day date, code decimal(10,2)")
    spark.createDataFrame([(dt.datetime(2024, 1, 31), 1), (dt.datetime(2024, 2, 1, 12), 2)],
                          "ts timestamp, n int").createOrReplaceTempView("ref_calendar")
    calendar = {"type": "foreign_key", "reference": {"table": "ref_calendar"}}
    days = {**calendar, "column": "day", "reference_columns": ["ts"]}
    codes = {**calendar, "column": "code", "reference_columns": ["n"]}
    # 2024-02-01 is midnight, not noon; 2.50 is no whole number.
    assert [r.failed_count for r in Cola().run(df, [days, codes])] == [1, 1]


def test_a_table_may_reference_itself(spark):
    employees = spark.createDataFrame([(1, None), (2, 1), (3, 2), (4, 9)], "id int, manager_id int")
    employees.createOrReplaceTempView("ref_employees")
    rule = {"type": "foreign_key", "column": "manager_id", "reference": {"table": "ref_employees"},
            "reference_columns": ["id"]}
    assert run_one(employees, rule).message == "foreign_key(manager_id): 1 value not found in the reference"
    valid, invalid = Cola().split(employees, [rule])
    assert sorted_rows(tuple(r) for r in invalid.collect()) == [(4, 9)]
    assert valid.count() == 3


def test_where_limits_the_rule_to_its_scope(orders, customers):
    # Order 3 (customer 99) has amount 1.0, outside the scope.
    assert run_one(orders, fk(where="amount >= 2")).message == (
        "foreign_key(customer_id): all present keys found in the reference"
    )
    assert run_one(orders, fk(where="country = 'US'")).failed_count == 1


def test_tolerance_and_warn_apply_as_to_any_row_rule(orders, customers):
    tolerated = run_one(orders, fk(tolerance="< 25%"))
    assert (tolerated.passed, tolerated.message) == (
        True, "foreign_key(customer_id): 1 value not found in the reference; 20% of rows, within tolerance (< 25%)"
    )
    warned = run_one(orders, fk(severity="warn"))
    assert (warned.passed, warned.severity, warned.failed_count) == (True, "warn", 1)


# -- foreign_key: the split ----------------------------------------------------------------


def test_split_quarantines_missing_keys_with_their_code_and_keeps_the_schema(orders, customers):
    rules = [fk(), {"type": "not_null", "columns": ["customer_id"]}]
    valid, invalid = Cola().split(orders, rules, annotate="dq_codes")
    assert valid.schema == orders.schema
    assert invalid.columns == [*orders.columns, "dq_codes"]
    assert sorted_rows(tuple(r) for r in valid.collect()) == sorted_rows(
        [(1, 10, "BR", 5.0), (2, 11, "BR", 7.5), (5, 98, None, 3.0)]
    )
    assert sorted_rows((r.order_id, r.dq_codes) for r in invalid.collect()) == [
        (3, ["foreign_key(customer_id)"]),
        (4, ["not_null(customer_id)"]),
    ]


def test_split_without_annotate_adds_no_column_and_loses_no_row(orders, customers):
    valid, invalid = Cola().split(orders, [fk(code="FK_CUSTOMER")])
    assert valid.columns == orders.columns and invalid.columns == orders.columns
    # Duplicate ids in the reference do not duplicate rows: 4 + 1 == 5.
    assert (valid.count(), invalid.count()) == (4, 1)


# -- foreign_key: the plan and the single scan ------------------------------------------------


def _plan(df, capsys) -> str:
    capsys.readouterr()
    df.explain()
    return capsys.readouterr().out


def test_small_reference_is_broadcast_and_spark_may_choose_otherwise(spark, tmp_path, orders, capsys):
    path = str(tmp_path / "customers")
    spark.createDataFrame([(10,), (11,), (98,)], "id bigint").write.parquet(path)
    # The planner reads the reference and hands it to the check (checks never read storage).
    [check] = read_inputs(orders, Cola().parse([fk(reference={"path": path})]))
    prepared = check.prepare(orders)
    assert "BroadcastHashJoin" in _plan(prepared, capsys)
    assert prepared.columns == [*orders.columns, check.marker]
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        plan = _plan(check.prepare(orders), capsys)
        assert "BroadcastHashJoin" not in plan and "SortMergeJoin" in plan
        assert run_one(orders, fk(reference={"path": path})).failed_count == 1
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


AGGREGATE_BLOCK = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "row_count", "min": 1},
    {"type": "min", "column": "amount", "must_be": ">= 0"},
    {"type": "missing_percent", "column": "country", "must_be": "< 50%"},
]


def test_foreign_key_joins_the_single_scan(spark, tmp_path, orders, customers, job_counter):
    path = str(tmp_path / "customers")
    spark.createDataFrame([(10,), (11,), (98,)], "id bigint").write.parquet(path)
    spark.sql("SELECT * FROM VALUES (10L), (11L), (98L) AS t(id)").createOrReplaceTempView("ref_values")
    assert jobs_of(job_counter, orders, AGGREGATE_BLOCK) == 1
    # A reference with no size estimate (a DataFrame built from Python rows) gets a sort-merge
    # join, whose stages all belong to the block's one job.
    assert jobs_of(job_counter, orders, [*AGGREGATE_BLOCK, fk()]) == 1
    # A small reference with a known size (an inline VALUES view) is broadcast: one job
    # collects its distinct keys, then the block's one job scans the data.
    assert jobs_of(job_counter, orders, [*AGGREGATE_BLOCK, fk(reference={"table": "ref_values"})]) == 2
    # A parquet reference adds the job in which Spark reads the files' schema when it opens them.
    assert jobs_of(job_counter, orders, [*AGGREGATE_BLOCK, fk(reference={"path": path})]) == 3


# -- foreign_key: errors -------------------------------------------------------------------


def test_a_missing_reference_column_is_a_rule_error_before_any_job(orders, customers, job_counter):
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as raised:
        Cola().run(orders, [{"type": "row_count"}, fk(reference_columns=["customer"])])
    assert str(raised.value) == (
        "rules[1] (foreign_key): reference column 'customer' does not exist in the table ref_customers; "
        "it has id, cc"
    )
    assert counted.jobs == 0


def test_an_unreadable_reference_names_the_rule(orders, tmp_path):
    missing = str(tmp_path / "nowhere")
    with pytest.raises(ColaSourceError) as raised:
        Cola().run(orders, [fk(reference={"path": missing})])
    assert str(raised.value) == (
        f"rules[0] (foreign_key): cannot read the reference: input path {missing!r} does not exist"
    )


# -- reconcile -------------------------------------------------------------------------------


@pytest.fixture
def ledger(spark):
    df = spark.createDataFrame(
        [("BR", 100.0, 3), ("US", 2.5, 4), ("BR", None, 5), ("XX", 1000.0, 6)], "region string, total double, n int"
    )
    df.createOrReplaceTempView("ref_ledger")
    return df


def test_relative_difference_is_a_percentage_of_the_reference(orders, ledger):
    # Data sum(amount) = 18.5; reference sum(total) over BR = 100.
    rule = rec(aggregate="sum", column="amount", reference_column="total", reference_where="region = 'BR'",
               must_be="< 85%")
    assert run_one(orders, rule) == CheckResult(
        "reconcile", True,
        "reconcile(sum(amount)): difference 81.5% (data 18.5, reference 100) meets must_be (< 85%)",
        0, 81.5, code="reconcile(sum(amount))",
    )


def test_absolute_difference_is_in_the_column_units(orders, ledger):
    rule = rec(aggregate="sum", column="amount", reference_column="total", reference_where="region = 'US'",
               difference="absolute", must_be="<= 10")
    assert run_one(orders, rule) == CheckResult(
        "reconcile", False,
        "reconcile(sum(amount)): difference 16 (data 18.5, reference 2.5) violates must_be (<= 10)",
        1, 16.0, code="reconcile(sum(amount))",
    )


def test_warn_level(orders, ledger):
    rule = rec(aggregate="max", column="amount", reference_column="n", difference="absolute",
               must_be="< 5", warn="< 1")
    result = run_one(orders, rule)
    assert (result.passed, result.severity, result.metric_value) == (True, "warn", 1.5)
    assert result.message == "reconcile(max(amount)): difference 1.5 (data 7.5, reference 6) violates warn (< 1)"


def test_count_needs_no_column_and_where_scopes_the_data(orders, ledger):
    rule = rec(aggregate="count", where="country = 'BR'", reference_where="region = 'BR'", must_be="= 0")
    assert run_one(orders, rule) == CheckResult(
        "reconcile", True, "reconcile(count): difference 0% (data 2, reference 2) meets must_be (= 0)",
        0, 0.0, code="reconcile(count)",
    )


def test_count_of_a_column_counts_its_present_values(orders, ledger):
    rule = rec(aggregate="count", column="customer_id", reference_column="total", difference="absolute",
               must_be="= 0")
    assert run_one(orders, rule).message == (
        "reconcile(count(customer_id)): difference 1 (data 4, reference 3) violates must_be (= 0)"
    )


def test_avg_and_min_over_integral_and_double_columns(orders, ledger):
    avg = run_one(orders, rec(aggregate="avg", column="order_id", reference_column="n", must_be="< 40%"))
    assert avg.message == "reconcile(avg(order_id)): difference 33.3333% (data 3, reference 4.5) meets must_be (< 40%)"
    low = run_one(orders, rec(aggregate="min", column="amount", reference_column="total", must_be="< 1%"))
    assert low.message == "reconcile(min(amount)): difference 60% (data 1, reference 2.5) violates must_be (< 1%)"


def test_integral_sum_is_exact(spark, ledger):
    df = spark.createDataFrame([(2**62,), (2**62,)], "n bigint")
    result = run_one(df, rec(aggregate="sum", column="n", difference="absolute", must_be="> 0"))
    assert result.metric_value == 2**63 - 18 and result.passed


def test_zero_reference(spark, ledger):
    df = spark.createDataFrame([(5.0,)], "total double")
    zero = {"query": "SELECT 0.0 AS total"}
    result = run_one(df, rec(aggregate="sum", column="total", reference=zero, must_be="< 1%"))
    assert result == CheckResult(
        "reconcile", False,
        "reconcile(sum(total)): the reference is 0 and the data 5, so there is no relative difference; "
        "must_be (< 1%) is not met",
        1, None, code="reconcile(sum(total))",
    )
    nothing = rec(aggregate="count", reference=zero, reference_where="total > 0", must_be="= 0")
    both_zero = run_one(df.where("total < 0"), nothing)
    assert both_zero.message == "reconcile(count): difference 0% (data 0, reference 0) meets must_be (= 0)"


def test_nothing_measured_fails(spark, ledger):
    df = spark.createDataFrame([(None,)], "total double")
    result = run_one(df, rec(aggregate="sum", column="total", reference_where="region = 'none'", must_be="< 1%"))
    assert result == CheckResult(
        "reconcile", False,
        "reconcile(sum(total)): nothing was measured (the data has no non-NULL values of total and the reference "
        "has no non-NULL values of total), so must_be (< 1%) is not met",
        1, None, code="reconcile(sum(total))",
    )


def test_reconcile_adds_one_job_over_the_reference_to_the_scan(orders, ledger, job_counter):
    rule = rec(aggregate="sum", column="amount", reference_column="total", must_be="< 5%")
    # The block's one agg carries the reference's aggregate as a scalar subquery, which Spark
    # runs as a job of its own over the reference: 1 + 1.
    assert jobs_of(job_counter, orders, [*AGGREGATE_BLOCK, rule]) == 2
    # Spark merges scalar subqueries over the same reference into one (MergeScalarSubqueries),
    # so a second rule on that reference costs nothing; one on another reference adds its job.
    same_reference = rec(aggregate="count", must_be="< 5%")
    assert jobs_of(job_counter, orders, [*AGGREGATE_BLOCK, rule, same_reference]) == 2
    other_reference = rec(aggregate="count", reference={"query": "SELECT 1 AS one"}, must_be="< 5%")
    assert jobs_of(job_counter, orders, [*AGGREGATE_BLOCK, rule, same_reference, other_reference]) == 3


def test_a_non_numeric_column_is_a_rule_error(orders, ledger):
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(orders, [rec(aggregate="sum", column="amount", reference_column="region", must_be="< 1%")])
    assert str(raised.value) == (
        "rules[0] (reconcile): sum needs a numeric column, but the reference column region is string; cast it first"
    )


def test_a_reference_where_spark_cannot_analyse_is_a_rule_error(orders, ledger):
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(orders, [rec(aggregate="count", reference_where="regoin = 'BR'", must_be="< 1%")])
    assert str(raised.value).startswith(
        "rules[0] (reconcile): Spark cannot evaluate reference_where \"regoin = 'BR'\": [UNRESOLVED_COLUMN"
    )


# -- parse errors ------------------------------------------------------------------------------

REFERENCE = {"table": "customers"}

PARSE_ERRORS = [
    (
        {"type": "foreign_key", "reference": REFERENCE},
        "rules[0] (foreign_key): needs 'column' or 'columns'; give one: the key that must occur in the reference",
    ),
    (
        {"type": "foreign_key", "column": "a", "columns": ["a"], "reference": REFERENCE},
        "rules[0] (foreign_key): gives both 'column' and 'columns'; give one: the key that must occur in the reference",
    ),
    (
        {"type": "foreign_key", "column": "a"},
        "rules[0] (foreign_key): missing required parameter 'reference'",
    ),
    (
        {"type": "foreign_key", "columns": ["a", "b"], "reference": REFERENCE, "reference_columns": ["x"]},
        ("rules[0] (foreign_key): 'reference_columns' names 1 column for a key of 2 (a, b); give one reference "
         "column per key column, in the same order"),
    ),
    (
        {"type": "foreign_key", "column": "a", "reference": {"path": "/x", "table": "t"}},
        ("rules[0] (foreign_key): 'reference' is not a valid input: a source needs exactly one of 'path', 'table' "
         "or 'query', but gives 'path' and 'table'"),
    ),
    (
        {"type": "foreign_key", "column": "a", "reference": {"path": "/x", "format": "xlsx"}},
        ("rules[0] (foreign_key): 'reference' is not a valid input: unknown source format 'xlsx'; use one of "
         "parquet, csv, json, orc, delta"),
    ),
    (
        {"type": "foreign_key", "column": "a", "reference": "customers"},
        "rules[0] (foreign_key): 'reference' must be an object, got 'customers'",
    ),
    (
        {"type": "foreign_key", "column": "a", "reference": {"query": "DELETE FROM customers"}},
        ("rules[0] (foreign_key): 'reference' is not a valid input: source 'query' must be a read-only SELECT or "
         "WITH query, but starts with 'DELETE'; Spark would run it as soon as it is parsed"),
    ),
    (
        {"type": "foreign_key", "column": "a", "reference": REFERENCE, "reference_column": "id"},
        ("rules[0] (foreign_key): unknown parameter 'reference_column' (did you mean 'reference_columns'?); "
         "valid parameters are code, column, columns, description, dimension, id, name, reference, reference_columns, "
         "severity, "
         "tolerance, where"),
    ),
    (
        {"type": "reconcile", "aggregate": "median", "column": "a", "reference": REFERENCE, "must_be": "< 1%"},
        "rules[0] (reconcile): 'aggregate' must be one of count, sum, min, max, avg, got 'median'",
    ),
    (
        {"type": "reconcile", "aggregate": "sum", "reference": REFERENCE, "must_be": "< 1%"},
        "rules[0] (reconcile): 'column' is required for aggregate 'sum' (only count works without one)",
    ),
    (
        {"type": "reconcile", "aggregate": "count", "reference_column": "b", "reference": REFERENCE, "must_be": "< 1%"},
        "rules[0] (reconcile): 'reference_column' needs 'column' (a count without a column counts rows)",
    ),
    (
        {"type": "reconcile", "aggregate": "sum", "column": "a", "reference": REFERENCE, "must_be": "< 1%",
         "difference": "ratio"},
        "rules[0] (reconcile): 'difference' must be 'relative' or 'absolute', got 'ratio'",
    ),
    (
        {"type": "reconcile", "aggregate": "sum", "column": "a", "reference": REFERENCE, "must_be": "< 1%",
         "difference": "absolute"},
        ("rules[0] (reconcile): 'must_be' (< 1%) is a percentage, but the difference is absolute (in the column's "
         "units); drop the % or set \"difference\": \"relative\""),
    ),
    (
        {"type": "reconcile", "aggregate": "sum", "column": "a", "reference": REFERENCE, "must_be": "< 1%",
         "warn": "< 1h"},
        "rules[0] (reconcile): 'warn' (< 1h) is a duration; a difference is a plain number",
    ),
    (
        {"type": "reconcile", "aggregate": "sum", "column": "a", "reference": REFERENCE},
        "rules[0] (reconcile): missing required parameter 'must_be'",
    ),
    (
        {"type": "reconcile", "aggregate": "sum", "column": "a", "reference": REFERENCE, "must_be": "< 1%",
         "reference_where": "1 = 1; DROP TABLE customers"},
        "rules[0] (reconcile): 'reference_where' must be one SQL expression such as \"amount > 0\", but holds a ';'",
    ),
    (
        {"type": "reconcile", "aggregate": "count", "reference": REFERENCE, "must_be": "< 1%", "tolerance": "< 1%"},
        ("rules[0] (reconcile): 'tolerance' applies to row rules that count offending rows (not_null, unique, range, "
         "regex, expression, castable, foreign_key, reference_match); a metric rule sets its limit with 'must_be'"),
    ),
]


@pytest.mark.parametrize(("rule", "message"), PARSE_ERRORS)
def test_malformed_rules_are_refused_at_parse_time(rule, message):
    assert refused(rule) == message


def test_codes():
    checks = Cola().parse([
        fk(),
        {"type": "foreign_key", "columns": ["a", "b"], "reference": REFERENCE},
        rec(aggregate="count", must_be="< 1%"),
        rec(aggregate="count", column="id", must_be="< 1%"),
        rec(aggregate="avg", column="amount", must_be="< 1%"),
    ])
    assert [check.code for check in checks] == [
        "foreign_key(customer_id)", "foreign_key(a,b)", "reconcile(count)", "reconcile(count(id))",
        "reconcile(avg(amount))",
    ]


# -- foreign_key: helper columns never meet the user's ---------------------------------------


def test_columns_named_like_the_helper_columns_come_through_untouched(spark, customers):
    # The names a process-wide counter of checks would hand out next (``__cola_fk_<n>`` and
    # its ``_key0``), taken by the data: the helpers must still find their own columns.
    from cola_core.checks.reference import ForeignKeyCheck

    suffix = ForeignKeyCheck(fk()).marker.rsplit("_", 1)[1]
    start = int(suffix) if suffix.isdigit() else 0
    taken = [f"__cola_fk_{start + k}{tail}" for k in range(1, 6) for tail in ("", "_key0")]
    df = spark.createDataFrame(
        [(10, *("x" * len(taken))), (99, *("y" * len(taken)))],
        ", ".join(["customer_id int", *(f"`{name}` string" for name in taken)]),
    )
    rules = [fk(), fk(code="AGAIN")]
    assert [(r.passed, r.failed_count) for r in Cola().run(df, rules)] == [(False, 1), (False, 1)]
    valid, invalid = Cola().split(df, rules, annotate="dq")
    assert valid.columns == df.columns
    assert [tuple(r) for r in valid.collect()] == [(10, *("x" * len(taken)))]
    assert [tuple(r) for r in invalid.collect()] == [(99, *("y" * len(taken)), ["foreign_key(customer_id)", "AGAIN"])]

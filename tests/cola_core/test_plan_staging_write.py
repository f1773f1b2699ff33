"""The staging write of ``split_write``: every row written once, with what it measures.

The input is read once for both outputs and the plain aggregates; a row rule's count is read
off its code's, so its predicate runs once per row; a ``unique`` rule's distinct count is
taken on the write's own window, from its counts per key; an aggregate Spark cannot observe,
or that fails on the data, gets its own scan; every row of a non-deterministic input lands in
exactly one output; the staging write is lossless beside a csv output; and the rows per
rejection code are observed on the write.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import BaseCheck, Capability, CheckResult, Cola, ColaOutputError
from cola_helpers import CONNECT, SPLIT_ORDERS, SPLIT_RULES, parquet_rows, visible_files

pytestmark = [pytest.mark.spark, pytest.mark.connect]


# -- one read for both outputs and the aggregates --------------------------------------------------


def test_the_source_is_read_once_for_both_outputs_and_the_plain_aggregates(spark, split_orders, tmp_path, job_counter):
    plain = [rule for rule in SPLIT_RULES if rule["type"] != "unique"]  # a distinct count costs a pass of its own
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, plain, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes")
    # One read of the 6 source rows; then the copy of the 4 valid rows without the codes
    # column reads them back from staging (file reads are input records too).
    assert (outcome.valid_count, outcome.invalid_count) == (4, 2)
    assert counted.input_records == len(SPLIT_ORDERS) + 4
    assert counted.jobs == 2  # the staging write, the valid rows' copy
    assert [r.passed for r in outcome.results] == [False, False, True, True]
    assert outcome.results == Cola().run(split_orders, plain)


def test_a_unique_rules_distinct_count_is_taken_on_the_writes_own_window(spark, split_orders, tmp_path, job_counter):
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes")
    assert outcome.results == Cola().run(split_orders, SPLIT_RULES)
    assert outcome.results[2].message == "unique(order_id): 1 duplicate row (6 rows, 5 distinct)"
    # The write, and the 3 valid rows read back from staging: no pass for the distinct count.
    assert counted.input_records == len(SPLIT_ORDERS) + 3
    assert counted.jobs == 2


def test_reference_match_joins_the_write_and_its_codes_name_the_columns(spark, split_orders, tmp_path, job_counter):
    spark.createDataFrame(
        [(1, "ana@x.io", 10.0), (2, None, 5.0), (3, "bo@x.io", 2.0), (4, "DI@x.io", 3.0)],
        "order_id int, email string, amount double",
    ).createOrReplaceTempView("orders_ref")
    rules = [{"type": "reference_match", "keys": ["order_id"], "columns": ["email", "amount"],
              "reference": {"table": "orders_ref"}, "absolute_difference": {"amount": 4}}]
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes", annotate_valid=True)
    assert outcome.results == Cola().run(split_orders, rules)
    assert outcome.results[0].message == (
        "reference_match(email,amount): 3 rows do not match the reference (email: 2, amount: 1, missing: 1; "
        "5 compared)"
    )
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert parquet_rows(spark, tmp_path / "i", "order_id", "email", "codes") == [
        (3, "cy@x.io", ["reference_match(email)", "reference_match(amount)"]),
        (4, "di@x.io", ["reference_match(email)"]),
        (5, "ed@x.io", ["reference_match(missing)"]),
    ]
    # One job reading the source once: the staging write, into which the reference (a local
    # view, so no job of its own) is broadcast; annotate_valid spares the copy of the valid rows.
    assert counted.input_records == len(SPLIT_ORDERS)
    assert counted.jobs == 1


@pytest.mark.parametrize("where", [None, "amount > 4"])
def test_a_scoped_unique_rule_counts_its_distinct_keys_in_scope(spark, split_orders, tmp_path, where):
    rules = [{"type": "unique", "columns": ["status", "order_id"], **({"where": where} if where else {})}]
    outcome = Cola().split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == Cola().run(split_orders, rules)


def test_a_distinct_set_no_row_rule_windows_by_costs_one_read(spark, split_orders, tmp_path, job_counter):
    rules = [{"type": "not_null", "columns": ["email"]}, {"type": "duplicate_count", "columns": ["status"],
                                                          "must_be": "< 10"}]
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == Cola().run(split_orders, rules)
    assert counted.input_records == 2 * len(SPLIT_ORDERS)  # the write, and the distinct count of status


class DistinctStatuses(BaseCheck):
    """A custom aggregate check with a DISTINCT aggregate, which Spark refuses to observe."""

    capabilities = frozenset({Capability.AGGREGATE})

    def aggregations(self, df):
        from pyspark.sql import functions as F

        return [F.count_distinct("status")]

    def from_aggregations(self, values):
        return CheckResult("distinct_statuses", values[0] == 2, f"{values[0]} statuses", metric_value=values[0])


def test_an_aggregate_spark_cannot_observe_gets_its_own_scan(spark, split_orders, tmp_path, job_counter):
    cola = Cola()
    cola.register("distinct_statuses", DistinctStatuses)
    rules = [{"type": "not_null", "columns": ["email"]}, {"type": "distinct_statuses"}, {"type": "row_count", "min": 1}]
    with job_counter.count() as counted:
        outcome = cola.split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == cola.run(split_orders, rules)
    assert outcome.results[1] == CheckResult(
        "distinct_statuses", True, "2 statuses", metric_value=2, severity="pass", code="distinct_statuses"
    )
    assert (outcome.valid_count, outcome.invalid_count) == (5, 1)
    assert counted.input_records == 2 * len(SPLIT_ORDERS)  # the write, then the block's own scan


def test_an_aggregate_that_fails_on_the_data_is_a_failed_result_and_the_split_is_written(spark, tmp_path):
    df = spark.createDataFrame([(1, "7"), (2, "x"), (None, "8")], "v int, s string")
    rules = [{"type": "not_null", "columns": ["v"]}, {"type": "row_count", "min": 1, "where": "cast(s AS int) > 0"}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == Cola().run(df, rules)
    assert outcome.results[1].message.startswith(
        "row_count: Spark could not evaluate the rule on this data: [CAST_INVALID_INPUT] The value 'x'"
    )
    assert (outcome.valid_count, outcome.invalid_count) == (2, 1)


def test_not_null_over_several_columns_carries_its_counts_per_column_through_the_split(spark, tmp_path):
    df = spark.createDataFrame([(1, "a"), (None, "b"), (3, None)], "customer_id int, email string")
    rules = [{"type": "not_null", "columns": ["customer_id", "email"]}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results[0].details == {"columns": {"customer_id": 1, "email": 1}}
    assert outcome.results[0].message == "not_null(customer_id,email): 2 NULL values (customer_id: 1, email: 1)"
    assert (outcome.valid_count, outcome.invalid_count) == (1, 2)


# -- one evaluation: every row in exactly one output -----------------------------------------------


def coin_orders(spark, rows: int):
    """Orders with a coin drawn anew at every evaluation (``rand()`` would not do: its seed is
    in the plan, so every evaluation draws the same values)."""
    from pyspark.sql import functions as F

    heads = F.expr("java_method('java.lang.Math', 'random') < 0.5")
    return spark.range(rows).select(F.col("id").alias("order_id"), F.when(heads, F.lit(None)).otherwise(F.lit("x")).alias("email"))


def test_a_non_deterministic_input_really_changes_between_evaluations(spark):
    # The control for the law below: two evaluations of the same DataFrame disagree.
    df = coin_orders(spark, 2000)
    first = [row.email for row in df.orderBy("order_id").collect()]
    assert first != [row.email for row in df.orderBy("order_id").collect()]


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rows=st.integers(min_value=0, max_value=3000), annotate=st.sampled_from([None, "codes"]))
def test_every_row_of_a_non_deterministic_input_is_in_exactly_one_output(spark, tmp_path_factory, rows, annotate):
    base = tmp_path_factory.mktemp("coin")
    outcome = Cola().split_write(coin_orders(spark, rows), [{"type": "not_null", "columns": ["email"]}],
                                 valid=str(base / "v"), invalid=str(base / "i"), annotate=annotate)
    valid = [row.order_id for row in spark.read.parquet(str(base / "v")).collect()]
    invalid = spark.read.parquet(str(base / "i")).collect()
    assert sorted(valid + [row.order_id for row in invalid]) == list(range(rows))
    assert (outcome.valid_count, outcome.invalid_count) == (len(valid), len(invalid))
    assert all(row.email is None for row in invalid)
    if annotate:
        assert {tuple(row.codes) for row in invalid} <= {("not_null(email)",)}
    # The result counts the same evaluation's NULLs as the split placed.
    assert outcome.results[0].failed_count == len(invalid)


# -- where the staging write goes ------------------------------------------------------------------


def test_a_failed_valid_output_publishes_nothing(spark, split_orders, tmp_path):
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "blocker" / "v"), invalid=str(tmp_path / "i"))
    assert str(raised.value).startswith(f"cannot write the split to its staging folder file:{tmp_path}/blocker/_cola_staging_")
    assert str(raised.value).endswith(f"Parent path is not a directory: file:{tmp_path / 'blocker'}; nothing was published")
    assert visible_files(tmp_path) == ["blocker", "source"]


def test_beside_a_csv_output_the_staging_write_is_parquet_so_the_other_output_loses_nothing(spark, split_tables, tmp_path):
    df = spark.createDataFrame([(1, "line1\nline2", "2024-01-01 00:00:00.654321"), (2, "ok", None)],
                               "id int, note string, at string").selectExpr("id", "note", "cast(at as timestamp) as at")
    table = split_tables("sw_from_csv", None)
    # The invalid rows (a newline in a value, microseconds) go to a table, copied from staging.
    outcome = Cola().split_write(df, [{"type": "range", "column": "id", "min": 2}],
                                 valid={"path": str(tmp_path / "v"), "format": "csv"}, invalid={"table": table})
    assert (outcome.valid_count, outcome.invalid_count) == (1, 1)
    [row] = spark.table(table).collect()
    assert (row.id, row.note, row.at.microsecond) == (1, "line1\nline2", 654321)
    assert [tuple(r) for r in spark.read.schema("id int, note string, at timestamp").csv(str(tmp_path / "v")).collect()] \
        == [(2, "ok", None)]


# -- the rows per rejection code, observed on the staging write ------------------------------------


def codes_in(spark, path, column="codes") -> dict[str, int]:
    """Per code, the rows of the published invalid output carrying it: what ``rejections`` must say."""
    from pyspark.sql import functions as F

    counted = spark.read.parquet(str(path)).select(F.explode(column).alias("code")).groupBy("code").count()
    return {row["code"]: row["count"] for row in counted.collect()}


REJECTIONS = {"not_null(email)": 1, "AMOUNT_NEGATIVE": 1, "unique(order_id)": 2}


def test_the_rows_per_rejection_code_are_counted_as_published(spark, split_orders, tmp_path):
    outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                 annotate="codes")
    # Order 3's first row breaks two rules and counts under both; both rows of order 3 are
    # rejected by unique (its failed_count, 1, is the duplicates beyond the first).
    assert outcome.rejections == REJECTIONS
    assert list(outcome.rejections) == ["not_null(email)", "AMOUNT_NEGATIVE", "unique(order_id)"]  # rule order
    assert outcome.results[2].failed_count == 1
    assert sum(outcome.rejections.values()) == 4 >= outcome.invalid_count == 3
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_the_rows_per_rejection_code_cost_no_job(spark, split_orders, tmp_path, job_counter):
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes")
    assert outcome.rejections == REJECTIONS
    # As many jobs and reads as without the counts: the staging write, the valid rows' copy.
    assert counted.jobs == 2
    assert counted.input_records == len(SPLIT_ORDERS) + 3


def test_rejections_without_annotate_and_with_annotate_valid_are_the_same(spark, split_orders, tmp_path):
    plain = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v1"), invalid=str(tmp_path / "i1"))
    kept = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v2"), invalid=str(tmp_path / "i2"),
                              annotate="codes", annotate_valid=True)
    assert plain.rejections == kept.rejections == REJECTIONS


def test_a_multi_column_not_null_counts_each_columns_code(spark, tmp_path):
    df = spark.createDataFrame(
        [(1, None, "paid"), (2, None, None), (3, "c@x.io", None), (4, "d@x.io", "open")],
        "order_id int, email string, status string",
    )
    rules = [{"type": "not_null", "columns": ["email", "status"]}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"), annotate="codes")
    assert outcome.rejections == {"not_null(email)": 2, "not_null(status)": 2}
    assert (outcome.valid_count, outcome.invalid_count) == (1, 3)
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_a_passing_missing_or_invalid_rule_still_counts_the_rows_it_rejects(spark, split_orders, tmp_path):
    rules = [
        {"type": "missing_count", "column": "email", "must_be": "< 5"},
        {"type": "invalid_count", "column": "status", "valid_values": ["paid"], "must_be": "<= 3"},
        {"type": "range", "column": "amount", "min": 100, "severity": "warn"},
    ]
    outcome = Cola().split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                 annotate="codes")
    assert [r.severity for r in outcome.results] == ["pass", "pass", "warn"]
    # The passing rules reject their rows all the same; a warning rule rejects none.
    assert outcome.rejections == {"missing_count(email)": 1, "invalid_count(status)": 3}
    assert (outcome.valid_count, outcome.invalid_count) == (2, 4)
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_quarantine_key_counts_the_rows_it_pulls_in_under_its_own_code(spark, split_orders, tmp_path):
    rules = [{"type": "not_null", "columns": ["email"]}]
    outcome = Cola().split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                 annotate="codes", quarantine_key=["status"])
    # Order 2 (paid, no email) pulls in the other paid orders, 1 and 4.
    assert outcome.rejections == {"not_null(email)": 1, "quarantine_key(status)": 2}
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_no_rejected_row_leaves_no_code(spark, split_orders, tmp_path):
    outcome = Cola().split_write(split_orders, [{"type": "not_null", "columns": ["order_id"]}],
                                 valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.rejections == {}
    assert outcome.invalid_count == 0


def test_rejections_are_observed_when_the_aggregates_get_their_own_scan(spark, split_orders, tmp_path):
    cola = Cola()
    cola.register("distinct_statuses", DistinctStatuses)
    rules = [{"type": "not_null", "columns": ["email"]}, {"type": "distinct_statuses"}]
    outcome = cola.split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results[1].metric_value == 2  # measured by the block's own scan
    assert outcome.rejections == {"not_null(email)": 1}


def test_rejections_are_observed_when_an_aggregate_fails_on_the_data(spark, tmp_path):
    # The write is retried without the block's aggregates; the rows per code ride on the retry.
    df = spark.createDataFrame([(1, "7"), (2, "x"), (None, "8")], "v int, s string")
    rules = [{"type": "not_null", "columns": ["v"]}, {"type": "row_count", "min": 1, "where": "cast(s AS int) > 0"}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results[1].message.startswith("row_count: Spark could not evaluate the rule on this data")
    assert outcome.rejections == {"not_null(v)": 1}


# -- a row rule's count read off its code; distinct keys from the window's counts -----------------


class OddAmount(BaseCheck):
    """A custom row rule whose predicate is a Python UDF that counts its calls, so a test can
    tell how many times the split evaluated it per row."""

    capabilities = frozenset({Capability.ROW})
    calls = None  # the accumulator of the test running it

    def violation(self, df):
        from pyspark.sql import functions as F

        calls = OddAmount.calls

        def odd(amount):
            calls.add(1)
            return amount is not None and int(amount) % 2 == 1

        return F.udf(odd, "boolean", useArrow=False)(F.col("amount"))  # pyarrow is not installed


@pytest.mark.skipif(CONNECT, reason="an accumulator needs sparkContext, which Spark Connect lacks")
def test_a_row_rules_offending_rows_are_read_off_its_code_so_its_predicate_runs_once_per_row(spark, split_orders,
                                                                                           tmp_path):
    cola = Cola()
    cola.register("odd_amount", OddAmount)
    OddAmount.calls = spark.sparkContext.accumulator(0)
    rules = [{"type": "odd_amount"}, {"type": "not_null", "columns": ["email"]}]
    outcome = cola.split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                               annotate="codes", annotate_valid=True)
    # Once per row, in the projection of the codes; the rule's count is that of its code's rows.
    assert OddAmount.calls.value == len(SPLIT_ORDERS)
    assert outcome.results[0].message == "odd_amount: 3 rows break the rule"
    assert outcome.results[0].failed_count == 3
    assert outcome.rejections == {"odd_amount": 3, "not_null(email)": 1}


@pytest.mark.parametrize("quarantine_key", [None, ["order_id"]])
def test_a_code_that_more_than_one_rule_puts_on_rows_is_not_read_as_one_rules_count(spark, tmp_path, quarantine_key):
    df = spark.createDataFrame(
        [(1, "ab", None, 1), (2, "x", "y", 1), (2, "ab", "v", 1), (3, "cd", None, None), (3, "ok", "z", 2),
         (4, "ok", "w", 2)],
        "order_id int, code string, email string, grp int",
    )
    rules = [
        # Two rules declaring one code: each counts its own rows, not the code's.
        {"type": "regex", "column": "code", "pattern": "^[a-z]{2}$", "code": "BAD"},
        {"type": "range", "column": "order_id", "max": 2, "code": "BAD"},
        # A code declared for both columns: the counts stay per column.
        {"type": "not_null", "columns": ["email", "grp"], "code": "MISSING"},
        # A rule declaring the code quarantine_key spreads over the rows of a rejected key.
        {"type": "range", "column": "grp", "max": 1, "code": "quarantine_key(order_id)", "where": "order_id = 4"},
    ]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                 annotate="codes", quarantine_key=quarantine_key)
    assert outcome.results == Cola().run(df, rules)
    assert [result.failed_count for result in outcome.results] == [1, 3, 3, 1]
    assert outcome.results[2].details == {"columns": {"email": 2, "grp": 1}}
    # quarantine_key pulls in the second row of order 2, under the code the last rule declares.
    spread = {"quarantine_key(order_id)": 2} if quarantine_key else {"quarantine_key(order_id)": 1}
    assert outcome.rejections == {"BAD": 4, "MISSING": 2, **spread}


def test_the_key_shares_give_the_number_of_keys_exactly_up_to_share_rows():
    from cola_core.plan.staging_write import SHARE, _distinct_of_shares

    counts = [1, 2, 3, 7, 1_000_003]  # rows per key, none dividing SHARE but 1 and 2
    total = sum(count * (SHARE // count) for count in counts)
    assert _distinct_of_shares(total, sum(counts)) == 5
    # The most rows it answers for: a key of SHARE - 1 rows holds SHARE - (SHARE - 1) + ... at its worst.
    worst = [SHARE - 1, 1]
    assert _distinct_of_shares(sum(count * (SHARE // count) for count in worst), SHARE) == 2
    assert _distinct_of_shares(SHARE * 3, SHARE + 1) is None  # more rows than SHARE: counted apart
    assert _distinct_of_shares(None, 10) == 0  # no row in scope: the sum of no share is NULL


def test_no_row_in_a_unique_rules_scope_counts_no_key_and_costs_no_pass(spark, split_orders, tmp_path, job_counter):
    rules = [{"type": "unique", "columns": ["order_id"], "where": "amount > 1000"},
             {"type": "not_null", "columns": ["email"]}]
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes", annotate_valid=True)
    assert outcome.results == Cola().run(split_orders, rules)
    assert outcome.results[0].message == "unique(order_id): all 0 rows are unique"
    assert counted.jobs == 1  # the write alone: no pass for the distinct count


@pytest.mark.parametrize(("share", "jobs"), [(6, 2), (5, 3)])
def test_more_rows_than_the_share_get_the_distinct_count_of_a_pass_of_its_own(spark, split_orders, tmp_path,
                                                                              job_counter, monkeypatch, share, jobs):
    # SHARE made as small as the data, to run the boundary on 6 rows: at 6 the window's counts
    # still tell the keys exactly; at 5 they cannot, and the distinct count takes a pass.
    import cola_core.plan.staging_write as staging_write

    monkeypatch.setattr(staging_write, "SHARE", share)
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v"),
                                     invalid=str(tmp_path / "i"), annotate="codes")
    assert outcome.results[2].message == "unique(order_id): 1 duplicate row (6 rows, 5 distinct)"
    assert counted.jobs == jobs  # the write, the valid rows' copy (and the distinct count's pass)


def test_a_scoped_unique_rule_on_null_keys_and_keys_out_of_scope_counts_exactly(spark, tmp_path):
    rows = [(None, 1), (None, 1), (1, 1), (1, 1), (1, 1), (2, 0), (2, 1), (3, 0), (4, None)] + [(5, 1)] * 7
    df = spark.createDataFrame(rows, "k int, in_scope int")
    rules = [{"type": "unique", "columns": ["k"], "where": "in_scope = 1"}, {"type": "unique", "columns": ["k"]}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == Cola().run(df, rules)
    assert [result.message for result in outcome.results] == [
        "unique(k): 9 duplicate rows (13 rows, 4 distinct)",
        "unique(k): 10 duplicate rows (16 rows, 6 distinct)",
    ]


def test_a_subclass_that_flags_rows_its_own_way_keeps_its_own_count(spark, tmp_path):
    from pyspark.sql import functions as F

    from cola_core.checks.core import NotNullCheck

    class NonEmpty(NotNullCheck):
        """Rejects NULL and '' but, as not_null, counts only the NULLs."""

        def violations(self, df):
            return [(self.column_code(c), F.col(c).isNull() | (F.col(c) == "")) for c in self.params["columns"]]

    cola = Cola()
    cola.register("non_empty", NonEmpty)
    df = spark.createDataFrame([("a",), ("",), (None,), ("",)], "email string")
    rules = [{"type": "non_empty", "columns": ["email"]}]
    outcome = cola.split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"), annotate="codes")
    assert outcome.results == cola.run(df, rules)
    assert outcome.results[0].failed_count == 1  # its NULLs, not the 3 rows it rejects
    assert (outcome.valid_count, outcome.invalid_count) == (1, 3)

"""``Cola().split_write`` through ``staged_split``: one evaluation, both outputs published together or neither.

The steps as ``staged_split`` orders them: the outputs' schemas, ``annotate_valid``, a row rule
that fails on the data, samples taken before an output may overwrite the source, and nothing
published until the caller says so. The one write and what it measures are tested in
test_plan_staging_write.py, the destinations in test_plan_split_destinations.py.
"""

from __future__ import annotations

import os

import pytest

from cola_core import BaseCheck, CheckResult, Cola, ColaError, SplitOutcome
from cola_helpers import (
    SPLIT_COLUMNS,
    SPLIT_INVALID_ROWS,
    SPLIT_ORDERS,
    SPLIT_RULES,
    SPLIT_SCHEMA,
    SPLIT_VALID_ROWS,
    parquet_rows,
    sorted_rows,
    visible_files,
)

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_writes_both_outputs_with_the_split_schemas_and_counts_the_rows_published(spark, split_orders, tmp_path):
    outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"),
                                 annotate="codes")
    assert isinstance(outcome, SplitOutcome)
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert outcome.results == Cola().run(split_orders, SPLIT_RULES)
    assert spark.read.parquet(str(tmp_path / "valid")).columns == SPLIT_COLUMNS
    assert spark.read.parquet(str(tmp_path / "invalid")).columns == [*SPLIT_COLUMNS, "codes"]
    assert parquet_rows(spark, tmp_path / "valid", *SPLIT_COLUMNS) == SPLIT_VALID_ROWS
    assert parquet_rows(spark, tmp_path / "invalid", *SPLIT_COLUMNS, "codes") == sorted_rows(SPLIT_INVALID_ROWS)
    # Only the two outputs (and the source) are left: the staging folder is gone.
    assert visible_files(tmp_path) == ["invalid", "source", "valid"]
    assert "_SUCCESS" in visible_files(tmp_path / "valid") and "_SUCCESS" in visible_files(tmp_path / "invalid")


def test_the_outputs_equal_the_lazy_splits(spark, split_orders, tmp_path):
    rules = [*SPLIT_RULES, {"type": "regex", "column": "email", "pattern": "^[a-c]", "severity": "warn"}]
    Cola().split_write(split_orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"), annotate="dq",
                       quarantine_key=["status"])
    valid, invalid = Cola().split(split_orders, rules, annotate="dq", quarantine_key=["status"])
    assert spark.read.parquet(str(tmp_path / "v")).columns == valid.columns == [*SPLIT_COLUMNS, "dq_warnings"]
    assert spark.read.parquet(str(tmp_path / "i")).columns == invalid.columns == [*SPLIT_COLUMNS, "dq", "dq_warnings"]
    assert sorted_rows(spark.read.parquet(str(tmp_path / "v")).collect()) == sorted_rows(valid.collect())
    assert sorted_rows(spark.read.parquet(str(tmp_path / "i")).collect()) == sorted_rows(invalid.collect())
    # Every order has a rejected row in both statuses, so quarantine_key pulls every row in.
    assert spark.read.parquet(str(tmp_path / "v")).count() == 0
    assert [row.dq for row in invalid.where("order_id = 5").collect()] == [["quarantine_key(status)"]]


def test_without_annotate_both_outputs_keep_the_input_schema(spark, split_orders, tmp_path):
    outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"))
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert spark.read.parquet(str(tmp_path / "invalid")).columns == SPLIT_COLUMNS
    assert parquet_rows(spark, tmp_path / "invalid", *SPLIT_COLUMNS) == sorted_rows(row[:4] for row in SPLIT_INVALID_ROWS)


def test_annotate_valid_keeps_the_codes_column_in_the_valid_output_and_spares_the_copy(
    spark, split_orders, tmp_path, job_counter
):
    with job_counter.count() as counted:
        outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes", annotate_valid=True)
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert counted.input_records == len(SPLIT_ORDERS)  # both outputs renamed from the one write
    assert counted.jobs == 1
    assert spark.read.parquet(str(tmp_path / "v")).columns == [*SPLIT_COLUMNS, "codes"]
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS, "codes") == [(*row, None) for row in SPLIT_VALID_ROWS]
    assert parquet_rows(spark, tmp_path / "i", *SPLIT_COLUMNS, "codes") == sorted_rows(SPLIT_INVALID_ROWS)
    with pytest.raises(ColaError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v2"), invalid=str(tmp_path / "i2"), annotate_valid=1)
    assert str(raised.value) == "annotate_valid must be true or false, got 1"


def test_samples_are_taken_before_an_output_overwrites_the_source(spark, tmp_path):
    source = str(tmp_path / "orders")
    spark.createDataFrame(SPLIT_ORDERS, SPLIT_SCHEMA).write.parquet(source)
    outcome = Cola().split_write(spark.read.parquet(source), SPLIT_RULES, valid={"path": source, "mode": "overwrite"},
                                 invalid=str(tmp_path / "i"), samples=1)
    assert [len(r.samples or []) for r in outcome.results] == [1, 1, 1, 0, 0]
    assert parquet_rows(spark, source, *SPLIT_COLUMNS) == SPLIT_VALID_ROWS


# -- the data --------------------------------------------------------------------------------------


def test_a_row_rule_that_fails_on_the_data_stops_the_split_before_anything_is_published(spark, tmp_path):
    df = spark.createDataFrame([(1,), (2,)], "id int")
    rules = [{"type": "expression", "expression": "id / (id - id) > 0"}]
    with pytest.raises(ColaError) as raised:
        Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert str(raised.value).startswith(
        "the split cannot be written, as a row rule fails on the data: expression(id / (id - id) > 0): "
        "Spark could not evaluate the rule on this data: [DIVIDE_BY_ZERO] Division by zero."
    )
    assert os.listdir(tmp_path) == []


class _Worded(BaseCheck):
    """A custom check whose own failure is worded like an unmeasured rule, but was measured."""

    def run(self, df):
        return CheckResult("worded", False, "the vendor could not evaluate this, on purpose", 1)


def test_the_split_names_only_the_rules_flagged_unmeasured_whatever_the_others_say(spark, tmp_path):
    df = spark.createDataFrame([(1,), (2,)], "id int")
    cola = Cola()
    cola.register("worded", _Worded)
    rules = [{"type": "expression", "expression": "id / (id - id) > 0"}, {"type": "worded"}]
    with pytest.raises(ColaError) as raised:
        cola.split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert str(raised.value) == (
        "the split cannot be written, as a row rule fails on the data: expression(id / (id - id) > 0): "
        "Spark could not evaluate the rule on this data: [DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to "
        "tolerate divisor being 0 and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" "
        "to bypass this error. SQLSTATE: 22012"
    )
    assert os.listdir(tmp_path) == []


# -- staged, then published by the caller ----------------------------------------------------------


def test_a_staged_split_publishes_only_when_its_caller_says_so_and_leaves_no_staging(spark, split_orders, tmp_path):
    from cola_core.plan.staged_split import staged_split

    checks = Cola().parse(SPLIT_RULES)
    valid, invalid = str(tmp_path / "valid"), str(tmp_path / "invalid")
    with staged_split(split_orders, checks, valid, invalid, annotate="codes") as staged:
        # Measured on the staging write, with nothing published: the caller may still read the source.
        assert staged.results == Cola().run(split_orders, SPLIT_RULES)
        assert visible_files(tmp_path) != ["source"]  # the staging folder
        assert not os.path.exists(valid) and not os.path.exists(invalid)
    assert visible_files(tmp_path) == ["source"]  # left unpublished: the staging is gone, and nothing else came
    finished = [CheckResult("custom", True, "finished by the caller")]
    with staged_split(split_orders, checks, valid, invalid, annotate="codes") as staged:
        outcome = staged.publish(finished)
    assert outcome == SplitOutcome(finished, 3, 3, {"not_null(email)": 1, "AMOUNT_NEGATIVE": 1, "unique(order_id)": 2})
    assert parquet_rows(spark, valid, *SPLIT_COLUMNS) == SPLIT_VALID_ROWS
    assert visible_files(tmp_path) == ["invalid", "source", "valid"]

"""``plan.pinned_split``: a split evaluated once, its rows pinned in the executors and each side
written straight to its own output (what a streaming split's batch uses, test_job_stream.py).

The outputs, counts and results are ``split_write``'s; the input is read once and the pinned
rows are never computed again: lost, they fail the write (``PinnedRowsLost``) instead.
"""

from __future__ import annotations

import os

import pytest

from cola_core import Cola, ColaError, ColaOutputError
from cola_core.plan.pinned_split import PinnedRowsLost, pinned_split
from cola_helpers import (
    SPLIT_COLUMNS,
    SPLIT_INVALID_ROWS,
    SPLIT_ORDERS,
    SPLIT_RULES,
    SPLIT_VALID_ROWS,
    parquet_rows,
    persisted_rdds,
    remove_blocks_persisted_since,
    sorted_rows,
)

# Classic sessions only: over Spark Connect a streaming batch is staged as files (the refusal
# is tested in test_connect.py).
pytestmark = pytest.mark.spark
WARNED = [*SPLIT_RULES, {"type": "regex", "column": "email", "pattern": "^[a-c]", "severity": "warn"}]


def _pinned(df, rules, valid, invalid, **options):
    with pinned_split(df, Cola()._checks(rules), valid, invalid, **options) as split:
        return split.publish(split.results)


def _frame_rows(spark, path):
    return sorted_rows(spark.read.parquet(str(path)).collect())


@pytest.mark.parametrize(
    "options",
    [
        {"annotate": "dq"},
        {"annotate": "dq", "annotate_valid": True},
        {"annotate": "dq", "quarantine_key": ["email"]},
        {},
    ],
    ids=["annotate", "annotate_valid", "quarantine_key", "no-annotate"],
)
def test_the_outputs_counts_and_results_are_split_write_s(spark, split_orders, tmp_path, options):
    pinned = _pinned(split_orders, WARNED, str(tmp_path / "pv"), str(tmp_path / "pi"), **options)
    written = Cola().split_write(split_orders, WARNED, valid=str(tmp_path / "wv"), invalid=str(tmp_path / "wi"), **options)
    assert pinned == written
    for side in ("v", "i"):
        assert spark.read.parquet(str(tmp_path / f"p{side}")).columns == spark.read.parquet(str(tmp_path / f"w{side}")).columns
        assert _frame_rows(spark, tmp_path / f"p{side}") == _frame_rows(spark, tmp_path / f"w{side}")


def test_each_side_is_written_in_its_own_columns(spark, split_orders, tmp_path):
    outcome = _pinned(split_orders, SPLIT_RULES, str(tmp_path / "v"), str(tmp_path / "i"), annotate="codes")
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert outcome.rejections == {"not_null(email)": 1, "AMOUNT_NEGATIVE": 1, "unique(order_id)": 2}
    assert outcome.results == Cola().run(split_orders, SPLIT_RULES)
    assert spark.read.parquet(str(tmp_path / "v")).columns == SPLIT_COLUMNS
    assert spark.read.parquet(str(tmp_path / "i")).columns == [*SPLIT_COLUMNS, "codes"]
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS) == SPLIT_VALID_ROWS
    assert parquet_rows(spark, tmp_path / "i", *SPLIT_COLUMNS, "codes") == sorted_rows(SPLIT_INVALID_ROWS)


def test_the_input_is_read_once_and_each_side_from_the_pinned_rows(spark, split_orders, tmp_path, job_counter):
    with job_counter.count() as counted:
        _pinned(split_orders, SPLIT_RULES, str(tmp_path / "v"), str(tmp_path / "i"), annotate="codes")
    # One job pins the rows (the block's aggregates observed on it), one writes each side.
    assert counted.jobs == 3
    # Spark counts a read of pinned blocks as input too: the source once, then the pinned rows
    # once per side. A side computed from the input again would read the source a second time
    # and add nothing here, which is why the next test removes the blocks.
    assert counted.input_records == 3 * len(SPLIT_ORDERS)


def test_rows_lost_before_a_side_is_written_fail_it_instead_of_reading_the_input_again(spark, split_orders, tmp_path):
    before = persisted_rdds(spark)
    checks = Cola()._checks(SPLIT_RULES)
    with pytest.raises(PinnedRowsLost) as raised, pinned_split(
        split_orders, checks, str(tmp_path / "v"), str(tmp_path / "i"), annotate="codes"
    ) as split:
        remove_blocks_persisted_since(spark, before)
        split.publish(split.results)
    message = str(raised.value)
    assert message.startswith("the split's rows were lost before the valid side was written: ")
    assert "[CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND] Checkpoint block rdd_" in message
    assert not (tmp_path / "i").exists()


def test_the_pinned_blocks_are_freed_when_the_split_ends(spark, split_orders, tmp_path):
    before = persisted_rdds(spark)
    _pinned(split_orders, SPLIT_RULES, str(tmp_path / "v"), str(tmp_path / "i"), annotate="codes")
    assert persisted_rdds(spark) == before


def test_a_row_rule_that_fails_on_the_data_stops_the_split_before_anything_is_written(spark, tmp_path):
    df = spark.createDataFrame([(1,), (2,)], "id int")
    with pytest.raises(ColaError) as raised:
        _pinned(df, [{"type": "expression", "expression": "id / (id - id) > 0"}], str(tmp_path / "v"),
                str(tmp_path / "i"))
    assert str(raised.value).startswith(
        "the split cannot be written, as a row rule fails on the data: expression(id / (id - id) > 0): "
        "Spark could not evaluate the rule on this data: [DIVIDE_BY_ZERO] Division by zero."
    )
    assert os.listdir(tmp_path) == []


def test_a_csv_output_of_the_codes_is_refused_before_any_job(spark, split_orders, tmp_path, job_counter):
    with job_counter.count() as counted, pytest.raises(ColaOutputError) as raised:
        _pinned(split_orders, SPLIT_RULES, str(tmp_path / "v"), {"path": str(tmp_path / "i"), "format": "csv"},
                annotate="codes")
    assert str(raised.value) == (
        "a csv output cannot hold the array column 'codes'; write parquet, orc or json, or leave out annotate"
    )
    assert counted.jobs == 0
    assert sorted(os.listdir(tmp_path)) == ["source"]

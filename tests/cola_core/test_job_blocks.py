"""A parsed block on a DataFrame: what run_checks and run_split measure and write."""

from __future__ import annotations

import pytest

from cola_core import Cola, ColaRuleError
from cola_core.history.store import RunInfo, read_history
from cola_core.job.blocks import run_checks, run_split, with_history_baselines
from cola_core.storage.specs import history_spec

pytestmark = pytest.mark.spark

RULES = [{"type": "not_null", "columns": ["name"]}, {"type": "row_count", "min": 1}]


@pytest.fixture(scope="module")
def people(spark):
    return spark.createDataFrame([(1, "ann"), (2, None), (3, "cy")], "id INT, name STRING")


def test_run_checks_measures_and_appends_a_check_run(people, tmp_path):
    store = history_spec(str(tmp_path / "h"))
    results = run_checks(people, Cola().parse(RULES), history=store, run_info=RunInfo(dataset="people"))
    assert [(r.rule_type, r.passed, r.failed_count) for r in results] == [("not_null", False, 1), ("row_count", True, 0)]
    written = read_history(people.sparkSession, store).orderBy("rule_type").collect()
    assert [(row.rule_type, row.run_kind, row.dataset) for row in written] == [
        ("not_null", "check", "people"), ("row_count", "check", "people"),
    ]


def test_run_split_publishes_both_sides_and_appends_a_split_run(people, tmp_path):
    store = history_spec(str(tmp_path / "h"))
    outcome = run_split(people, Cola().parse(RULES), str(tmp_path / "valid"), str(tmp_path / "invalid"),
                        annotate="broken", history=store, run_info=RunInfo(dataset="people"))
    spark = people.sparkSession
    assert (outcome.valid_count, outcome.invalid_count) == (2, 1)
    assert sorted(row.id for row in spark.read.parquet(str(tmp_path / "valid")).collect()) == [1, 3]
    (rejected,) = spark.read.parquet(str(tmp_path / "invalid")).collect()
    assert (rejected.id, list(rejected.broken)) == (2, ["not_null(name)"])
    assert {row.run_kind for row in read_history(spark, store).collect()} == {"split"}


def test_a_change_rule_without_a_history_store_is_refused_before_any_work(people):
    checks = Cola().parse([{"type": "row_count", "must_be": "change < 10%"}])
    with pytest.raises(ColaRuleError) as raised:
        with_history_baselines(people, checks, None, None)
    assert str(raised.value) == (
        "rules[0] (row_count): its thresholds compare with earlier runs, which a history store holds: "
        "give one (history= and dataset=, or cola --history)"
    )

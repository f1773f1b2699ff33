"""What a run cost Spark, from Spark's own bookkeeping (cola_core/plan/cost.py)."""

from __future__ import annotations

import pytest

from cola_core.plan.cost import SparkCost, measuring_cost


def test_a_cost_reads_as_a_sentence_and_as_json():
    assert SparkCost(1.26, 1, 1, 1, 500).describe() == "1 Spark job, 1 stage, 1 row (500 bytes) read, 1.3 s"
    assert SparkCost(12.0, 21, 42, 50_000, 2_621_440).describe() == (
        "21 Spark jobs, 42 stages, 50,000 rows (2.5 MB) read, 12.0 s"
    )
    assert SparkCost(0.5).describe() == "0.5 s (no Spark job metrics over Spark Connect)"
    assert SparkCost(0.5, 2, 3, 4, 5).to_dict() == {
        "seconds": 0.5, "jobs": 2, "stages": 3, "rows_read": 4, "bytes_read": 5,
    }


def test_the_users_job_group_is_kept_and_only_the_runs_jobs_are_counted(spark):
    if not hasattr(spark, "_jvm"):
        pytest.skip("job groups are a classic SparkContext's")
    context = spark.sparkContext
    context.setJobGroup("the-users-group", "theirs")
    try:
        spark.range(5).collect()  # before the run: not its cost
        with measuring_cost(spark) as meter:
            spark.range(10).collect()
        assert context.getLocalProperty("spark.jobGroup.id") == "the-users-group"
        assert (meter.cost.jobs, meter.cost.stages, meter.cost.rows_read) == (1, 1, 10)  # range counts as read
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    # Without a group of the user's, the run's own is removed when it ends.
    with measuring_cost(spark) as meter:
        spark.range(10).collect()
    assert context.getLocalProperty("spark.jobGroup.id") is None
    assert meter.cost.jobs == 1

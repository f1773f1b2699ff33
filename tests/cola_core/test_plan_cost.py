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


def test_a_cost_read_back_from_json_is_checked():
    assert SparkCost.from_dict({"seconds": 1, "jobs": 2, "stages": 3, "rows_read": 4, "bytes_read": 5}) == (
        SparkCost(1.0, 2, 3, 4, 5)
    )
    connect = {"seconds": 0.5, "jobs": None, "stages": None, "rows_read": None, "bytes_read": None}
    assert SparkCost.from_dict(connect) == SparkCost(0.5)
    bad = [
        ([], "the cost must be an object, got list"),
        ({"seconds": 1}, "the cost lacks bytes_read, jobs, rows_read, stages"),
        ({**connect, "rows": 1}, "the cost has unknown rows"),
        ({"jobs": 1, "rows": 1}, "the cost lacks bytes_read, rows_read, seconds, stages and has unknown rows"),
        ({**connect, "seconds": -1}, "the cost's seconds must be a number of at least 0, got -1"),
        ({**connect, "seconds": float("nan")}, "the cost's seconds must be a number of at least 0, got nan"),
        ({**connect, "seconds": True}, "the cost's seconds must be a number of at least 0, got True"),
        ({**connect, "jobs": 1.5}, "the cost's jobs must be null or a whole number of at least 0, got 1.5"),
        ({**connect, "stages": -2}, "the cost's stages must be null or a whole number of at least 0, got -2"),
        ({**connect, "bytes_read": "9"}, "the cost's bytes_read must be null or a whole number of at least 0, got '9'"),
    ]
    for data, message in bad:
        with pytest.raises(ValueError) as error:
            SparkCost.from_dict(data)
        assert str(error.value) == message


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

"""What the installed PySpark offers where 3.5 and 4.x differ (cola_core.common.spark_versions).

These tests run on both Spark legs; each asserts what holds on either."""

from __future__ import annotations

import pyspark
import pytest
from pyspark.sql import functions as F

from cola_core.common.spark_versions import is_pyspark_4, is_variant, pyspark_version, scalar_subquery


def test_the_version_is_the_installed_release():
    major, minor = (int(part) for part in pyspark.__version__.split(".")[:2])
    assert pyspark_version() == (major, minor)
    assert is_pyspark_4() is (major >= 4)


def test_hasattr_cannot_tell_the_versions_apart_which_is_why_they_are_asked(spark):
    # On 3.5 an unknown attribute of a Column is a field of it, so hasattr says True for a method
    # that does not exist; the version is the only reliable test.
    column = F.col("a")
    assert hasattr(column, "try_cast")
    assert callable(getattr(type(column), "try_cast", None)) is is_pyspark_4()


def test_a_variant_is_recognised_where_spark_has_it_and_nothing_is_a_variant_on_3_5():
    from pyspark.sql import types

    assert is_variant(types.StringType()) is False
    if is_pyspark_4():
        assert is_variant(types.VariantType()) is True
    else:
        assert not hasattr(types, "VariantType")


@pytest.mark.connect
def test_a_scalar_subquery_joins_the_aggregate_it_is_used_in(spark):
    data = spark.createDataFrame([(1,), (2,), (3,)], "id int")
    reference = spark.createDataFrame([(10,), (40,)], "amount int")
    measured = reference.agg(F.max("amount"))
    row = data.agg(F.sum("id").alias("data"), scalar_subquery(measured).alias("reference")).collect()
    assert [tuple(r) for r in row] == [(6, 40)]


def test_building_a_scalar_subquery_starts_no_job(spark, job_counter):
    reference = spark.createDataFrame([(10,), (40,)], "amount int")
    with job_counter.count() as counted:
        scalar_subquery(reference.agg(F.max("amount")))
    assert counted.jobs == 0

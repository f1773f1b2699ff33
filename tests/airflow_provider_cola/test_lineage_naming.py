"""The OpenLineage names of paths and tables (``_lineage_naming``), as the naming spec gives them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.airflow


@pytest.mark.parametrize(
    ("location", "conf", "naming"),
    [
        ("/data/orders", None, ("file", "/data/orders")),
        ("/data/orders/", None, ("file", "/data/orders")),
        ("file:///data/orders", None, ("file", "/data/orders")),
        ("file:/data/orders", None, ("file", "/data/orders")),
        ("file://fileserver/data/orders", None, ("file://fileserver", "/data/orders")),
        ("relative/orders", None, ("file", str(Path.cwd() / "relative" / "orders"))),
        ("s3a://bucket/data/orders/", None, ("s3://bucket", "data/orders")),
        ("s3://bucket/data/orders", None, ("s3://bucket", "data/orders")),
        ("gs://bucket/orders", None, ("gs://bucket", "orders")),
        ("gcs://bucket/orders", None, ("gs://bucket", "orders")),
        ("wasbs://box@account.blob.core.windows.net/orders", None,
         ("wasbs://box@account.blob.core.windows.net", "orders")),
        ("abfss://box@account.dfs.core.windows.net/data/orders", None,
         ("abfss://box@account.dfs.core.windows.net", "/data/orders")),
        ("hdfs://namenode:8020/data/orders", None, ("hdfs://namenode:8020", "/data/orders")),
        # The default file system names a path without a scheme.
        ("/data/orders", {"spark.hadoop.fs.defaultFS": "hdfs://namenode:8020"}, ("hdfs://namenode:8020", "/data/orders")),
        ("/data/orders", {"spark.hadoop.fs.defaultFS": "file:///"}, ("file", "/data/orders")),
    ],
)
def test_path_naming(location, conf, naming):
    from airflow_provider_cola._lineage_naming import path_naming

    assert path_naming(location, conf) == naming


def test_table_naming():
    from airflow_provider_cola._lineage_naming import table_naming

    hive = {"spark.sql.catalogImplementation": "hive", "spark.hadoop.hive.metastore.uris": "thrift://meta:9083,thrift://b:9083"}
    assert table_naming("db.orders", hive) == ("hive://meta:9083", "db.orders")
    assert table_naming("orders", hive) == ("hive://meta:9083", "default.orders")
    assert table_naming("spark_catalog.db.orders", hive) == ("hive://meta:9083", "db.orders")
    # A metastore named, but Spark's in-memory catalog in use: not a Hive table.
    assert table_naming("db.orders", {"spark.hadoop.hive.metastore.uris": "thrift://meta:9083"}) == (
        "spark_catalog", "db.orders")
    assert table_naming("db.orders") == ("spark_catalog", "db.orders")

"""Reading sources and writing outputs with Spark (``storage/readwrite.py``); parsing them is ``test_storage_specs``."""

from __future__ import annotations

import pytest

from cola_core.errors import ColaOutputError, ColaSourceError
from cola_core.storage.readwrite import ensure_writable, read_source, write_output
from cola_helpers import DATA

# -- reading with Spark ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(spark):
    return spark.createDataFrame([(1, "a"), (2, "b"), (3, None)], "id int, name string")


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["parquet", "json", "orc", "csv"])
def test_read_source_reads_every_format(spark, tiny, tmp_path, fmt):
    options = {"header": "true"} if fmt == "csv" else {}
    write_output(tiny, {"path": str(tmp_path / "t"), "format": fmt, "options": options})
    read_options = {"header": True, "inferSchema": True} if fmt == "csv" else {}
    df = read_source(spark, {"path": str(tmp_path / "t"), "format": fmt, "options": read_options})
    assert sorted((row["id"], row["name"]) for row in df.collect()) == [(1, "a"), (2, "b"), (3, None)]


@pytest.mark.spark
def test_read_source_reads_the_csv_fixture(spark):
    df = read_source(spark, {"path": str(DATA / "orders.csv"), "format": "csv", "options": {"header": True}})
    assert df.columns == ["order_id", "customer", "email", "amount", "status"]
    assert df.count() == 6


@pytest.mark.spark
def test_a_schema_is_taken_instead_of_inferred_and_a_stream_is_read_as_one(spark, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text('{"id": "7", "extra": 1}\n')
    batch = read_source(spark, {"path": str(tmp_path / "in"), "format": "json", "schema": "id STRING"})
    assert (batch.isStreaming, batch.schema.simpleString(), batch.collect()) == (False, "struct<id:string>", [("7",)])
    stream = read_source(spark, {"path": str(tmp_path / "in"), "format": "json", "stream": True, "schema": "id INT"})
    assert (stream.isStreaming, stream.schema.simpleString()) == (True, "struct<id:int>")


@pytest.mark.spark
def test_a_schema_that_is_not_ddl_is_a_source_error_naming_it(spark, tmp_path):
    (tmp_path / "in").mkdir()
    with pytest.raises(ColaSourceError) as raised:
        read_source(spark, {"path": str(tmp_path / "in"), "format": "json", "stream": True, "schema": "id INTT"})
    assert str(raised.value).startswith(
        f"cannot read the json stream at {tmp_path / 'in'}: its schema is not Spark DDL text: [UNSUPPORTED_DATATYPE] "
        'Unsupported data type "INTT".'
    )


@pytest.mark.spark
@pytest.mark.parametrize("prefix", ["", "file:", "file://"])
def test_a_missing_local_path_is_named(spark, tmp_path, prefix):
    path = f"{prefix}{tmp_path}/missing"
    with pytest.raises(ColaSourceError) as raised:
        read_source(spark, {"path": path})
    assert str(raised.value) == f"input path {path!r} does not exist"


@pytest.mark.spark
def test_a_glob_that_matches_nothing_is_named_by_spark(spark, tmp_path):
    path = f"{tmp_path}/missing-*"
    with pytest.raises(ColaSourceError) as raised:
        read_source(spark, {"path": path, "format": "json"})
    assert str(raised.value) == f"input path {path!r} does not exist"


@pytest.mark.spark
def test_delta_without_delta_lake_on_the_cluster(spark, tmp_path):
    with pytest.raises(ColaSourceError) as raised:
        read_source(spark, {"path": str(tmp_path), "format": "delta"})
    assert str(raised.value) == (
        "format 'delta' is not available on this Spark cluster; for delta, add Delta Lake "
        "(e.g. spark-submit --packages io.delta:delta-spark_2.13:<version>)"
    )


@pytest.mark.spark
def test_table_and_query_sources_read_through_spark(spark, tiny):
    tiny.createOrReplaceTempView("cola_io_orders")
    assert read_source(spark, {"table": "cola_io_orders"}).count() == 3
    query = read_source(spark, {"query": "SELECT id FROM cola_io_orders WHERE name IS NOT NULL"})
    assert sorted(row.id for row in query.collect()) == [1, 2]


@pytest.mark.spark
def test_a_missing_table_and_bad_sql_are_source_errors(spark):
    with pytest.raises(ColaSourceError) as raised:
        read_source(spark, {"table": "nope.orders"})
    assert str(raised.value) == (
        "cannot read the table nope.orders: [TABLE_OR_VIEW_NOT_FOUND] The table or view `nope`.`orders` cannot be "
        "found. Verify the spelling and correctness of the schema and catalog."
    )
    with pytest.raises(ColaSourceError) as raised:
        read_source(spark, {"query": "SELECT id FROM cola_io_orders WHERE id >"})
    assert str(raised.value) == (
        "cannot read the query: [PARSE_SYNTAX_ERROR] Syntax error at or near end of input. SQLSTATE: 42601 "
        "(line 1, pos 40)"
    )


# -- writing with Spark ----------------------------------------------------------------------


@pytest.mark.spark
def test_write_output_modes(spark, tiny, tmp_path):
    target = str(tmp_path / "out")
    write_output(tiny, target)
    assert spark.read.parquet(target).count() == 3
    with pytest.raises(ColaOutputError) as raised:
        write_output(tiny, {"path": target, "mode": "error"})
    assert str(raised.value) == (
        f"output {target} already exists and its mode is 'error'; "
        'set "mode" to "overwrite" or "append", or choose another target'
    )
    write_output(tiny, {"path": target, "mode": "append"})
    assert spark.read.parquet(target).count() == 6
    write_output(tiny.limit(1), {"path": target, "mode": "overwrite"})
    assert spark.read.parquet(target).count() == 1


@pytest.mark.spark
def test_write_output_partitions_and_passes_options(spark, tiny, tmp_path):
    target = tmp_path / "parts"
    write_output(tiny, {"path": str(target), "format": "csv", "partition_by": ["name"], "options": {"header": "true"}})
    assert sorted(p.name for p in target.iterdir() if p.is_dir()) == [
        "name=__HIVE_DEFAULT_PARTITION__", "name=a", "name=b",
    ]
    first_line = next((target / "name=a").glob("part-*.csv")).read_text().splitlines()[0]
    assert first_line == "id"


@pytest.mark.spark
def test_a_write_spark_refuses_is_an_output_error(spark, tiny, tmp_path):
    with pytest.raises(ColaOutputError) as raised:
        write_output(tiny, {"path": str(tmp_path / "p"), "partition_by": ["id", "name"]})
    assert str(raised.value) == (
        f"cannot write {tmp_path / 'p'}: [ALL_PARTITION_COLUMNS_NOT_ALLOWED] Cannot use all columns for partition "
        "columns. SQLSTATE: KD005"
    )


@pytest.mark.spark
def test_ensure_writable_refuses_an_existing_target_before_writing(spark, tiny, tmp_path):
    target = tmp_path / "exists"
    target.mkdir()
    for config in (str(target), f"file:{target}", {"path": f"file://{target}", "mode": "errorifexists"}):
        with pytest.raises(ColaOutputError, match="already exists and its mode is 'errorifexists'"):
            ensure_writable(spark, config)
    ensure_writable(spark, {"path": str(target), "mode": "overwrite"})
    ensure_writable(spark, str(tmp_path / "new"))
    # Another file system is left to Spark, which checks when it writes.
    ensure_writable(spark, "hdfs://namenode:8020/data/out")


@pytest.mark.spark
def test_table_outputs(spark, tiny):
    table = "cola_io_report"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    try:
        ensure_writable(spark, {"table": table})
        write_output(tiny, {"table": table, "format": "parquet"})
        assert spark.read.table(table).count() == 3
        with pytest.raises(ColaOutputError) as raised:
            ensure_writable(spark, {"table": table})
        assert str(raised.value) == (
            f"output table {table} already exists and its mode is 'errorifexists'; "
            'set "mode" to "overwrite" or "append", or choose another target'
        )
        with pytest.raises(ColaOutputError, match=f"^output table {table} already exists"):
            write_output(tiny, {"table": table, "mode": "error"})
        write_output(tiny, {"table": table, "mode": "append"})
        assert spark.read.table(table).count() == 6
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")



"""Sources and outputs as specs (``storage/specs.py``): parsing in pure Python, every refusal exact."""

from __future__ import annotations

import pytest

from cola_core.errors import ColaOutputError, ColaSourceError
from cola_core.storage.specs import OutputSpec, SourceSpec, parse_output, parse_source

# -- parse_source ----------------------------------------------------------------------------


def test_a_path_source_defaults_to_parquet_and_options_become_strings():
    spec = parse_source({"path": "/data/orders", "format": "CSV", "options": {"header": True, "samplingRatio": 0.5}})
    assert spec == SourceSpec(path="/data/orders", format="csv", options={"header": "true", "samplingRatio": "0.5"})
    assert spec.describe() == "csv at /data/orders"
    assert parse_source({"path": "/data/orders"}) == SourceSpec(path="/data/orders", format="parquet", options={})


def test_a_path_source_may_give_its_schema_and_be_a_stream():
    spec = parse_source({"path": "/landing", "format": "json", "stream": True, "schema": "id INT, name STRING"})
    assert spec == SourceSpec(path="/landing", format="json", schema="id INT, name STRING", stream=True)
    assert spec.describe() == "json stream at /landing"
    assert spec.to_config() == {"path": "/landing", "format": "json", "schema": "id INT, name STRING", "stream": True}
    assert parse_source(spec.to_config()) == spec
    batch = parse_source({"path": "/orders.csv", "format": "csv", "schema": "id INT"})
    assert (batch.stream, batch.to_config()) == (False, {"path": "/orders.csv", "format": "csv", "schema": "id INT"})


def test_table_and_query_sources():
    assert parse_source({"table": "db.orders"}).describe() == "table db.orders"
    query = parse_source({"query": "WITH t AS (SELECT 1 AS id) SELECT * FROM t"})
    assert (query.query, query.describe()) == ("WITH t AS (SELECT 1 AS id) SELECT * FROM t", "query")
    assert parse_source(query) is query


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("/data/orders", 'a source is an object such as {"path": "/data/orders", "format": "parquet"}, '
                         '{"table": "db.orders"} or {"query": "SELECT ..."}, got str'),
        ({}, "a source needs exactly one of 'path', 'table' or 'query', but has none of them"),
        ({"path": "/a", "table": "b"}, "a source needs exactly one of 'path', 'table' or 'query', but gives 'path' and 'table'"),
        ({"path": "/a", "sep": ","}, "unknown source key 'sep'; valid keys are path, table, query, format, options, schema, stream"),
        ({"path": " "}, "source 'path' must be a non-empty string, got ' '"),
        ({"table": "db.orders", "format": "csv"}, "source 'format' only applies to a 'path' source, not to a 'table'"),
        ({"path": "/a", "format": "avro"}, "unknown source format 'avro'; use one of parquet, csv, json, orc, delta"),
        ({"path": "/a", "options": ["header"]}, "source 'options' must be an object of option name to value, got list"),
        ({"path": "/a", "options": {"header": None}},
         "source option 'header' must map a name to a string, number or boolean, got None"),
        ({"query": "DROP TABLE orders"},
         "source 'query' must be a read-only SELECT or WITH query, but starts with 'DROP'; "
         "Spark would run it as soon as it is parsed"),
        ({"query": "SELECT 1; DELETE FROM orders"},
         "source 'query' holds more than one statement; give a single SELECT or WITH query"),
        ({"table": "db.orders", "stream": True}, "source 'stream' only applies to a 'path' source, not to a 'table'"),
        ({"query": "SELECT 1", "schema": "id INT"}, "source 'schema' only applies to a 'path' source, not to a 'query'"),
        ({"path": "/a", "stream": "yes", "schema": "id INT"}, "source 'stream' must be true or false, got 'yes'"),
        ({"path": "/a", "schema": ["id INT"]},
         "source 'schema' must be the columns as Spark DDL text such as 'id INT, name STRING' "
         "(at most 100,000 characters), got ['id INT']"),
        ({"path": "/a", "schema": "x" * 100_001},
         "source 'schema' must be the columns as Spark DDL text such as 'id INT, name STRING' "
         f"(at most 100,000 characters), got '{'x' * 79}… [cut: 99,923 characters]"),
        ({"path": "/a", "format": "json", "stream": True},
         "a streaming source needs its 'schema' (Spark DDL text such as 'id INT, name STRING'): "
         "a stream cannot infer its columns from files that have not arrived yet"),
    ],
)
def test_malformed_sources_are_refused_with_a_clear_message(source, message):
    with pytest.raises(ColaSourceError) as raised:
        parse_source(source)
    assert str(raised.value) == message



# -- parse_output ----------------------------------------------------------------------------


def test_a_plain_string_output_is_a_parquet_path_in_spark_default_mode():
    assert parse_output("/out/valid") == OutputSpec(path="/out/valid", format="parquet", mode="errorifexists")
    assert parse_output("/out/valid").target == "/out/valid"


def test_a_full_output_config():
    spec = parse_output(
        {"format": "json", "path": "/out/bad", "mode": "Overwrite", "partition_by": "day", "options": {"compression": "gzip"}}
    )
    assert spec == OutputSpec(
        path="/out/bad", format="json", mode="overwrite", partition_by=("day",), options={"compression": "gzip"}
    )


def test_a_table_output_keeps_the_table_format_unless_given():
    assert parse_output({"table": "dq.report", "mode": "append"}) == OutputSpec(table="dq.report", format=None, mode="append")
    assert parse_output({"table": "dq.report"}).target == "table dq.report"
    assert parse_output({"table": "dq.report", "format": "delta"}).format == "delta"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (3, 'an output is a path or an object such as {"path": "/data/out", "format": "parquet", "mode": "overwrite"}, '
            "got int"),
        ({"mode": "append"}, "an output needs exactly one of 'path' or 'table', but has neither"),
        ({"path": "/a", "table": "t"}, "an output needs exactly one of 'path' or 'table', but gives both"),
        ({"path": "/a", "partitionBy": ["d"]},
         "unknown output key 'partitionBy'; valid keys are path, table, format, mode, partition_by, options"),
        ({"path": "/a", "mode": "upsert"},
         "output 'mode' must be one of append, overwrite, error, errorifexists, ignore, got 'upsert'"),
        ({"path": "/a", "partition_by": ["d", ""]}, "output 'partition_by' must be a list of column names, got ['d', '']"),
        ({"path": "/a", "format": "xlsx"}, "unknown output format 'xlsx'; use one of parquet, csv, json, orc, delta"),
        ({"table": ""}, "output 'table' must be a non-empty string, got ''"),
    ],
)
def test_malformed_outputs_are_refused_with_a_clear_message(config, message):
    with pytest.raises(ColaOutputError) as raised:
        parse_output(config)
    assert str(raised.value) == message


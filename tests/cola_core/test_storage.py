"""Sources, outputs and rules files: parsing in pure Python, then reading and writing with Spark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cola_core import Cola, ColaError, ColaRuleError
from cola_core.errors import ColaOutputError, ColaSourceError
from cola_core.rules_file import read_rules_file
from cola_core.specs import OutputSpec, SourceSpec, parse_output, parse_source
from cola_core.storage import ensure_writable, read_source, write_counted, write_output

DATA = Path(__file__).parent / "data"


# -- parse_source ----------------------------------------------------------------------------


def test_a_path_source_defaults_to_parquet_and_options_become_strings():
    spec = parse_source({"path": "/data/orders", "format": "CSV", "options": {"header": True, "samplingRatio": 0.5}})
    assert spec == SourceSpec(path="/data/orders", format="csv", options={"header": "true", "samplingRatio": "0.5"})
    assert spec.describe() == "csv at /data/orders"
    assert parse_source({"path": "/data/orders"}) == SourceSpec(path="/data/orders", format="parquet", options={})


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
        ({"path": "/a", "sep": ","}, "unknown source key 'sep'; valid keys are path, table, query, format, options"),
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


# -- read_rules_file -------------------------------------------------------------------------


def test_rules_files_in_json_and_yaml():
    assert read_rules_file(DATA / "rules_warn.json") == [
        {"type": "not_null", "columns": ["order_id"]},
        {"type": "row_count", "min": 1},
        {"type": "missing_count", "column": "email", "must_be": "<= 2", "warn": "= 0", "name": "email present"},
    ]
    assert read_rules_file(str(DATA / "rules_fail.yaml")) == [
        {"type": "unique", "columns": ["order_id"]},
        {"type": "range", "column": "amount", "min": 0, "code": "AMOUNT_NEGATIVE"},
        {"type": "avg", "column": "amount", "must_be": "between 10 and 20"},
    ]


def test_a_rules_file_may_hold_an_object_with_only_rules(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('{"rules": [{"type": "row_count"}]}')
    assert read_rules_file(path) == [{"type": "row_count"}]
    path.write_text('{"rules": [], "pipeline": "x"}')
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} holds an object; it must be a list of rules, or an object whose only key "
        "is 'rules' (found keys: rules, pipeline)"
    )


def test_invalid_json_names_the_line_and_column(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('[\n  {"type": "not_null", "columns": ["id"]}\n  {"type": "row_count"}\n]\n')
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} is not valid JSON: Expecting ',' delimiter (line 3, column 3)\n"
        '      {"type": "row_count"}\n'
        "      ^"
    )


def test_invalid_yaml_names_the_line_and_column(tmp_path):
    path = tmp_path / "rules.yml"
    path.write_text("- type: not_null\n  columns: [id\n- type: row_count\n")
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} is not valid YAML: expected ',' or ']', but got ':' (line 3, column 7)\n"
        "    - type: row_count\n"
        "          ^"
    )


def test_an_unreadable_rules_file(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ColaError) as raised:
        read_rules_file(missing)
    assert str(raised.value) == f"cannot read rules file {str(missing)!r}: [Errno 2] No such file or directory: {str(missing)!r}"


def test_yaml_without_pyyaml_says_how_to_get_it(tmp_path, monkeypatch):
    # Uninstalling PyYAML is not possible inside the test run; None in sys.modules makes the
    # import fail exactly as it does when the package is absent.
    monkeypatch.setitem(sys.modules, "yaml", None)
    path = tmp_path / "rules.yaml"
    path.write_text("- type: row_count\n")
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} is YAML, which needs PyYAML: pip install PyYAML "
        "(or airflow-provider-cola[yaml]), or write the rules as JSON"
    )


def test_a_json_rules_file_does_not_import_yaml(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)
    assert read_rules_file(DATA / "rules_warn.json")[1] == {"type": "row_count", "min": 1}


# -- a sql rule's output is validated at parse time ------------------------------------------


def test_a_sql_rule_output_is_validated_before_spark():
    rule = {"type": "sql", "failed_rows": "SELECT * FROM _validation_df", "output": {"path": "/x", "mode": "merge"}}
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    assert str(raised.value) == (
        "rules[0] (sql): 'output' is not a valid output config: "
        "output 'mode' must be one of append, overwrite, error, errorifexists, ignore, got 'merge'"
    )


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
def test_write_counted_counts_during_the_write_without_an_extra_job(spark, tiny, tmp_path, job_counter):
    with job_counter.count() as plain:
        write_output(tiny, str(tmp_path / "plain"))
    with job_counter.count() as counted:
        written = write_counted(tiny.where("name IS NOT NULL"), str(tmp_path / "counted"))
    assert written == 2
    assert counted.jobs == plain.jobs == 1
    assert write_counted(tiny.where("id > 10"), str(tmp_path / "empty")) == 0


@pytest.mark.spark
def test_write_counted_refuses_ignore_mode(tiny, tmp_path):
    with pytest.raises(ColaOutputError) as raised:
        write_counted(tiny, {"path": str(tmp_path / "x"), "mode": "ignore"})
    assert str(raised.value) == (
        f"mode 'ignore' cannot be used for {tmp_path / 'x'}: the rows written are counted during the write, "
        "and Spark skips the write when the target exists; use append, overwrite or errorifexists"
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


@pytest.mark.spark
def test_a_failing_sql_rule_writes_its_failed_rows_to_its_output(spark, tiny, tmp_path):
    target = tmp_path / "no_name"
    rules = [
        {"type": "sql", "failed_rows": "SELECT id FROM _validation_df WHERE name IS NULL",
         "output": {"path": str(target), "format": "json"}},
        {"type": "sql", "failed_rows": "SELECT id FROM _validation_df WHERE id > 10",
         "output": {"path": str(tmp_path / "never"), "format": "json"}},
    ]
    # A rule that chooses where the engine writes needs the switch for trusted rules.
    results = Cola(allow_external_access=True).run(tiny, rules)
    assert [(r.passed, r.failed_count) for r in results] == [(False, 1), (True, 0)]
    assert [row.id for row in spark.read.json(str(target)).collect()] == [3]
    assert not (tmp_path / "never").exists()  # a passing rule writes nothing

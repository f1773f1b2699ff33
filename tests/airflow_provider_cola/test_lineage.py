"""OpenLineage facets: built from real results summaries, and emitted by real DAG runs.

openlineage-python 1.54 ships no JSON schema files: its facet classes are generated from the
spec's schemas, and each names the schema it follows (``_get_schema()``). So every facet is
validated, with ``jsonschema``, against a schema built from the installed class (field
names, types, required fields, nothing else), with ``_schemaURL`` held to the class's own.

The end-to-end test registers the OpenLineage provider's listener with the task runner's
listener manager for that test only, with the file transport (offline): configured for the
whole test process, the provider would emit events for every other Airflow test too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import typing
from pathlib import Path
from unittest import mock

import attrs
import jsonschema
import pytest

from cola_testenv import ORDERS

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

DAY3 = ORDERS / "2024-01-03"
PRODUCER_SCHEMA_KEYS = ("_producer", "_schemaURL")


# -- schemas from the installed facet classes -------------------------------------------


def _type_schema(hint: typing.Any) -> dict[str, typing.Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        # Optional fields are left out of the JSON when unset (Serde drops None), never null.
        kept = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        assert len(kept) == 1, hint
        return _type_schema(kept[0])
    if hint is typing.Any:
        return {}
    if origin is list:
        return {"type": "array", "items": _type_schema(typing.get_args(hint)[0])}
    if origin is dict:
        key, value = typing.get_args(hint)
        assert key is str, hint
        return {"type": "object", "additionalProperties": _type_schema(value)}
    if attrs.has(hint):
        return facet_schema(hint)
    simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
    return {"type": simple[hint]}


def facet_schema(cls: type) -> dict[str, typing.Any]:
    """The JSON schema of an openlineage-python generated class: its fields, their types,
    the ones without a default required, and no other key."""
    hints = typing.get_type_hints(cls)
    fields = attrs.fields(cls)
    properties = {field.name: _type_schema(hints[field.name]) for field in fields}
    required = [field.name for field in fields if field.default is attrs.NOTHING]
    if "_schemaURL" in properties:
        # Every facet carries both (the spec's BaseFacet requires them); the URL is the class's.
        properties["_schemaURL"] = {"const": cls._get_schema()}
        required = [*PRODUCER_SCHEMA_KEYS, *required]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def validate(instance: typing.Any, cls: type) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **facet_schema(cls)}
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(instance, schema, cls=jsonschema.Draft202012Validator)


def validate_input_facets(dataset: dict[str, typing.Any]) -> None:
    from openlineage.client.facet_v2 import data_quality_assertions_dataset, data_quality_metrics_input_dataset

    classes = {
        "dataQualityAssertions": data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet,
        "dataQualityMetrics": data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet,
    }
    assert set(dataset["inputFacets"]) <= set(classes)
    for key, facet in dataset["inputFacets"].items():
        validate(facet, classes[key])


def validate_output_facets(dataset: dict[str, typing.Any]) -> None:
    from openlineage.client.facet_v2 import output_statistics_output_dataset

    assert set(dataset["outputFacets"]) == {"outputStatistics"}
    validate(dataset["outputFacets"]["outputStatistics"], output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet)


def as_json(value: typing.Any) -> typing.Any:
    from openlineage.client.serde import Serde

    if isinstance(value, list):
        return [as_json(item) for item in value]
    return json.loads(Serde.to_json(value))


def without_producer(facet: dict[str, typing.Any]) -> dict[str, typing.Any]:
    """The facet without ``_producer``, which names the OpenLineage client or provider release."""
    assert isinstance(facet["_producer"], str) and facet["_producer"]
    return {key: value for key, value in facet.items() if key != "_producer"}


ASSERTIONS_URL = "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json#/$defs/DataQualityAssertionsDatasetFacet"
METRICS_URL = "https://openlineage.io/spec/facets/1-0-3/DataQualityMetricsInputDatasetFacet.json#/$defs/DataQualityMetricsInputDatasetFacet"
STATISTICS_URL = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"


def test_the_schemas_refuse_what_the_facets_do_not_allow():
    from openlineage.client.facet_v2 import data_quality_assertions_dataset, data_quality_metrics_input_dataset

    metrics = data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet
    good = {"_producer": "p", "_schemaURL": METRICS_URL, "columnMetrics": {"a": {"nullCount": 1}}, "rowCount": 6}
    validate(good, metrics)
    for wrong in (
        {**good, "rowCount": "6"},  # a count as text
        {**good, "columnMetrics": {"a": {"nullCount": 1.5}}},  # not a whole number
        {**good, "columnMetrics": {"a": {"nulls": 1}}},  # not a field of ColumnMetrics
        {key: value for key, value in good.items() if key != "columnMetrics"},  # required
        {**good, "_schemaURL": ASSERTIONS_URL},  # another facet's schema
        {key: value for key, value in good.items() if key != "_producer"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validate(wrong, metrics)
    assertions = data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet
    with pytest.raises(jsonschema.ValidationError):
        validate({"_producer": "p", "_schemaURL": ASSERTIONS_URL, "assertions": [{"assertion": "x", "success": "yes"}]},
                 assertions)


# -- facets from real runs of the engine -------------------------------------------------


@pytest.fixture(scope="module")
def session():
    """A local session for the module: the one already running in this process, if any (then
    left running), else one started here and stopped at the end."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2").getOrCreate()
    )
    yield spark
    spark.stop()


def run_block(session, df, rules):
    """A real summary of ``rules`` over ``df``, and the block's checks, as the tasks have them."""
    from airflow_provider_cola._rules import load_rules
    from cola_core import Cola
    from cola_core.report.results import summarise

    block = load_rules(rules)
    return summarise(Cola().run(df, rules)), block.checks


DAY3_RULES = [
    {"type": "row_count", "min": 1},
    {"type": "not_null", "columns": ["order_id", "email"], "name": "keys present"},
    {"type": "not_null", "columns": ["order_id"], "tolerance": "< 50%"},
    {"type": "unique", "columns": ["order_id"], "severity": "warn"},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT", "dimension": "Validity"},
    {"type": "missing_count", "column": "email", "must_be": "= 0"},
    {"type": "distinct_count", "column": "country", "must_be": "> 3", "warn": "> 10"},
    {"type": "min", "column": "amount", "must_be": ">= 0"},
    {"type": "max", "column": "amount", "must_be": "<= 1000"},
    {"type": "sum", "column": "amount", "must_be": "> 0", "where": "amount > 0"},
    {"type": "duplicate_count", "column": "order_id", "must_be": "= 0"},
    {"type": "sql", "failed_rows": "SELECT * FROM _validation_df WHERE amount < 0"},
]


@pytest.fixture(scope="module")
def day3(session):
    """The summary and the checks of DAY3_RULES over the third sample day."""
    return run_block(session, session.read.json(str(DAY3)), DAY3_RULES)


def test_assertions_of_a_real_run(day3):
    from airflow_provider_cola._lineage import assertions_facet

    summary, checks = day3
    built = assertions_facet(summary, checks)
    facet = as_json(built)

    validate(facet, type(built))
    ids = [result["rule_id"] for result in summary["results"]]
    assert without_producer(facet) == {"_schemaURL": ASSERTIONS_URL, "assertions": [
        {"assertion": "row_count", "success": True, "severity": "error", "name": ids[0], "expected": ">= 1",
         "actual": "6", "params": {"rule_type": "row_count", "rule_id": ids[0]}},
        # Several columns: the assertion names none, its params list them.
        {"assertion": "not_null(order_id,email)", "success": False, "severity": "error", "name": "keys present",
         "expected": "0", "actual": "1",
         "params": {"rule_type": "not_null", "rule_id": ids[1], "columns": ["order_id", "email"]}},
        # Passed by its tolerance (a share of rows, so no expected count): no issue that counts.
        {"assertion": "not_null(order_id)", "success": True, "column": "order_id", "severity": "error",
         "name": ids[2], "actual": "1", "params": {"rule_type": "not_null", "rule_id": ids[2], "tolerance": "< 50%"}},
        # A warn passed (Cola lets it); its severity says it found something.
        {"assertion": "unique(order_id)", "success": True, "column": "order_id", "severity": "warn", "name": ids[3],
         "expected": "0", "actual": "1", "params": {"rule_type": "unique", "rule_id": ids[3]}},
        {"assertion": "NEGATIVE_AMOUNT", "success": False, "column": "amount", "severity": "error", "name": ids[4],
         "expected": "0", "actual": "1", "params": {"rule_type": "range", "rule_id": ids[4], "dimension": "Validity"}},
        {"assertion": "missing_count(email)", "success": True, "column": "email", "severity": "error",
         "name": ids[5], "expected": "= 0", "actual": "0", "params": {"rule_type": "missing_count", "rule_id": ids[5]}},
        # In the warn band of a metric: passed in Cola's terms, an issue in the facet's.
        {"assertion": "distinct_count(country)", "success": True, "column": "country", "severity": "warn",
         "name": ids[6], "expected": "> 3", "actual": "5",
         "params": {"rule_type": "distinct_count", "rule_id": ids[6], "warn": "> 10"}},
        {"assertion": "min(amount)", "success": False, "column": "amount", "severity": "error", "name": ids[7],
         "expected": ">= 0", "actual": "-15", "params": {"rule_type": "min", "rule_id": ids[7]}},
        {"assertion": "max(amount)", "success": True, "column": "amount", "severity": "error", "name": ids[8],
         "expected": "<= 1000", "actual": "300", "params": {"rule_type": "max", "rule_id": ids[8]}},
        {"assertion": "sum(amount)", "success": True, "column": "amount", "severity": "error", "name": ids[9],
         "expected": "> 0", "actual": "435.5", "params": {"rule_type": "sum", "rule_id": ids[9], "where": "amount > 0"}},
        {"assertion": "duplicate_count(order_id)", "success": False, "column": "order_id", "severity": "error",
         "name": ids[10], "expected": "= 0", "actual": "1", "params": {"rule_type": "duplicate_count", "rule_id": ids[10]}},
        {"assertion": "sql", "success": False, "severity": "error", "name": ids[11],
         "content": "SELECT * FROM _validation_df WHERE amount < 0", "contentType": "sql",
         "params": {"rule_type": "sql", "rule_id": ids[11]}},
    ]}


def test_metrics_of_a_real_run(day3):
    from airflow_provider_cola._lineage import metrics_facet

    summary, checks = day3
    built = metrics_facet(summary, checks)
    facet = as_json(built)

    validate(facet, type(built))
    # order_id: 1 NULL, and 5 distinct keys counting the NULL, so 4 distinct values. country:
    # its NULLs were not counted, so its distinct count (which counts a NULL) is not given.
    # The sum was measured under a where: not a measure of the dataset.
    assert without_producer(facet) == {"_schemaURL": METRICS_URL, "rowCount": 6, "columnMetrics": {
        "order_id": {"nullCount": 1, "distinctCount": 4},
        "email": {"nullCount": 0},
        "amount": {"min": -15.0, "max": 300.0},
    }}


def test_metrics_per_column_of_several_columns_and_what_is_not_measured(session):
    from airflow_provider_cola._lineage import metrics_facet

    df = session.createDataFrame(
        [(None, None, None, "x"), (1, 2, None, "x"), (None, 3, None, None), (4, 5, None, "y")],
        "a int, b int, c double, d string",
    )
    rules = [
        # 3 NULLs (a: 2, b: 1), then the tolerance's words after the counts.
        {"type": "not_null", "columns": ["a", "b"], "tolerance": "< 90%"},
        {"type": "distinct_count", "column": "d", "must_be": "> 0"},
        {"type": "missing_count", "column": "d", "must_be": "< 5"},
        {"type": "unique", "columns": ["b"]},
        {"type": "sum", "column": "b", "must_be": "> 0"},
        # An all-NULL column: nothing measured, so no min.
        {"type": "min", "column": "c", "must_be": "> 0"},
        # missing_values counts more than NULLs.
        {"type": "missing_count", "column": "a", "must_be": "< 5", "missing_values": [4]},
    ]
    summary, checks = run_block(session, df, rules)
    assert summary["results"][0]["message"] == (
        "not_null(a,b): 3 NULL values (a: 2, b: 1); 75% of rows, within tolerance (< 90%)"
    )
    built = metrics_facet(summary, checks)
    facet = as_json(built)

    validate(facet, type(built))
    assert without_producer(facet) == {"_schemaURL": METRICS_URL, "rowCount": 4, "columnMetrics": {
        "a": {"nullCount": 2},
        "b": {"nullCount": 1, "distinctCount": 3, "sum": 10.0},
        "d": {"nullCount": 1, "distinctCount": 2},
    }}


def test_the_nulls_per_column_are_read_from_the_details_never_from_the_message():
    from airflow_provider_cola._lineage import metrics_facet
    from cola_core.checks import NotNullCheck

    check = NotNullCheck({"columns": ["a", "b"]}, rule_type="not_null")
    base = {"rule_type": "not_null", "passed": False, "failed_count": 3, "metric_value": None, "severity": "fail",
            "code": "not_null(a,b)", "rows_checked": 4}
    # The counts as data, whatever the message says (a custom wording, a cut message).
    told = {**base, "message": "3 NULLs", "details": {"columns": {"a": 2, "b": 1}}}
    facet = as_json(metrics_facet({"results": [told]}, [check]))
    assert facet["columnMetrics"] == {"a": {"nullCount": 2}, "b": {"nullCount": 1}}
    # The counts only in the message: not read, so not claimed.
    untold = {**base, "message": "not_null(a,b): 3 NULL values (a: 2, b: 1)"}
    # Counts that do not add up to failed_count, or name other columns: not claimed either.
    wrong = {**base, "message": "m", "details": {"columns": {"a": 1, "b": 1}}}
    other = {**base, "message": "m", "details": {"columns": {"a": 2, "c": 1}}}
    for result in (untold, wrong, other):
        assert as_json(metrics_facet({"results": [result]}, [check]))["columnMetrics"] == {}


def test_a_summary_without_its_rules_gives_what_the_results_say(day3):
    from airflow_provider_cola._lineage import assertions_facet, metrics_facet

    full, checks = day3
    summary = {**full, "results": full["results"][:4]}
    # The checks of another block do not pair with these results: they are not used.
    other = checks[4:8]
    for unpaired in (None, other):
        facet = as_json(assertions_facet(summary, unpaired))
        ids = [result["rule_id"] for result in summary["results"]]
        assert facet["assertions"] == [
            # A passing result of an unknown rule: its severity is not known either.
            {"assertion": "row_count", "success": True, "name": ids[0], "params": {"rule_type": "row_count", "rule_id": ids[0]}},
            {"assertion": "not_null(order_id,email)", "success": False, "severity": "error", "name": "keys present",
             "params": {"rule_type": "not_null", "rule_id": ids[1]}},
            {"assertion": "not_null(order_id)", "success": True, "name": ids[2],
             "params": {"rule_type": "not_null", "rule_id": ids[2]}},
            {"assertion": "unique(order_id)", "success": True, "severity": "warn", "name": ids[3],
             "params": {"rule_type": "unique", "rule_id": ids[3]}},
        ]
        # Without the rules, where each number was measured is not known: nothing is claimed.
        assert metrics_facet(summary, unpaired) is None


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
    from airflow_provider_cola._lineage import path_naming

    assert path_naming(location, conf) == naming


def test_table_naming():
    from airflow_provider_cola._lineage import table_naming

    hive = {"spark.sql.catalogImplementation": "hive", "spark.hadoop.hive.metastore.uris": "thrift://meta:9083,thrift://b:9083"}
    assert table_naming("db.orders", hive) == ("hive://meta:9083", "db.orders")
    assert table_naming("orders", hive) == ("hive://meta:9083", "default.orders")
    assert table_naming("spark_catalog.db.orders", hive) == ("hive://meta:9083", "db.orders")
    # A metastore named, but Spark's in-memory catalog in use: not a Hive table.
    assert table_naming("db.orders", {"spark.hadoop.hive.metastore.uris": "thrift://meta:9083"}) == (
        "spark_catalog", "db.orders")
    assert table_naming("db.orders") == ("spark_catalog", "db.orders")


# -- the tasks' methods ------------------------------------------------------------------


def test_split_operator_lineage_from_its_summary(session, tmp_path):
    from airflow.sdk import Asset

    from airflow_provider_cola.operators import ColaSplitOperator
    from cola_core import Cola
    from cola_core.report.results import summarise

    rules = [{"type": "not_null", "columns": ["order_id"]}, {"type": "range", "column": "amount", "min": 0}]
    split = ColaSplitOperator(
        task_id="split", rules=rules, source={"path": str(DAY3), "format": "json"},
        valid_output={"table": "shop.orders"}, invalid_output=str(tmp_path / "quarantine"),
        inlets=[Asset("file:///data/customers")], outlets=[Asset("file:///data/published")],
    )
    # Before any summary (a task that failed before the job wrote one): the source, named.
    before = split.get_openlineage_facets_on_failure(None)
    assert as_json(before.inputs) == [
        {"namespace": "file", "name": str(DAY3), "facets": {}, "inputFacets": {}},
        # Declared inlets and outlets stay in the lineage, as the listener would give them.
        {"namespace": "file", "name": "/data/customers", "facets": {}},
    ]
    assert as_json(before.outputs) == [{"namespace": "file", "name": "/data/published", "facets": {}}]

    outcome = Cola().split_write(
        session.read.json(str(DAY3)), rules, {"path": str(tmp_path / "valid")}, {"path": str(tmp_path / "quarantine")}
    )
    split.cola_summary = summarise(outcome.results, valid_count=outcome.valid_count, invalid_count=outcome.invalid_count)
    lineage = split.get_openlineage_facets_on_complete(None)

    checked, customers = as_json(lineage.inputs)
    assert (checked["namespace"], checked["name"], customers["name"]) == ("file", str(DAY3), "/data/customers")
    validate_input_facets(checked)
    assert [(a["assertion"], a["success"], a["column"], a["actual"]) for a in checked["inputFacets"]["dataQualityAssertions"]["assertions"]] == [
        ("not_null(order_id)", False, "order_id", "1"), ("range(amount,0,)", False, "amount", "1")]
    assert without_producer(checked["inputFacets"]["dataQualityMetrics"]) == {
        "_schemaURL": METRICS_URL, "rowCount": 6, "columnMetrics": {"order_id": {"nullCount": 1}}}
    outputs = as_json(lineage.outputs)
    for output in outputs[:2]:
        validate_output_facets(output)
    assert [(o["namespace"], o["name"], o.get("outputFacets", {}).get("outputStatistics", {}).get("rowCount"))
            for o in outputs] == [
        ("spark_catalog", "shop.orders", 4), ("file", str(tmp_path / "quarantine"), 2), ("file", "/data/published", None)]
    # The same facets on failure (a failed check fails the task after its summary is made).
    assert as_json(split.get_openlineage_facets_on_failure(None)) == as_json(lineage)


def test_decorated_check_is_named_by_its_one_inlet_or_by_its_task(session):
    from airflow.sdk import DAG, Asset

    from airflow_provider_cola.decorators.cola import _ColaCheckDecoratedOperator

    summary, _ = run_block(session, session.read.json(str(DAY3)), [{"type": "not_null", "columns": ["email"]}])

    def orders(spark=None):
        return spark.read.json(str(DAY3))

    with DAG("lineage_unit", schedule=None):
        named = _ColaCheckDecoratedOperator(
            task_id="named", python_callable=orders, rules=[{"type": "not_null", "columns": ["email"]}],
            inlets=[Asset(f"file://{DAY3}")],
        )
        unnamed = _ColaCheckDecoratedOperator(task_id="unnamed", python_callable=orders, rules=[{"type": "row_count"}])
    # execute() keeps the parsed block; the test sets what execute() would have set.
    named.cola_summary = summary
    named._block = _block_of([{"type": "not_null", "columns": ["email"]}])
    checked = as_json(named.get_openlineage_facets_on_complete(None).inputs)
    assert [(d["namespace"], d["name"]) for d in checked] == [("file", str(DAY3))]
    assert checked[0]["inputFacets"]["dataQualityAssertions"]["assertions"][0]["column"] == "email"

    # No source and no inlet: <dag_id>.<task_id>, in the deployment's OpenLineage namespace.
    unnamed.cola_summary = summary
    assert [(d.namespace, d.name) for d in unnamed.get_openlineage_facets_on_complete(None).inputs] == [
        ("default", "lineage_unit.unnamed")]


def _block_of(rules):
    from airflow_provider_cola._rules import load_rules

    return load_rules(rules)


# -- without the optional provider -------------------------------------------------------


def test_tasks_work_without_openlineage(airflow_home):
    """In a process where ``openlineage`` (the client the provider is built on) cannot be
    imported, the DAG file loads and a decorated check runs to success: the lineage methods
    are never called there, and nothing else imports it."""
    script = """
import json, sys
sys.modules["openlineage"] = None  # every import of it fails, as when it is not installed
import datetime as dt
from airflow.dag_processing.dagbag import DagBag
import airflow_provider_cola.operators, airflow_provider_cola.decorators
bag = DagBag(dag_folder=sys.argv[1])
dag = bag.get_dag("cola_test_lineage_optional")
run = dag.test(logical_date=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
from airflow.utils.session import create_session
with create_session() as session:
    states = {ti.task_id: str(getattr(ti.state, "value", ti.state)) for ti in run.get_task_instances(session=session)}
loaded = sorted(name for name in sys.modules if name.startswith("openlineage") and sys.modules[name] is not None)
print("RESULT " + json.dumps({"errors": list(bag.import_errors), "states": states, "openlineage": loaded}))
"""
    from cola_testenv import DAGS_FOLDER

    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW__OPENLINEAGE__")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(DAGS_FOLDER)], capture_output=True, text=True, timeout=300, env=env
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    assert json.loads(lines[-1][len("RESULT "):]) == {"errors": [], "states": {"orders": "success"}, "openlineage": []}


# -- end to end: a DAG run with the provider's file transport ------------------------------


@pytest.fixture
def openlineage_events(airflow_home, tmp_path):
    """The OpenLineage listener, on for one test, writing its events to a file (one per line)."""
    from airflow.providers.openlineage import conf as openlineage_conf
    from airflow.providers.openlineage.plugins.listener import get_openlineage_listener
    from airflow.sdk.listener import get_listener_manager

    events = tmp_path / "openlineage.jsonl"
    settings = {
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "file", "log_file_path": str(events), "append": True}),
        # The listener emits from a thread of the task process rather than a fork of pytest.
        "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True",
    }
    cached = [f for f in vars(openlineage_conf).values() if callable(getattr(f, "cache_clear", None))]
    manager = get_listener_manager()
    with mock.patch.dict(os.environ, settings):
        for function in cached:
            function.cache_clear()
        listener = get_openlineage_listener()
        manager.add_listener(listener)
        try:
            yield lambda: [json.loads(line) for line in events.read_text().splitlines()] if events.exists() else []
        finally:
            manager.pm.unregister(listener)
    # Read again without the settings: off, as for every other test.
    for function in cached:
        function.cache_clear()


def _task_events(events, task_id):
    return {e["eventType"]: e for e in events if e["job"]["name"] == f"cola_test_lineage.{task_id}"}


def _dataset(datasets, namespace, name):
    found = [d for d in datasets if (d["namespace"], d["name"]) == (namespace, name)]
    assert len(found) == 1, datasets
    return found[0]


def test_dag_run_emits_the_quality_facets(run_dag, openlineage_events, tmp_path):
    outcome = run_dag("cola_test_lineage", "2024-01-03", conf={"output_dir": str(tmp_path / "out")})

    assert outcome.states == {"check_orders": "success", "split_orders": "success", "distinct_countries": "failed"}
    events = openlineage_events()

    # The check: its source, with one assertion per rule and what the block measured.
    check = _task_events(events, "check_orders")
    assert set(check) == {"START", "COMPLETE"}
    checked = _dataset(check["COMPLETE"]["inputs"], "file", str(DAY3))
    validate_input_facets(checked)
    ids = [result["rule_id"] for result in outcome.xcom["check_orders"]["results"]]
    assert without_producer(checked["inputFacets"]["dataQualityAssertions"]) == {
        "_schemaURL": ASSERTIONS_URL, "assertions": [
            {"assertion": "row_count", "success": True, "severity": "error", "name": ids[0], "expected": ">= 1",
             "actual": "6", "params": {"rule_type": "row_count", "rule_id": ids[0]}},
            {"assertion": "not_null(order_id,email)", "success": False, "severity": "error", "name": "keys present",
             "expected": "0", "actual": "1",
             "params": {"rule_type": "not_null", "rule_id": ids[1], "columns": ["order_id", "email"]}},
            {"assertion": "unique(order_id)", "success": True, "column": "order_id", "severity": "warn",
             "name": ids[2], "expected": "0", "actual": "1", "params": {"rule_type": "unique", "rule_id": ids[2]}},
            {"assertion": "max(amount)", "success": True, "column": "amount", "severity": "error", "name": ids[3],
             "expected": "<= 1000", "actual": "300", "params": {"rule_type": "max", "rule_id": ids[3]}},
            {"assertion": "sum(amount)", "success": True, "column": "amount", "severity": "error", "name": ids[4],
             "expected": "> 0", "actual": "435.5",
             "params": {"rule_type": "sum", "rule_id": ids[4], "where": "amount > 0"}},
        ]}
    assert without_producer(checked["inputFacets"]["dataQualityMetrics"]) == {
        "_schemaURL": METRICS_URL, "rowCount": 6, "columnMetrics": {
            "order_id": {"nullCount": 1, "distinctCount": 4}, "email": {"nullCount": 0}, "amount": {"max": 300.0}}}
    assert check["COMPLETE"]["outputs"] == []

    # The split: the same for its source, and its two outputs with the rows written to each.
    split = _task_events(events, "split_orders")["COMPLETE"]
    split_input = _dataset(split["inputs"], "file", str(DAY3))
    validate_input_facets(split_input)
    assert [(a["assertion"], a["success"], a["actual"]) for a in split_input["inputFacets"]["dataQualityAssertions"]["assertions"]] == [
        ("not_null(order_id)", False, "1"), ("NEGATIVE_AMOUNT", False, "1")]
    assert outcome.xcom["split_orders"]["valid_count"] == 4
    for name, rows in ((tmp_path / "out" / "valid", 4), (tmp_path / "out" / "invalid", 2)):
        output = _dataset(split["outputs"], "file", str(name))
        validate_output_facets(output)
        assert without_producer(output["outputFacets"]["outputStatistics"]) == {"_schemaURL": STATISTICS_URL, "rowCount": rows}

    # The failing decorated check: a FAIL event, with the facets of the checks that failed it.
    # No source names its DataFrame: it is <dag_id>.<task_id> in the job namespace.
    failed = _task_events(events, "distinct_countries")
    assert set(failed) == {"START", "FAIL"}
    assert failed["FAIL"]["job"]["namespace"] == "default"
    decorated = _dataset(failed["FAIL"]["inputs"], "default", "cola_test_lineage.distinct_countries")
    validate_input_facets(decorated)
    ids = [result["rule_id"] for result in outcome.xcom["distinct_countries"]["results"]]
    assert without_producer(decorated["inputFacets"]["dataQualityAssertions"])["assertions"] == [
        {"assertion": "distinct_count(country)", "success": False, "column": "country", "severity": "error",
         "name": ids[0], "expected": "= 6", "actual": "5", "params": {"rule_type": "distinct_count", "rule_id": ids[0]}},
        {"assertion": "not_null(country)", "success": True, "column": "country", "severity": "error", "name": ids[1],
         "expected": "0", "actual": "0", "params": {"rule_type": "not_null", "rule_id": ids[1]}},
    ]
    assert without_producer(decorated["inputFacets"]["dataQualityMetrics"]) == {
        "_schemaURL": METRICS_URL, "rowCount": 6, "columnMetrics": {"country": {"nullCount": 0, "distinctCount": 5}}}

"""OpenLineage lineage of the tasks: their lineage methods, and the events of real DAG runs.

Every facet is held to the schema of the facet class ``openlineage-python`` ships
(``cola_facets`` builds the schemas); the facet builders themselves are tested on real
summaries in ``test_lineage_facets.py``, the dataset names in ``test_lineage_naming.py``.

The end-to-end test registers the OpenLineage provider's listener with the task runner's
listener manager for that test only, with the file transport (offline): configured for the
whole test process, the provider would emit events for every other Airflow test too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from unittest import mock

import jsonschema
import pytest

from cola_facets import (
    ASSERTIONS_URL,
    METRICS_URL,
    STATISTICS_URL,
    as_json,
    run_block,
    validate,
    validate_input_facets,
    validate_output_facets,
    without_producer,
)
from cola_testenv import ORDERS

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

DAY3 = ORDERS / "2024-01-03"


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

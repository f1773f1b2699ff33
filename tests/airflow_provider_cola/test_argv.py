"""The job's command line: the ``JobSpec`` an operator builds from its arguments, as argv.

The operators hand ``JobSpec.to_argv()`` of the job ``_job_spec`` builds to spark-submit;
these tests build it the same way, from the operator's arguments.
"""

from __future__ import annotations

import json

import pytest

from airflow_provider_cola._rules import RuleBlock, checked_source
from airflow_provider_cola.errors import ColaConfigError
from airflow_provider_cola.operators import ColaCheckOperator, ColaSplitOperator
from airflow_provider_cola.operators._argv import rules_file

pytestmark = pytest.mark.airflow


def job_argv(operator: ColaCheckOperator) -> list[str]:
    """The application arguments ``operator.execute`` would submit, rules and results given."""
    source = checked_source(operator.source, allow_external_access=operator.allow_external_access)
    return operator._job_spec("/r/rules.json", source, "/t/results.json", operator._job_outputs()).to_argv()


def arguments(source: dict, **overrides) -> list[str]:
    values = {"rules": [], "source": source, "pipeline": "dag.task", "samples": 3, **overrides}
    return job_argv(ColaCheckOperator(task_id="task", **values))


def output_arguments(operator: ColaCheckOperator) -> list[str]:
    """What the operator's outputs add to the job's argv: everything between ``--samples N`` and
    ``--fail-exit-code`` (``allow_external_access`` is off)."""
    argv = job_argv(operator)
    return argv[argv.index("--samples") + 2:argv.index("--fail-exit-code")]


def report_arguments(report) -> list[str]:
    return output_arguments(ColaCheckOperator(task_id="task", rules=[], source={"table": "db.t"}, report=report))


def split_output_arguments(valid_output, invalid_output, annotate, quarantine_key, **more) -> list[str]:
    return output_arguments(ColaSplitOperator(
        task_id="task", rules=[], source={"table": "db.t"}, valid_output=valid_output,
        invalid_output=invalid_output, annotate=annotate, quarantine_key=quarantine_key, **more,
    ))


def test_a_path_source_gives_input_format_and_options():
    assert arguments({"path": "/data/orders", "format": "csv", "options": {"header": "true", "sep": ";"}}) == [
        "check", "--rules", "/r/rules.json",
        "--input", "/data/orders", "--format", "csv", "--option", "header=true", "--option", "sep=;",
        "--results", "/t/results.json", "--pipeline", "dag.task", "--samples", "3", "--fail-exit-code", "0",
    ]


def test_table_and_query_sources_with_outputs_and_the_switch():
    assert arguments({"table": "db.orders"}, report="/rep", allow_external_access=True) == [
        "check", "--rules", "/r/rules.json", "--table", "db.orders",
        "--results", "/t/results.json", "--pipeline", "dag.task", "--samples", "3",
        "--report", "/rep", "--allow-external-access", "--fail-exit-code", "0",
    ]
    assert arguments({"query": "SELECT 1 AS x"})[3:5] == ["--query", "SELECT 1 AS x"]


def test_report_and_split_outputs():
    assert report_arguments(None) == []
    assert report_arguments("/reports/dq") == ["--report", "/reports/dq"]
    assert report_arguments({"path": "/reports/dq", "format": "delta"}) == [
        "--report", '{"path": "/reports/dq", "format": "delta"}'
    ]
    assert split_output_arguments("/v", {"table": "db.bad"}, "dq_errors", ["order_id", "line"]) == [
        "--valid-output", "/v", "--invalid-output", '{"table": "db.bad"}',
        "--annotate", "dq_errors", "--quarantine-key", "order_id", "--quarantine-key", "line",
    ]
    assert split_output_arguments("/v", "/i", None, None) == ["--valid-output", "/v", "--invalid-output", "/i"]
    assert split_output_arguments("/v", "/i", "dq", None, annotate_valid=True) == [
        "--valid-output", "/v", "--invalid-output", "/i", "--annotate", "dq", "--annotate-valid",
    ]
    with pytest.raises(ColaConfigError) as raised:
        split_output_arguments("/v", "/i", None, None, annotate_valid=True)
    assert str(raised.value) == "invalid Cola job: annotate_valid only applies to a split job with annotate"
    with pytest.raises(ColaConfigError):
        split_output_arguments({"format": "parquet"}, "/i", None, None)


def test_inline_rules_are_written_and_shipped_by_name_in_cluster_mode(tmp_path):
    block = RuleBlock([{"type": "row_count", "min": 1}], None, [])
    assert rules_file(block, tmp_path, "client") == (str(tmp_path.resolve() / "rules.json"), [])
    assert json.loads((tmp_path / "rules.json").read_text(encoding="utf-8")) == [{"type": "row_count", "min": 1}]
    assert rules_file(block, tmp_path, "cluster") == ("rules.json", [str(tmp_path.resolve() / "rules.json")])

    given = tmp_path / "orders.yaml"
    given.write_text("- type: row_count\n", encoding="utf-8")
    assert rules_file(RuleBlock([], given, []), tmp_path / "unused", "cluster") == (
        "orders.yaml", [str(given.resolve())]
    )


def test_a_contracts_schema_object_stays_on_the_argument_not_on_the_shipped_file(tmp_path):
    contract = tmp_path / "orders.odcs.yaml"
    contract.write_text("kind: DataContract\n", encoding="utf-8")
    chosen = RuleBlock([], tmp_path / "orders.odcs.yaml#orders", [])
    assert rules_file(chosen, tmp_path / "unused", "client") == (f"{contract.resolve()}#orders", [])
    # spark-submit's --files would read '#orders' as a new name for the shipped file.
    assert rules_file(chosen, tmp_path / "unused", "cluster") == ("orders.odcs.yaml#orders", [str(contract.resolve())])

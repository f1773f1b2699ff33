"""Operator arguments, and everything checked before a submit; none of these start Spark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from airflow_provider_cola._outcome import describe_results
from airflow_provider_cola._rules import load_rules
from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.errors import ColaChecksFailed, ColaConfigError, ColaJobError, ColaJobRefused
from airflow_provider_cola.operators import ColaCheckOperator, ColaSplitOperator
from cola_expected import ORDERS_FAIL_SUMMARY
from cola_testenv import REPO

pytestmark = pytest.mark.airflow

RULES = [{"type": "row_count", "min": 1}]
SOURCE = {"path": "/data/orders/{{ ds }}", "format": "json"}


def test_template_fields():
    assert ColaCheckOperator.template_fields == (
        "rules", "source", "report", "pipeline", "history", "dataset", "html_report", "results_uri", "conf", "files", "py_files",
        "archives", "jars", "packages", "driver_class_path", "env_vars", "name", "keytab", "principal", "proxy_user",
        "properties_file",
    )
    assert ColaSplitOperator.template_fields == (
        *ColaCheckOperator.template_fields, "valid_output", "invalid_output", "annotate", "checkpoint",
    )


def test_init_only_stores_its_arguments():
    operator = ColaSplitOperator(
        task_id="split",
        rules="rules/missing-until-run-time.yaml",  # not read at parse time
        source=SOURCE,
        valid_output="/out/valid",
        invalid_output={"path": "/out/invalid", "mode": "overwrite"},
        annotate="codes",
        branch={"pass": "load", "fail": ["quarantine", "alert"]},
        conf={"spark.executor.memory": "2g"},
        executor_cores=2,
    )
    assert operator.rules == "rules/missing-until-run-time.yaml"
    assert operator.source == SOURCE
    assert operator.branch == {"pass": ["load"], "fail": ["quarantine", "alert"]}
    assert operator.on_failure == "fail"
    assert operator.conn_id == "spark_default"
    assert (operator.valid_output, operator.invalid_output, operator.annotate) == (
        "/out/valid", {"path": "/out/invalid", "mode": "overwrite"}, "codes",
    )
    assert operator.conf == {"spark.executor.memory": "2g"} and operator.executor_cores == 2
    assert operator.inherits_from_skipmixin


def test_dag_parsing_imports_no_pyspark_and_reads_no_file(tmp_path):
    dag_file = tmp_path / "parse_me.py"
    dag_file.write_text(textwrap.dedent("""
        import sys
        from airflow.sdk import DAG
        from airflow_provider_cola.decorators import cola_check
        from airflow_provider_cola.operators import ColaCheckOperator, ColaProfileOperator, ColaSplitOperator

        with DAG("parse_me", schedule=None):
            ColaCheckOperator(task_id="check", rules="no/such/rules.yaml", source={"table": "db.t"})
            ColaSplitOperator(task_id="split", rules=[], source={"table": "db.t"}, valid_output="/v",
                              invalid_output="/i")
            ColaProfileOperator(task_id="profile", source={"table": "db.t"}, suggestions="/no/such/folder/t.yaml")

            def numbers(spark):
                return spark.range(1)

            cola_check(rules=[])(numbers)()
        print("pyspark imported:", "pyspark" in sys.modules)
    """))
    parsed = subprocess.run([sys.executable, str(dag_file)], capture_output=True, text=True, timeout=120,
                            env={**os.environ})
    assert parsed.returncode == 0, parsed.stderr[-3000:]
    assert parsed.stdout.strip().splitlines()[-1] == "pyspark imported: False"


def numbers(spark):
    return spark.range(3)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"on_failure": "FAIL"}, "on_failure must be one of fail, warn, skip (lower case), got 'FAIL'"),
        ({"branch": {"error": "x"}}, "branch keys are pass, warn, fail, got 'error'"),
        ({"branch": {"fail": ["a", 3]}}, "branch['fail'] must be a task id or a list of task ids, got ['a', 3]"),
        ({"branch": {}}, 'branch must map severities to task ids, e.g. {"pass": "load", "warn": "notify", '
                         '"fail": "quarantine"}, got {}'),
        ({"samples": -1}, "samples must be a whole number >= 0, got -1"),
    ],
)
def test_static_arguments_are_checked_at_parse_time(arguments, message):
    with pytest.raises(ValueError) as error:
        ColaCheckOperator(task_id="check", rules=RULES, source=SOURCE, **arguments)
    assert str(error.value) == message
    with pytest.raises(ValueError) as error:
        cola_check(rules=RULES, **arguments)(numbers)()
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"rules": [{"type": "regex", "column": "c", "pattern": "("}]},
         "invalid Cola rules: rules[0] (regex): "),
        ({"source": {"path": "/x", "table": "t"}},
         "invalid Cola source: a source needs exactly one of 'path', 'table' or 'query', but gives 'path' and "
         "'table'"),
        ({"report": {"path": "/r", "mode": "replace"}},
         "invalid report: output 'mode' must be one of append, overwrite, error, errorifexists, ignore, got "
         "'replace'"),
        ({"deploy_mode": "cluster"},
         "cluster deploy mode runs the driver on the cluster, so the results cannot come back through a local "
         "file: set results_uri to a folder both this worker and the driver reach"),
        ({"results_uri": "s3://bucket/results"},
         "results_uri must be a folder on storage that this worker and the Spark driver both mount (a path or a "
         "file: URI), got 's3://bucket/results'"),
    ],
)
def test_bad_configuration_fails_before_any_submit(arguments, message):
    operator = ColaCheckOperator(task_id="check", **{"rules": RULES, "source": SOURCE, **arguments})
    with pytest.raises(ColaConfigError) as error:
        operator.execute(context={})
    assert str(error.value).startswith(message)
    assert operator._hook is None  # no hook was even built


def test_split_outputs_are_checked():
    operator = ColaSplitOperator(task_id="split", rules=RULES, source=SOURCE, valid_output={"path": "/v"},
                                 invalid_output={"format": "parquet"})
    with pytest.raises(ColaConfigError) as error:
        operator.execute(context={})
    assert str(error.value) == "invalid invalid_output: an output needs exactly one of 'path' or 'table', but has neither"


def test_rules_file_relative_to_the_dag_folder():
    block = load_rules("rules/orders.yaml", base_dir=REPO / "dags_examples")
    assert block.path == REPO / "dags_examples" / "rules" / "orders.yaml"
    assert [rule["type"] for rule in block.rules] == ["row_count", "not_null", "unique", "range", "missing_percent"]


def test_an_odcs_contract_is_a_rules_file_for_the_operators(tmp_path):
    pytest.importorskip("open_data_contract_standard")
    contract = {"apiVersion": "v3.0.2", "kind": "DataContract", "id": "c", "version": "1", "status": "active",
                "schema": [{"name": "a", "properties": [{"name": "x", "required": True}]},
                           {"name": "b", "properties": [{"name": "y", "unique": True}]}]}
    (tmp_path / "contract.json").write_text(json.dumps(contract))
    block = load_rules("contract.json#b", base_dir=tmp_path)
    assert (block.path, block.rules, block.size) == (tmp_path / "contract.json#b", [{"type": "unique", "columns": ["y"]}], 1)
    with pytest.raises(ColaConfigError) as error:
        load_rules("contract.json", base_dir=tmp_path)
    assert str(error.value) == (
        "the contract has 2 schema objects ('a', 'b'); choose one with schema_name (or, for a rules file path, "
        "write it after '#': contract.yaml#orders)"
    )


def test_unreadable_rules_file(tmp_path):
    bad = tmp_path / "rules.json"
    bad.write_text('[{"type": "row_count", "min": 1,}]')
    with pytest.raises(ColaConfigError) as error:
        load_rules(str(bad))
    assert str(error.value).startswith(f"rules file '{bad}' is not valid JSON: ")


def test_failed_checks_are_listed_with_their_names():
    results = [
        {**ORDERS_FAIL_SUMMARY["results"][1], "check_name": "ids present"},
        ORDERS_FAIL_SUMMARY["results"][2],
        ORDERS_FAIL_SUMMARY["results"][0],
    ]
    assert describe_results(results, "fail") == (
        "  [FAIL] ids present: not_null(order_id): 1 NULL value (order_id: 1)\n"
        "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)"
    )
    assert describe_results(results, "warn") == ""


def test_the_failure_message_shows_the_samples_of_each_failed_check():
    with_samples = {**ORDERS_FAIL_SUMMARY["results"][1], "samples": [{"order_id": None, "amount": 5.0}]}
    assert describe_results([with_samples], "fail") == (
        "  [FAIL] not_null(order_id): 1 NULL value (order_id: 1)\n"
        '      e.g. {"order_id": null, "amount": 5.0}'
    )


def test_error_classes_tell_airflow_whether_to_retry():
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    assert issubclass(ColaConfigError, AirflowFailException)
    assert issubclass(ColaChecksFailed, AirflowFailException)
    assert issubclass(ColaJobRefused, AirflowFailException)  # the job refused its inputs: exit 2
    assert issubclass(ColaJobError, AirflowException) and not issubclass(ColaJobError, AirflowFailException)
    assert ColaChecksFailed("x", ORDERS_FAIL_SUMMARY).summary is ORDERS_FAIL_SUMMARY
    assert json.loads(json.dumps(ORDERS_FAIL_SUMMARY)) == ORDERS_FAIL_SUMMARY  # XCom-safe
    assert Path(REPO / "dags_examples" / "rules" / "orders.yaml").is_file()


REFLECT = [{"type": "expression", "expression": "reflect('java.lang.String', 'valueOf', order_id) IS NOT NULL"}]
REFUSED_REFLECT = (
    "invalid Cola rules: rules[0] (expression): 'expression' calls reflect() (it calls a Java method in the JVM): "
    "SQL that reaches outside the data is refused by default; for trusted rules only, run with "
    "allow_external_access=True (cola --allow-external-access)"
)


@pytest.mark.parametrize("operator_class", [ColaCheckOperator, ColaSplitOperator])
def test_allow_external_access_reaches_the_job_argv(operator_class, airflow_home, fake_submit_calls, monkeypatch):
    from cola_testenv import ORDERS, unactivated_path

    monkeypatch.setenv("PATH", unactivated_path())
    outputs = {"valid_output": "/v", "invalid_output": "/i"} if operator_class is ColaSplitOperator else {}
    arguments = {
        "rules": REFLECT, "source": {"path": str(ORDERS / "2024-01-01"), "format": "json"},
        "conn_id": "spark_local", "spark_binary": "spark3-submit", "env_vars": {"FAKE_SUBMIT_MODE": "silent"},
        **outputs,
    }
    # Off by default: the worker refuses the rule, naming the switch, and submits nothing.
    before = len(fake_submit_calls())
    with pytest.raises(ColaConfigError) as error:
        operator_class(task_id="closed", **arguments).execute(context={})
    assert str(error.value) == REFUSED_REFLECT
    assert len(fake_submit_calls()) == before

    operator = operator_class(task_id="trusted", allow_external_access=True, **arguments)
    with pytest.raises(ColaJobError):  # the fake job writes no results
        operator.execute(context={})
    argv = fake_submit_calls()[-1].split(" ")
    assert argv.count("--allow-external-access") == 1
    assert argv.index("--allow-external-access") == argv.index("--fail-exit-code") - 1
    assert not operator_class(task_id="default", **{**arguments, "rules": RULES}).allow_external_access


def test_allow_external_access_must_be_a_boolean():
    with pytest.raises(ValueError) as error:
        ColaCheckOperator(task_id="check", rules=RULES, source=SOURCE, allow_external_access="false")
    assert str(error.value) == "allow_external_access must be True or False, got 'false'"
    with pytest.raises(ValueError) as error:
        cola_check(rules=RULES, allow_external_access=1)(numbers)()
    assert str(error.value) == "allow_external_access must be True or False, got 1"


def test_a_source_query_reaching_outside_the_data_needs_the_switch():
    from airflow_provider_cola._rules import checked_source

    query = {"query": "SELECT reflect('java.lang.System', 'getenv', 'HOME') AS home"}
    assert checked_source(query, allow_external_access=True).query == query["query"]
    with pytest.raises(ColaConfigError) as error:
        checked_source(query)
    assert str(error.value) == (
        "invalid Cola source: source 'query' calls reflect() (it calls a Java method in the JVM): SQL that reaches "
        "outside the data is refused by default; for trusted rules only, run with allow_external_access=True "
        "(cola --allow-external-access)"
    )


def test_local_source_paths_are_checked_on_a_local_master(tmp_path):
    from airflow_provider_cola._rules import checked_local_path, checked_source

    missing = tmp_path / "missing"
    for path in (str(missing), f"file:{missing}", f"file://{missing}"):
        with pytest.raises(ColaConfigError) as error:
            checked_local_path(checked_source({"path": path}), "local[2]")
        assert str(error.value) == f"invalid Cola source: the path {path!r} does not exist on this machine"
    # Left to Spark: an existing path, a glob, other storage, a cluster's master, a table.
    for path in (str(tmp_path), f"{missing}/*.json", f"{missing}/day=[0-9]", "s3a://bucket/orders", "hdfs:///x"):
        assert checked_local_path(checked_source({"path": path}), "local") is None
    assert checked_local_path(checked_source({"path": str(missing)}), "yarn") is None
    assert checked_local_path(checked_source({"path": str(missing)}), "spark://127.0.0.1:7077") is None
    assert checked_local_path(checked_source({"table": "db.orders"}), "local") is None


class _FailingHook:
    binary = "spark-submit"
    master = "yarn"
    environment: dict[str, str] = {}

    def submit(self, application):
        raise ColaJobError("spark-submit exited with 1")

    def on_kill(self):
        pass


@pytest.mark.parametrize(
    ("left", "raised"),
    [
        ('{"severity": "pa', ColaJobError),
        (json.dumps({"error": {"exit_code": 2, "kind": "source", "message": "no such table db.orders"}}), ColaJobRefused),
    ],
)
def test_a_failed_submit_leaves_no_results_file_behind(tmp_path, left, raised):
    from airflow_provider_cola.operators._results import ResultsFile
    from airflow_provider_cola.operators._runs import submit_job

    operator = ColaCheckOperator(task_id="check", rules=RULES, source=SOURCE, results_uri=str(tmp_path / "shared"))
    (tmp_path / "shared").mkdir()
    results = ResultsFile(tmp_path, operator.results_uri)
    Path(results.target).write_text(left, encoding="utf-8")
    with pytest.raises(raised):
        submit_job(operator, _FailingHook(), [results])
    assert list((tmp_path / "shared").iterdir()) == []


def test_secret_named_numbers_are_rendered_as_masked_text():
    from airflow.sdk._shared.secrets_masker import redact

    operator = ColaCheckOperator(
        task_id="check",
        rules=RULES,
        source={**SOURCE, "options": {"password": 55512345, "header": True}},
        conf={"spark.myapp.kEy": 987654322, "spark.sql.shuffle.partitions": 2},
        env_vars={"APP_TOKEN": 44412345},
    )
    operator._mask_secrets()
    assert operator.conf == {"spark.myapp.kEy": "987654322", "spark.sql.shuffle.partitions": 2}
    assert operator.env_vars == {"APP_TOKEN": "44412345"}
    assert operator.source["options"] == {"password": "55512345", "header": True}
    assert redact(operator.conf, "conf") == {"spark.myapp.kEy": "***", "spark.sql.shuffle.partitions": 2}
    assert redact(operator.source, "source")["options"] == {"password": "***", "header": True}


HTML_IN_CLUSTER_MODE = (
    "html_report cannot be used in cluster deploy mode: the driver runs on a cluster node and would write the "
    "page there, where this worker can neither remove an earlier page nor serve it; use client deploy mode, or "
    "a spark_connect connection (the page is then written in this worker)"
)


@pytest.mark.parametrize("operator_class", [ColaCheckOperator, ColaSplitOperator])
@pytest.mark.parametrize("given_in", ["argument", "connection"])
def test_html_report_is_refused_in_cluster_deploy_mode_before_any_submit(
    operator_class, given_in, tmp_path, monkeypatch
):
    # Even with results_uri, which cluster deploy mode needs: the page is the problem.
    arguments = {"rules": RULES, "source": SOURCE, "html_report": str(tmp_path / "report.html"),
                 "results_uri": str(tmp_path)}
    if operator_class is ColaSplitOperator:
        arguments.update(valid_output="/v", invalid_output="/i")
    if given_in == "argument":
        arguments["deploy_mode"] = "cluster"
    else:  # as the hook reads it: the connection's deploy-mode extra
        connection = {"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}}
        monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN_CLUSTER", json.dumps(connection))
        arguments["conn_id"] = "spark_yarn_cluster"
    operator = operator_class(task_id="check", **arguments)
    with pytest.raises(ColaConfigError) as error:
        operator.execute(context={})
    assert str(error.value) == HTML_IN_CLUSTER_MODE
    assert operator._hook is None  # no hook was even built


def test_a_page_the_connect_client_cannot_write_is_a_warning(tmp_path, monkeypatch, capsys):
    # The failure is caused for real in test_cli_main (the run makes the page's folder a file);
    # no DAG here can do that to the page of an operator run over Spark Connect, so this
    # checks only how the operator takes a write_report_page that raises.
    from airflow_provider_cola import links
    from cola_core.errors import ColaOutputError

    page = tmp_path / "report.html"
    reason = f"cannot write the page {str(page)!r}: [Errno 28] No space left on device"

    def failing(path, spark, spec, outcome):
        raise ColaOutputError(reason)

    monkeypatch.setattr(links, "write_report_page", failing)
    operator = ColaCheckOperator(task_id="check", rules=RULES, source=SOURCE)
    capsys.readouterr()
    assert operator._lifecycle.write_page(page, None, None, None) is False  # type: ignore[arg-type]
    # With its traceback: the first line alone hides the error's type and where it came from.
    [line, *traceback] = capsys.readouterr().out.splitlines()
    assert f"[warning  ] The HTML report was not written: {reason} " in line
    assert traceback[0] == "Traceback (most recent call last):"
    assert traceback[-1] == f"cola_core.errors.ColaOutputError: {reason}"



@pytest.mark.parametrize(
    ("mode", "message"),
    [
        # Client mode, exit 2: the results file's words, not the log's.
        ("refused_here", "its inputs (exit code 2, so it is not retried): the results file says: no such table db.orders"),
        # As in cluster mode (spark-submit's exit status is not the job's): the file says it.
        ("refused", "its inputs (exit code 2, so it is not retried): cannot read the json at /data/gone: no such path"),
        # The real job entry refusing its command line: argparse's error, in its record too.
        ("refused_early", "its command line (exit code 2, so it is not retried): argument --samples: invalid int "
                          "value: 'x'"),
    ],
)
def test_a_refused_job_is_known_by_the_record_it_writes(mode, message, airflow_home, fake_submit_calls, monkeypatch):
    from cola_testenv import ORDERS, unactivated_path

    monkeypatch.setenv("PATH", unactivated_path())
    operator = ColaCheckOperator(
        task_id="refused", rules=RULES, source={"path": str(ORDERS / "2024-01-01"), "format": "json"},
        conn_id="spark_local", spark_binary="spark3-submit", env_vars={"FAKE_SUBMIT_MODE": mode},
    )
    with pytest.raises(ColaJobRefused) as error:
        operator.execute(context={})
    assert str(error.value) == f"the Cola job refused {message}"
    assert error.value.kind == {"refused_early": "usage"}.get(mode, "source")
    assert operator._hook is not None and operator._hook.exit_code == (1 if mode == "refused" else 2)
    if mode == "refused_early":
        # argparse's own lines are in the log, as the job printed them; the task read none of them.
        assert list(operator._hook._cola_log)[-1] == "cola check: error: argument --samples: invalid int value: 'x'"


def test_a_job_that_exits_2_without_a_record_is_a_crash_that_is_retried(airflow_home, fake_submit_calls, monkeypatch):
    """Its log is never read for a refusal: a job that could write no record (its results folder
    gone) is known by its log tail only, and retried."""
    from cola_testenv import ORDERS, unactivated_path

    monkeypatch.setenv("PATH", unactivated_path())
    operator = ColaCheckOperator(
        task_id="refused", rules=RULES, source={"path": str(ORDERS / "2024-01-01"), "format": "json"},
        conn_id="spark_local", spark_binary="spark3-submit", env_vars={"FAKE_SUBMIT_MODE": "refused_unwritten"},
    )
    with pytest.raises(ColaJobError) as error:
        operator.execute(context={})
    assert not isinstance(error.value, ColaJobRefused)
    assert str(error.value).startswith("the Cola Spark job failed (spark-submit exit code 2).\n")
    assert str(error.value).endswith("cola: error: cannot write the results file: the disk is full")


# The operator's own arguments; every other one of its signature is a spark-submit argument.
_COLA_ARGUMENTS = (
    "self", "rules", "source", "conn_id", "on_failure", "branch", "on_quality", "on_quality_severity", "report",
    "pipeline", "history", "dataset", "html_report", "results_uri", "samples", "allow_external_access", "kwargs",
)


def test_the_spark_submit_arguments_are_declared_once_and_the_signature_agrees():
    import inspect

    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from airflow_provider_cola.operators._runs import _SUBMIT_ONLY
    from airflow_provider_cola.operators._submit_args import SUBMIT_ARGUMENTS

    parameters = inspect.signature(ColaCheckOperator.__init__).parameters
    declared = {argument.name: argument for argument in SUBMIT_ARGUMENTS}
    assert [name for name in parameters if name not in _COLA_ARGUMENTS] == list(declared)
    for name, argument in declared.items():
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == argument.default, name
    # Each is SparkSubmitHook's argument of the same name, with the same default (but for the
    # application's name, which the operator always gives: cola-<dag_id>-<task_id> by default).
    hook_parameters = inspect.signature(SparkSubmitHook.__init__).parameters
    for name, argument in declared.items():
        assert name in hook_parameters, name
        assert hook_parameters[name].default == argument.default or name == "name", name
    # Derived: the templated ones end the template fields; over Spark Connect, the others refused.
    templated = tuple(name for name, argument in declared.items() if argument.templated)
    assert ColaCheckOperator.template_fields[-len(templated):] == templated
    assert set(_SUBMIT_ONLY) == {*declared, "results_uri"} - {"conf", "name", "verbose", "status_poll_interval"}
    operator = ColaCheckOperator(task_id="check", rules=RULES, source=SOURCE, executor_memory="2g", verbose=True)
    assert (operator.executor_memory, operator.verbose, operator.jars) == ("2g", True, None)


def test_the_decorators_arguments_are_declared_once_on_cola_check():
    # The operator behind @cola_check takes cola_check's keywords by name from its signature:
    # built by hand, it gets their defaults; without rules, the error calling cola_check gives.
    import inspect

    from airflow_provider_cola.decorators.cola import _ColaCheckDecoratedOperator

    def numbers():
        return None

    keywords = [
        name for name, parameter in inspect.signature(cola_check).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    assert keywords == [
        "rules", "conn_id", "on_failure", "branch", "on_quality", "on_quality_severity", "conf", "samples",
        "allow_external_access", "valid_output", "invalid_output", "annotate", "quarantine_key", "annotate_valid",
        "checkpoint", "history", "dataset", "html_report",
    ]
    built = _ColaCheckDecoratedOperator(task_id="by_hand", python_callable=numbers, rules=RULES, samples=3)
    assert {name: getattr(built, name) for name in keywords} == {
        "rules": RULES, "conn_id": None, "on_failure": "fail", "branch": None, "on_quality": (),
        "on_quality_severity": "fail", "conf": None, "samples": 3, "allow_external_access": False,
        "valid_output": None, "invalid_output": None, "annotate": None, "quarantine_key": None,
        "annotate_valid": False, "checkpoint": None, "history": None, "dataset": None, "html_report": None,
    }
    with pytest.raises(TypeError) as missing:
        _ColaCheckDecoratedOperator(task_id="no_rules", python_callable=numbers)
    assert str(missing.value) == "@cola_check missing required keyword argument: 'rules'"
    with pytest.raises(TypeError) as unknown:
        _ColaCheckDecoratedOperator(task_id="typo", python_callable=numbers, rules=RULES, sample=3)
    assert str(unknown.value) == (
        "Invalid arguments were passed to _ColaCheckDecoratedOperator (task_id: typo). Invalid arguments were:\n"
        "**kwargs: {'sample': 3}"
    )

"""The ``cola`` command: the real command as a subprocess, and ``main()`` in-process for details.

Each subprocess that reaches Spark starts its own JVM (several seconds), so only the three
main journeys run that way: a warn-only check, a failing check (through the installed ``cola``
script, with a YAML rules file) and a split. Errors caught before Spark starts run as
subprocesses too (they are fast); the rest runs ``main()`` against the test session.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cola_core import CheckResult, Cola
from cola_core.cli.main import main
from cola_core.language.files import read_rules_file
from cola_core.plan.cost import SparkCost
from cola_core.report.results import render_table, summarise
from cola_core.storage.readwrite import missing_local_path, read_source
from cola_helpers import DATA, ORDERS_ARGV, ORDERS_FAIL_COST, broken_history_file, cost_taken, summary_outline

# What the runs below cost Spark: (jobs, stages that ran, rows read, bytes read).
COST_SPLIT = (6, 6, 20, 4315)
# A temporary view of rows made in the driver: nothing is read from storage.
COST_QUERY = (1, 2, 0, 0)

# One core, no UI, one shuffle partition: the smallest JVM that runs these jobs.
LIGHT_SPARK = ["--master", "local[1]", "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=1"]


def engine_summary(spark, rules_file: str, **counts: int) -> dict:
    """What the engine itself says for the orders fixture: the command must write exactly this."""
    df = read_source(spark, {"path": str(DATA / "orders.csv"), "format": "csv",
                             "options": {"header": True, "inferSchema": True}})
    return summarise(Cola().run(df, read_rules_file(DATA / rules_file)), **counts)


def run_cola(*arguments: str, cwd: Path, program: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command with the test interpreter, from a folder where nothing else lives."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("NO_COLOR", None)
    command = program or [sys.executable, "-m", "cola_core"]
    return subprocess.run(
        [*command, *arguments], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


# -- the real command, through Spark -----------------------------------------------------------


@pytest.mark.spark
def test_check_with_only_a_warn_exits_0_and_writes_results_and_report(spark, tmp_path):
    results, report = tmp_path / "out" / "results.json", tmp_path / "report"
    report_config = json.dumps({"path": str(report), "format": "csv", "options": {"header": True}})
    done = run_cola(
        "check", "--rules", str(DATA / "rules_warn.json"), *ORDERS_ARGV, "--results", str(results),
        "--report", report_config, "--pipeline", "orders_daily", *LIGHT_SPARK, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    expected = engine_summary(spark, "rules_warn.json")
    assert summary_outline(expected) == [
        ("not_null", "pass", 0, None, "not_null(order_id)"),
        ("row_count", "pass", 0, None, "row_count"),
        ("missing_count", "warn", 0, 1, "missing_count(email)"),
    ]
    written, cost = cost_taken(json.loads(results.read_text()))
    assert written == expected
    # Spark's own count: the CSV's header line and the schema's inference (2 jobs), the
    # block's aggregates, the NULL count's rows, and the report written.
    assert cost == (5, 5, 14, 645)
    assert (expected["severity"], expected["passed"], expected["counts"]) == ("warn", True, {"pass": 2, "warn": 1, "fail": 0})
    engine_results = [CheckResult.from_dict(item) for item in expected["results"]]
    table = render_table(engine_results, cost=SparkCost.from_dict(json.loads(results.read_text())["cost"]))
    assert done.stdout == table + "\n"  # piped, so plain: no colour codes
    # No Spark banner, INFO line or progress bar: only the notice the JVM prints on every start.
    assert done.stderr == "WARNING: Using incubator modules: jdk.incubator.vector\n"
    assert done.stdout.splitlines()[0] == "SEVERITY  RULE           CODE                  VALUE  FAILED  MESSAGE"
    assert done.stdout.splitlines()[3].startswith("WARN      email present  missing_count(email)      1       0  ")
    rows = spark.read.csv(str(report), header=True).collect()
    assert [(r.pipeline, r.rule_type, r.check_name, r.code, r.severity, r.passed, r.failed_count, r.metric_value)
            for r in rows] == [
        ("orders_daily", "not_null", None, "not_null(order_id)", "pass", "true", "0", None),
        ("orders_daily", "row_count", None, "row_count", "pass", "true", "0", None),
        ("orders_daily", "missing_count", "email present", "missing_count(email)", "warn", "true", "0", "1.0"),
    ]
    assert [r.message for r in rows] == [item["message"] for item in expected["results"]]
    assert len({r.validated_at for r in rows}) == 1


@pytest.mark.spark
def test_a_failed_check_exits_1_and_still_writes_the_report(spark, tmp_path):
    results, report = tmp_path / "results.json", tmp_path / "report"
    started = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)
    cola_script = [str(Path(sys.executable).with_name("cola"))]  # the installed console script
    done = run_cola(
        "check", "--rules", str(DATA / "rules_fail.yaml"), *ORDERS_ARGV, "--results", str(results),
        "--report", str(report), *LIGHT_SPARK, cwd=tmp_path, program=cola_script,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    expected = engine_summary(spark, "rules_fail.yaml")
    assert summary_outline(expected) == [
        ("unique", "fail", 1, None, "unique(order_id)"),
        ("range", "fail", 1, None, "AMOUNT_NEGATIVE"),
        ("avg", "pass", 0, 16.75, "avg(amount)"),
    ]
    assert (expected["severity"], expected["passed"], expected["counts"]) == ("fail", False, {"pass": 1, "warn": 0, "fail": 2})
    written, cost = cost_taken(json.loads(results.read_text()))
    jobs, stages, rows, size = ORDERS_FAIL_COST
    assert (written, cost) == (expected, (jobs + 1, stages + 1, rows, size))  # and the report's write
    assert [line[:51] for line in done.stdout.splitlines()[1:4]] == [
        "FAIL      unique  unique(order_id)      -       1  ",
        "FAIL      range   AMOUNT_NEGATIVE       -       1  ",
        "PASS      avg     avg(amount)       16.75       0  ",
    ]
    report_rows = [row.asDict() for row in spark.read.parquet(str(report)).collect()]
    assert [{k: v for k, v in row.items() if k != "validated_at"} for row in report_rows] == [
        {"pipeline": None, "rule_type": item["rule_type"], "check_name": None, "code": item["code"],
         "dimension": None, "severity": item["severity"], "passed": item["passed"], "failed_count": item["failed_count"],
         "metric_value": item["metric_value"], "message": item["message"], "rule_id": item["rule_id"]}
        for item in expected["results"]
    ]
    finished = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    assert all(started <= row["validated_at"] <= finished for row in report_rows)  # UTC session


@pytest.mark.spark
def test_split_writes_both_outputs_and_counts_them(spark, tmp_path):
    results = tmp_path / "results.json"
    valid, invalid = tmp_path / "valid", tmp_path / "invalid"
    done = run_cola(
        "split", "--rules", str(DATA / "rules_split.json"), *ORDERS_ARGV, "--results", str(results),
        "--valid-output", str(valid),
        "--invalid-output", json.dumps({"path": str(invalid), "format": "json", "mode": "overwrite"}),
        "--annotate", "codes", "--fail-exit-code", "0", *LIGHT_SPARK[2:], "--verbose", cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]  # checks failed, but --fail-exit-code 0
    assert "; Spark 4" in done.stderr or "; Spark 3" in done.stderr
    assert ", master local[*]\n" in done.stderr  # run directly with no master anywhere: local[*]
    assert done.stdout.splitlines()[-3:-1] == ["4 results: 1 pass, 0 warn, 3 fail", "split: 2 valid rows, 4 invalid rows"]
    assert done.stdout.splitlines()[-1] == f"Spark cost: {SparkCost.from_dict(json.loads(results.read_text())['cost']).describe()}"
    expected = engine_summary(spark, "rules_split.json", valid_count=2, invalid_count=4)
    assert summary_outline(expected) == [
        ("not_null", "fail", 1, None, "not_null(email)"),
        ("range", "fail", 1, None, "AMOUNT_NEGATIVE"),
        ("unique", "fail", 1, None, "unique(order_id)"),
        ("row_count", "pass", 0, None, "row_count"),
    ]
    assert (expected["severity"], expected["passed"], expected["counts"]) == ("fail", False, {"pass": 1, "warn": 0, "fail": 3})
    written, cost = cost_taken(json.loads(results.read_text()))
    assert (written, cost) == (expected, COST_SPLIT)
    valid_rows = spark.read.parquet(str(valid))
    assert valid_rows.columns == ["order_id", "customer", "email", "amount", "status"]
    assert sorted(row.customer for row in valid_rows.collect()) == ["ana", "bruno"]
    invalid_rows = sorted(
        (row.order_id, row.customer, tuple(row.codes)) for row in spark.read.json(str(invalid)).collect()
    )
    assert invalid_rows == [
        (3, "carla", ("not_null(email)",)),
        (4, "dan", ("AMOUNT_NEGATIVE",)),
        (5, "eva", ("unique(order_id)",)),
        (5, "eva", ("unique(order_id)",)),
    ]


@pytest.mark.spark
def test_split_with_samples_and_a_quarantine_key(spark, tmp_path):
    results = tmp_path / "results.json"
    valid, invalid = tmp_path / "valid", tmp_path / "invalid"
    done = run_cola(
        "split", "--rules", str(DATA / "rules_split.json"), *ORDERS_ARGV, "--results", str(results),
        "--valid-output", str(valid), "--invalid-output", str(invalid), "--annotate", "codes",
        "--quarantine-key", "status", "--samples", "1", *LIGHT_SPARK, cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stdout.splitlines()[-2] == "split: 0 valid rows, 6 invalid rows"
    summary = json.loads(results.read_text())
    assert [(r["code"], r.get("samples")) for r in summary["results"]] == [
        ("not_null(email)", [{"order_id": 3, "customer": "carla", "email": None, "amount": 15.0, "status": "paid"}]),
        ("AMOUNT_NEGATIVE", [{"order_id": 4, "customer": "dan", "email": "dan@example.com", "amount": -5.0,
                              "status": "refunded"}]),
        ("unique(order_id)", [{"order_id": 5, "customer": "eva", "email": "eva@example.com", "amount": 30.0,
                               "status": "paid"}]),
        ("row_count", None),
    ]
    # Ana and Bruno break no rule, but share the status 'paid' with rejected rows.
    assert sorted((row.order_id, tuple(row.codes)) for row in spark.read.parquet(str(invalid)).collect()) == [
        (1, ("quarantine_key(status)",)), (2, ("quarantine_key(status)",)), (3, ("not_null(email)",)),
        (4, ("AMOUNT_NEGATIVE",)), (5, ("unique(order_id)",)), (5, ("unique(order_id)",)),
    ]


# -- the real command, errors found before Spark starts (fast) --------------------------------


def test_a_rule_error_exits_2_with_the_message_and_no_traceback(tmp_path):
    results = tmp_path / "results.json"
    done = run_cola(
        "check", "--rules", str(DATA / "rules_bad.json"), *ORDERS_ARGV, "--results", str(results), cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "cola: error: rules[1] (range): missing required parameter 'column'\n"
    # The refusal is written down, so that a caller who only sees the file (cluster deploy
    # mode) knows the run was refused, not crashed, and does not retry it.
    assert json.loads(results.read_text()) == {
        "error": {"exit_code": 2, "kind": "rules", "message": "rules[1] (range): missing required parameter 'column'"}
    }


def test_invalid_yaml_exits_2_with_line_and_column(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text("- type: not_null\n  columns: [id\n- type: row_count\n")
    done = run_cola("check", "--rules", str(rules), "--table", "orders", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"cola: error: rules file {str(rules)!r} is not valid YAML: expected ',' or ']', but got ':' "
        "(line 3, column 7)\n    - type: row_count\n          ^\n"
    )


def test_usage_errors_exit_2(tmp_path):
    done = run_cola("check", "--rules", str(DATA / "rules_warn.json"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "cola check: error: one of the arguments --input --table --query is required"
    # A usage error is a refusal the job writes down too: its caller reads the record, not the log.
    results = tmp_path / "results.json"
    results.write_text('{"severity": "pass"}')  # an earlier run's: replaced by this refusal
    done = run_cola("check", "--rules", "r.json", "--table", "t", "--samples", "x", "--results", str(results),
                    cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == "cola check: error: argument --samples: invalid int value: 'x'"
    assert json.loads(results.read_text()) == {
        "error": {"exit_code": 2, "kind": "usage", "message": "argument --samples: invalid int value: 'x'"}
    }
    done = run_cola("check", "--rules", "r.json", "--input", "x", "--format", "xlsx", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2, "cola: error: unknown source format 'xlsx'; use one of parquet, csv, json, orc, delta\n"
    )


# -- main() in-process, on the test session ----------------------------------------------------


def test_usage_details(capsys):
    assert main([]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "cola: error: the following arguments are required: {check,split,profile,suggest,history,schema}"
    )
    assert main(["check", "--rules", "r.json", "--table", "t", "--format", "csv"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "cola: error: --format only applies with --input"
    assert main(["check", "--rules", "r.json", "--table", "t", "--option", "a=b"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "cola: error: --option only applies with --input"
    assert main(["check", "--rules", "r.json", "--input", "x", "--option", "header"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "cola check: error: argument --option: expected KEY=VALUE, got 'header'"
    )
    assert main(["split", "--rules", "r.json", "--table", "t", "--valid-output", "v"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "cola split: error: the following arguments are required: --invalid-output"
    )
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == "cola 0.1.0\n"


def test_bad_inputs_before_spark(tmp_path, capsys):
    missing = tmp_path / "missing.json"
    assert main(["check", "--rules", str(missing), "--table", "t"]) == 2
    assert capsys.readouterr().err == (
        f"cola: error: cannot read rules file {str(missing)!r}: [Errno 2] No such file or directory: {str(missing)!r}\n"
    )
    broken = tmp_path / "rules.json"
    broken.write_text('[{"type": "row_count",}]')
    assert main(["check", "--rules", str(broken), "--table", "t"]) == 2
    assert capsys.readouterr().err == (
        f"cola: error: rules file {str(broken)!r} is not valid JSON: Expecting property name enclosed in double "
        "quotes (line 1, column 23)\n    [{\"type\": \"row_count\",}]\n                          ^\n"
    )
    rules = str(DATA / "rules_warn.json")
    assert main(["check", "--rules", rules, "--table", "t", "--report", '{"path": "/r", "mode": overwrite}']) == 2
    assert capsys.readouterr().err == (
        "cola: error: --report is not valid JSON: Expecting value (line 1, column 24)\n"
    )
    assert main(["check", "--rules", rules, "--table", "t", "--report", '{"path": "/r", "mode": "upsert"}']) == 2
    assert capsys.readouterr().err == (
        "cola: error: --report: output 'mode' must be one of append, overwrite, error, errorifexists, ignore, "
        "got 'upsert'\n"
    )
    assert main(["check", "--rules", rules, "--query", "DELETE FROM orders"]) == 2
    assert capsys.readouterr().err == (
        "cola: error: source 'query' must be a read-only SELECT or WITH query, but starts with 'DELETE'; "
        "Spark would run it as soon as it is parsed\n"
    )
    assert main(["check", "--rules", rules, "--table", "t", "--results", "s3://bucket/results.json"]) == 2
    assert capsys.readouterr().err == (
        "cola: error: --results must be a file the driver can write (a local path or a file: URI), "
        "got 's3://bucket/results.json'\n"
    )


@pytest.mark.spark
def test_errors_found_with_spark_exit_2(spark, tmp_path, capsys):
    rules = str(DATA / "rules_warn.json")
    missing, stale = str(tmp_path / "nope"), tmp_path / "results.json"
    stale.write_text('{"severity": "pass"}')  # left by an earlier run
    assert main(["check", "--rules", rules, "--input", missing, "--results", str(stale)]) == 2
    assert capsys.readouterr().err == f"cola: error: input path {missing!r} does not exist\n"
    # Never mistaken for this failed run's results: the earlier file is replaced by the refusal.
    assert json.loads(stale.read_text()) == {
        "error": {"exit_code": 2, "kind": "source", "message": f"input path {missing!r} does not exist"}
    }
    spark.createDataFrame([(1,)], "id int").createOrReplaceTempView("cola_cli_ids")
    assert main(["check", "--rules", rules, "--table", "cola_cli_ids"]) == 2
    assert capsys.readouterr().err == (
        "cola: error: rules[0] (not_null): column 'order_id' does not exist; the DataFrame has id\n"
    )
    sql_rules = tmp_path / "sql.json"
    sql_rules.write_text(json.dumps([{"type": "sql", "query": "SELECT count(nope) = 0 FROM _validation_df"}]))
    assert main(["check", "--rules", str(sql_rules), "--table", "cola_cli_ids"]) == 2
    # pyspark logs the analysis error on stderr first; the command's own message is the last line.
    assert capsys.readouterr().err.splitlines()[-1] == (
        "cola: error: rules[0] (sql): Spark cannot analyse 'query': [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, "
        "variable, or function "
        "parameter with name `nope` cannot be resolved. Did you mean one of the following? [`id`]. SQLSTATE: 42703"
    )


@pytest.mark.spark
def test_an_odcs_contract_is_a_rules_file(spark, tmp_path, capsys):
    pytest.importorskip("open_data_contract_standard")
    contract = {
        "apiVersion": "v3.0.2", "kind": "DataContract", "id": "ids", "version": "1", "status": "active",
        "schema": [
            {"name": "other", "properties": [{"name": "x", "required": True}]},
            {"name": "ids", "properties": [
                {"name": "id", "logicalType": "integer", "required": True,
                 "quality": [{"id": "ids-few-nulls", "metric": "nullValues", "mustBeLessOrEqualTo": 1}]},
                {"name": "label", "description": "not in the data", "required": True},
            ],
             "quality": [{"type": "text", "description": "free text"}]},
        ],
    }
    path, results = tmp_path / "ids.odcs.json", tmp_path / "results.json"
    path.write_text(json.dumps(contract))
    spark.createDataFrame([(1,), (None,)], "id int").createOrReplaceTempView("cola_cli_contract")
    gap = "cola: warning: no rule checks these parts of the contract: schema[1].quality[0] (text, no single mustBe* operator)\n"
    # The property 'label' is not in the data: refused before any job, naming its place in the
    # contract (the gaps are said with a run's results, and there are none).
    assert main(["check", "--rules", f"{path}#ids", "--table", "cola_cli_contract"]) == 2
    assert capsys.readouterr().err == (
        "cola: error: rules[3] (not_null) from schema[1].properties[1]: column 'label' does not exist; the "
        "DataFrame has id\n"
    )
    contract["schema"][1]["properties"].pop()
    path.write_text(json.dumps(contract))
    # Said once, after the results table (stdout and stderr into one stream, as a task log has them).
    both = io.StringIO()
    with contextlib.redirect_stdout(both), contextlib.redirect_stderr(both):
        code = main(["check", "--rules", f"{path}#ids", "--table", "cola_cli_contract", "--results", str(results)])
    assert code == 1
    assert both.getvalue().count("no rule checks") == 1
    assert re.search(r"\n3 results: 2 pass, 0 warn, 1 fail\nSpark cost: [^\n]*\n$", both.getvalue().removesuffix(gap))
    assert both.getvalue().endswith(gap)
    assert json.loads(results.read_text())["contract_gaps"] == [
        "schema[1].quality[0] (text, no single mustBe* operator)"
    ]
    written = json.loads(results.read_text())["results"]
    assert [(item["rule_id"], item["severity"]) for item in written][1:] == [
        ("not_null:59c2d2364a8b", "fail"), ("ids-few-nulls", "pass")
    ]


@pytest.mark.spark
def test_an_existing_output_in_error_mode_stops_the_split_before_anything_is_written(spark, tmp_path, capsys):
    valid, invalid, results = tmp_path / "valid", tmp_path / "invalid", tmp_path / "results.json"
    invalid.mkdir()
    code = main([
        "split", "--rules", str(DATA / "rules_split.json"), *ORDERS_ARGV, "--results", str(results),
        "--valid-output", str(valid), "--invalid-output", json.dumps({"path": str(invalid), "mode": "error"}),
    ])
    assert code == 2
    assert capsys.readouterr().err == (
        f"cola: error: output {invalid} already exists and its mode is 'error'; "
        'set "mode" to "overwrite" or "append", or choose another target\n'
    )
    assert not valid.exists()
    assert json.loads(results.read_text()) == {"error": {"exit_code": 2, "kind": "output", "message": (
        f"output {invalid} already exists and its mode is 'error'; "
        'set "mode" to "overwrite" or "append", or choose another target'
    )}}


@pytest.mark.spark
def test_a_clashing_annotate_column_is_refused(spark, tmp_path, capsys):
    code = main([
        "split", "--rules", str(DATA / "rules_split.json"), *ORDERS_ARGV, "--valid-output", str(tmp_path / "v"),
        "--invalid-output", str(tmp_path / "i"), "--annotate", "status",
    ])
    assert code == 2
    assert capsys.readouterr().err == (
        "cola: error: annotate column 'status' already exists in the DataFrame; choose another name\n"
    )
    assert not (tmp_path / "v").exists()


@pytest.mark.spark
def test_table_and_query_sources_and_the_fail_exit_code(spark, tmp_path, capsys):
    spark.createDataFrame([(1, 5.0), (2, None)], "id int, amount double").createOrReplaceTempView("cola_cli_amounts")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"type": "not_null", "columns": ["amount"]}]))
    results = tmp_path / "results.json"
    assert main(["check", "--rules", str(rules), "--table", "cola_cli_amounts", "--results", str(results)]) == 1
    assert json.loads(results.read_text())["counts"] == {"pass": 0, "warn": 0, "fail": 1}
    assert main(["check", "--rules", str(rules), "--table", "cola_cli_amounts", "--fail-exit-code", "7"]) == 7
    query = "SELECT * FROM cola_cli_amounts WHERE amount IS NOT NULL"
    assert main(["check", "--rules", str(rules), "--query", query, "--results", str(results),
                 "--fail-exit-code", "7"]) == 0
    assert cost_taken(json.loads(results.read_text())) == ({
        "severity": "pass", "passed": True, "counts": {"pass": 1, "warn": 0, "fail": 0},
        "results": [{"rule_type": "not_null", "passed": True, "message": "not_null(amount): no NULL values",
                     "failed_count": 0, "metric_value": None, "severity": "pass", "check_name": None,
                     "code": "not_null(amount)", "rule_id": "not_null:6cbda05100ec", "rows_checked": 1}],
    }, COST_QUERY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "rules.json"]  # no partial files left
    capsys.readouterr()


@pytest.mark.spark
def test_the_table_is_coloured_on_a_terminal_only(spark, tmp_path, monkeypatch):
    spark.createDataFrame([(1,)], "id int").createOrReplaceTempView("cola_cli_tty")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"type": "not_null", "columns": ["id"]}]))
    arguments = ["check", "--rules", str(rules), "--table", "cola_cli_tty"]
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    master, replica = os.openpty()  # a real terminal device, as a person's shell would give
    try:
        with open(replica, "w", closefd=False) as terminal:
            monkeypatch.setattr(sys, "stdout", terminal)
            assert main(arguments) == 0
            monkeypatch.setenv("NO_COLOR", "1")
            assert main(arguments) == 0
        chunks = []
        while select.select([master], [], [], 0.5)[0]:  # a pty hands its output over in pieces
            chunks.append(os.read(master, 65536))
        shown = b"".join(chunks).decode()
    finally:
        os.close(master)
        os.close(replica)
    coloured, plain = shown.split("1 result: 1 pass, 0 warn, 0 fail", 1)
    assert "\033[32mPASS    \033[0m  not_null" in coloured
    assert "\033" not in plain and "PASS      not_null" in plain


@pytest.fixture
def custom_checks(tmp_path, monkeypatch):
    """A package of custom checks on sys.path; registrations are undone after the test."""
    from cola_core.ruleset import registry

    monkeypatch.setattr(registry, "_registered", {})
    package = tmp_path / "plugins" / "cli_custom_checks"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from cola_core import BaseCheck, CheckResult\n"
        "from cola_core.ruleset.registry import register_check\n\n"
        "@register_check('always_fine')\n"
        "class AlwaysFine(BaseCheck):\n"
        "    def run(self, df):\n"
        "        return CheckResult(self.rule_type, True, 'fine')\n\n"
        "@register_check('buggy')\n"
        "class Buggy(BaseCheck):\n"
        "    def run(self, df):\n"
        "        raise RuntimeError('bug in a custom check')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    yield "cli_custom_checks"
    sys.modules.pop("cli_custom_checks", None)


@pytest.mark.spark
def test_custom_checks_are_loaded_with_checks(spark, tmp_path, custom_checks, capsys):
    spark.createDataFrame([(1,)], "id int").createOrReplaceTempView("cola_cli_custom")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"type": "always_fine"}]))
    arguments = ["check", "--rules", str(rules), "--table", "cola_cli_custom"]
    assert main(arguments) == 2  # not loaded: an unknown type
    assert capsys.readouterr().err.startswith("cola: error: rules[0] (always_fine): unknown rule type 'always_fine'")
    assert main([*arguments, "--checks", custom_checks]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "PASS      always_fine  always_fine      -       0  fine"
    assert main([*arguments, "--checks", "no_such_checks"]) == 2
    assert capsys.readouterr().err == (
        "cola: error: cannot load checks from 'no_such_checks': No module named 'no_such_checks'\n"
    )


@pytest.mark.spark
def test_an_unexpected_error_exits_3_with_its_traceback(spark, tmp_path, custom_checks, capsys):
    spark.createDataFrame([(1,)], "id int").createOrReplaceTempView("cola_cli_buggy")
    rules, results = tmp_path / "rules.json", tmp_path / "results.json"
    rules.write_text(json.dumps([{"type": "buggy"}]))
    code = main(["check", "--rules", str(rules), "--table", "cola_cli_buggy", "--checks", custom_checks,
                 "--results", str(results), "--fail-exit-code", "0"])
    assert code == 3  # never 0, whatever --fail-exit-code says: a crash is not a data failure
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1] == "RuntimeError: bug in a custom check"
    assert not results.exists()


@pytest.mark.spark
def test_a_rule_that_fails_on_the_data_is_a_failed_result_and_stops_a_split_before_it_is_written(spark, tmp_path, capsys):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"type": "expression", "expression": "id / (id - id) > 0"},
                                 {"type": "not_null", "columns": ["id"]}]))
    query = ["--query", "SELECT * FROM VALUES (1), (2) AS t(id)"]
    results = tmp_path / "results.json"
    division = ("[DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL "
                "instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22012")
    assert main(["check", "--rules", str(rules), *query, "--results", str(results)]) == 1
    summary = json.loads(results.read_text())
    assert [(r["severity"], r["message"]) for r in summary["results"]] == [
        ("fail", "expression(id / (id - id) > 0): Spark could not evaluate the rule on this data: " + division),
        ("pass", "not_null(id): no NULL values"),
    ]
    valid, invalid = tmp_path / "valid", tmp_path / "invalid"
    code = main(["split", "--rules", str(rules), *query, "--results", str(results),
                 "--valid-output", str(valid), "--invalid-output", str(invalid)])
    assert code == 2
    refusal = ("the split cannot be written, as a row rule fails on the data: expression(id / (id - id) > 0): "
               f"Spark could not evaluate the rule on this data: {division}")
    assert capsys.readouterr().err.splitlines()[-1] == f"cola: error: {refusal}"
    assert not valid.exists() and not invalid.exists()
    assert sorted(os.listdir(tmp_path)) == ["results.json", "rules.json"]  # no staging folder left either
    assert json.loads(results.read_text()) == {"error": {"exit_code": 2, "kind": "error", "message": refusal}}


@pytest.mark.spark
def test_annotate_valid_keeps_the_codes_column_in_the_valid_output(spark, tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"type": "range", "column": "id", "min": 2}]))
    valid, invalid = tmp_path / "valid", tmp_path / "invalid"
    code = main(["split", "--rules", str(rules), "--query", "SELECT * FROM VALUES (1), (2) AS t(id)",
                 "--valid-output", str(valid), "--invalid-output", str(invalid), "--annotate", "codes",
                 "--annotate-valid", "--fail-exit-code", "0"])
    assert code == 0
    assert [tuple(row) for row in spark.read.parquet(str(valid)).collect()] == [(2, None)]
    assert [tuple(row) for row in spark.read.parquet(str(invalid)).collect()] == [(1, ["range(id,2,)"])]


# -- --html: the run's report as one page --------------------------------------------------------


def report_cells(page: str) -> list[list[str]]:
    """Severity, code, value, failed and threshold of each result row of an HTML report."""
    body = page.split("<h2>Results</h2>", 1)[1].split("<tbody>", 1)[1].split("</tbody>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>.*?</tr>", body)]
    return [[row[0], row[1], row[4], row[5], row[6]] for row in rows]


@pytest.mark.spark
def test_split_with_html_writes_the_report_with_the_split_counts(spark, tmp_path, capsys):
    page_path, results = tmp_path / "out" / "report.html", tmp_path / "results.json"
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    code = main([
        "split", "--rules", str(DATA / "rules_split.json"), *ORDERS_ARGV, "--valid-output", str(tmp_path / "v"),
        "--invalid-output", str(tmp_path / "i"), "--html", f"file://{page_path}", "--pipeline", "orders <daily>",
        "--results", str(results),
    ])
    after = dt.datetime.now(dt.timezone.utc)
    assert code == 1
    capsys.readouterr()
    page = page_path.read_text(encoding="utf-8")
    assert json.loads(results.read_text())["invalid_count"] == 4
    assert f"<dt>dataset</dt><dd>{DATA / 'orders.csv'}</dd><dt>pipeline</dt><dd>orders &lt;daily&gt;</dd>" in page
    [shown] = re.findall(r"<dt>validated at</dt><dd>(.*?)</dd>", page)
    assert before <= dt.datetime.fromisoformat(shown) <= after
    # The page gives the price of the run: the results file's cost, in words.
    cost = SparkCost.from_dict(json.loads(results.read_text())["cost"])
    assert re.findall(r"<dt>Spark cost</dt><dd>(.*?)</dd>", page) == [cost.describe()]
    assert (cost.jobs, cost.stages, cost.rows_read) == (3, 4, 14)
    assert '<h1>Cola report <span class="sev fail">FAIL</span></h1>' in page
    assert (
        "<h2>Split</h2><p>2 valid rows, 4 invalid rows</p><table><thead><tr><th>rejection code</th><th>rows</th>"
        '</tr></thead><tbody><tr><td><code>unique(order_id)</code></td><td class="num">2</td></tr>'
        '<tr><td><code>AMOUNT_NEGATIVE</code></td><td class="num">1</td></tr>'
        '<tr><td><code>not_null(email)</code></td><td class="num">1</td></tr></tbody></table>'
    ) in page  # the rows per code: both rows of order 5 are rejected by unique
    assert report_cells(page) == [
        ['<span class="sev fail">FAIL</span>', "<code>not_null(email)</code>", "", "1", ""],
        ['<span class="sev fail">FAIL</span>', "<code>AMOUNT_NEGATIVE</code>", "", "1", ""],
        ['<span class="sev fail">FAIL</span>', "<code>unique(order_id)</code>", "", "1", ""],
        ['<span class="sev pass">PASS</span>', "<code>row_count</code>", "", "0", "min 1"],  # min: no metric
    ]
    assert sorted(os.listdir(page_path.parent)) == ["report.html"]  # no partial file left


@pytest.mark.spark
def test_check_with_html_and_history_draws_the_trend_of_the_last_runs(spark, tmp_path, capsys):
    page_path, store = tmp_path / "report.html", str(tmp_path / "history")
    argv = ["check", "--rules", str(DATA / "rules_fail.yaml"), *ORDERS_ARGV, "--html", str(page_path),
            "--history", store, "--dataset", "orders"]
    for _ in range(3):
        assert main(argv) == 1
    capsys.readouterr()
    page = page_path.read_text(encoding="utf-8")
    assert "<dt>dataset</dt><dd>orders</dd>" in page
    assert report_cells(page) == [
        ['<span class="sev fail">FAIL</span>', "<code>unique(order_id)</code>", "", "1", ""],
        ['<span class="sev fail">FAIL</span>', "<code>AMOUNT_NEGATIVE</code>", "", "1", ""],
        ['<span class="sev pass">PASS</span>', "<code>avg(amount)</code>", "16.75", "0", "must_be between 10 and 20"],
    ]
    body = page.split("<h2>Results</h2>", 1)[1]
    rows = re.findall(r"<tr><td>.*?</tr>", body.split("<tbody>", 1)[1])
    # Three runs of each rule, this one included, each coloured by its severity.
    assert [re.findall(r'fill="(#\w+)"><title>', row) for row in rows] == [
        ["#cf222e"] * 3, ["#cf222e"] * 3, ["#1a7f37"] * 3,
    ]
    assert ": 16.75 (pass)</title>" in rows[2]


@pytest.mark.spark
def test_an_html_path_the_driver_cannot_write_is_refused_before_the_source_is_read(spark, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    rules = str(DATA / "rules_warn.json")
    bad = f"{afile}/report.html"
    assert main(["check", "--rules", rules, "--table", "no_such_table", "--html", bad]) == 2
    assert capsys.readouterr().err == (
        f"cola: error: --html {bad!r} cannot be written: {str(afile)!r} is not a writable folder\n"
    )
    assert main(["check", "--rules", rules, "--table", "no_such_table", "--html", "s3://b/r.html"]) == 2
    assert capsys.readouterr().err == (
        "cola: error: --html must be a file the driver can write (a local path or a file: URI), got 's3://b/r.html'\n"
    )


@pytest.mark.spark
def test_a_refused_run_leaves_no_earlier_html_report_behind(spark, tmp_path, capsys):
    stale = tmp_path / "report.html"
    stale.write_text("<p>an earlier run</p>")
    missing = str(tmp_path / "nope")
    assert main(["check", "--rules", str(DATA / "rules_warn.json"), "--input", missing, "--html", str(stale)]) == 2
    assert capsys.readouterr().err == f"cola: error: input path {missing!r} does not exist\n"
    assert not stale.exists()


@pytest.mark.spark
def test_the_reports_time_is_the_history_rows_validated_at(spark, tmp_path, capsys):
    from pyspark.sql import functions as F

    from cola_core.history.store import read_history

    page_path, store = tmp_path / "report.html", str(tmp_path / "history")
    argv = ["check", "--rules", str(DATA / "rules_fail.yaml"), *ORDERS_ARGV, "--html", str(page_path),
            "--history", store, "--dataset", "orders"]
    assert main(argv) == 1
    capsys.readouterr()
    [shown] = re.findall(r"<dt>validated at</dt><dd>(.*?)</dd>", page_path.read_text(encoding="utf-8"))
    # Formatted in the session's time zone, UTC in the tests, as the page shows UTC.
    stored = read_history(spark, store).select(F.date_format("validated_at", "yyyy-MM-dd HH:mm:ss").alias("at"))
    assert {row.at for row in stored.collect()} == {shown.removesuffix("+00:00")}
    assert shown.endswith("+00:00")


@pytest.mark.spark
def test_a_page_that_cannot_be_written_after_the_run_is_a_warning(spark, tmp_path, capsys):
    # Caused for real: the page is to go in a folder named like the file Spark writes into
    # the valid output (_SUCCESS). Before the run nothing is there, so the path is accepted;
    # the run's own split then makes it a file, and the page's folder cannot be made.
    valid, results = tmp_path / "v", tmp_path / "results.json"
    page_path = valid / "_SUCCESS" / "report.html"
    code = main([
        "split", "--rules", str(DATA / "rules_split.json"), *ORDERS_ARGV, "--valid-output", str(valid),
        "--invalid-output", str(tmp_path / "i"), "--html", str(page_path), "--results", str(results),
    ])
    assert code == 1  # the run's own exit status: a rule failed
    assert capsys.readouterr().err == (
        f"cola: warning: the HTML report was not written: cannot write the page {str(page_path)!r}: "
        f"[Errno 17] File exists: {str(valid / '_SUCCESS')!r}\n"
    )
    summary = json.loads(results.read_text())
    assert (summary["severity"], summary["valid_count"], summary["invalid_count"]) == ("fail", 2, 4)
    assert (valid / "_SUCCESS").is_file() and not page_path.exists()


@pytest.mark.spark
def test_a_page_that_cannot_be_built_after_the_run_is_a_warning_whatever_the_error(spark, tmp_path, capsys):
    # Caused for real: the history store holds a file whose data cannot be read. The run
    # appends to the store (it reads no row of it), then the page's trends query reads every
    # row and Spark fails (an output error naming the store and the file): the run is done and
    # must not read as a crash.
    store, results, page_path = tmp_path / "history", tmp_path / "results.json", tmp_path / "report.html"
    broken = broken_history_file(store)
    code = main(["check", "--rules", str(DATA / "rules_fail.yaml"), *ORDERS_ARGV, "--history", str(store),
                 "--dataset", "orders", "--html", str(page_path), "--results", str(results)])
    assert code == 1  # the run's own exit status: a rule failed, nothing crashed
    assert capsys.readouterr().err.splitlines() == [
        f"cola: warning: the HTML report was not written: cannot read the history store {store}: "
        "org.apache.spark.SparkException: "
        f"[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file://{broken}.  SQLSTATE: KD001",
    ]
    summary = json.loads(results.read_text())  # --results is written after the page, still
    assert (summary["severity"], len(summary["results"])) == ("fail", 3)
    assert not page_path.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["history", "results.json"]


# -- local paths, checked before a JVM starts ----------------------------------------------------

# Runs the command in a fresh process, then says whether pyspark ever started a JVM or a
# SparkContext there: deterministic, whatever the machine's load.
_WITHOUT_SPARK = """
import json, sys
from cola_core.cli.main import main
status = main(sys.argv[1:])
from pyspark import SparkContext
print(json.dumps({"status": status, "jvm": SparkContext._gateway is not None,
                  "context": SparkContext._active_spark_context is not None}))
"""


def _plain_environment(tmp_path: Path) -> dict[str, str]:
    """This environment without anything that names a master or a running JVM, and with an
    empty Spark conf folder (no spark-defaults.conf)."""
    env = {key: value for key, value in os.environ.items() if key not in (
        "PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "PYSPARK_SUBMIT_ARGS", "SPARK_REMOTE",
        "SPARK_CONNECT_MODE_ENABLED",
    )}
    conf = tmp_path / "spark-conf"
    conf.mkdir(exist_ok=True)
    return {**env, "SPARK_CONF_DIR": str(conf), "PYSPARK_PYTHON": sys.executable}


def run_without_spark(*arguments: str, cwd: Path) -> tuple[dict[str, Any], str]:
    """The command's exit status and whether Spark started (from ``_WITHOUT_SPARK``), and its stderr."""
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_SPARK, *arguments], cwd=cwd, env=_plain_environment(cwd),
        capture_output=True, text=True, timeout=300, check=False,
    )
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


NO_SPARK_EXIT_2 = {"status": 2, "jvm": False, "context": False}


def _reference_rules(tmp_path: Path, reference: dict[str, Any]) -> str:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([
        {"type": "row_count", "min": 1},
        {"type": "reference_match", "keys": ["order_id"], "columns": ["amount"], "reference": {"table": "ledger"}},
        {"type": "reconcile", "aggregate": "count", "reference": reference, "must_be": "<= 1"},
        {"type": "foreign_key", "column": "customer", "reference": {"path": "/no/such/customers"},
         "reference_columns": ["name"]},
    ]))
    return str(path)


@pytest.mark.parametrize(
    "where",
    [
        [],  # no master anywhere: cola starts local[*]
        ["--master", "local[1]"],
        ["--master", "local"],
        ["--conf", "spark.master=local[2]"],
    ],
)
def test_a_missing_local_source_exits_2_before_a_jvm_starts(tmp_path, where):
    missing, results = str(tmp_path / "nope.csv"), tmp_path / "results.json"
    for given in (missing, f"file:{missing}", f"file://{missing}"):
        status, stderr = run_without_spark(
            "check", "--rules", str(DATA / "rules_warn.json"), "--input", given, "--format", "csv",
            "--results", str(results), *where, cwd=tmp_path,
        )
        assert (status, stderr) == (NO_SPARK_EXIT_2, f"cola: error: input path {given!r} does not exist\n")
        assert json.loads(results.read_text()) == {
            "error": {"exit_code": 2, "kind": "source", "message": f"input path {given!r} does not exist"}
        }


def test_a_missing_local_reference_exits_2_before_a_jvm_starts_naming_the_first_rule(tmp_path):
    missing = str(tmp_path / "ledger")
    rules = _reference_rules(tmp_path, {"path": missing, "format": "csv"})
    status, stderr = run_without_spark("check", "--rules", rules, *ORDERS_ARGV, cwd=tmp_path)
    # reference_match's reference is a table, Spark's to find; reconcile's path comes first.
    assert (status, stderr) == (
        NO_SPARK_EXIT_2, f"cola: error: rules[2] (reconcile): cannot read the reference: input path {missing!r} does not exist\n"
    )
    # The source comes before the references, as the run reads them.
    status, stderr = run_without_spark("check", "--rules", rules, "--input", "nope", cwd=tmp_path)
    assert (status, stderr) == (NO_SPARK_EXIT_2, "cola: error: input path 'nope' does not exist\n")


@pytest.mark.spark
def test_the_refusal_before_spark_is_the_one_the_run_gives_with_spark(spark, tmp_path, capsys):
    # In this process a session is running, so the command reads with Spark and says what
    # Spark found: word for word what a fresh process says before starting one.
    missing = str(tmp_path / "ledger")
    rules = _reference_rules(tmp_path, {"path": f"file:{missing}", "format": "csv"})
    spark.createDataFrame([(1, 2.0)], "order_id int, amount double").createOrReplaceTempView("ledger")
    for arguments in (["--input", "nope"], ORDERS_ARGV):
        assert main(["check", "--rules", rules, *arguments]) == 2
        with_spark = capsys.readouterr().err
        status, before_spark = run_without_spark("check", "--rules", rules, *arguments, cwd=tmp_path)
        assert (status, before_spark) == (NO_SPARK_EXIT_2, with_spark)
    assert with_spark == (
        f"cola: error: rules[2] (reconcile): cannot read the reference: input path 'file:{missing}' does not exist\n"
    )


_DECISIONS = """
import json, sys
from cola_core.cli.main import _local_session_here
from cola_core.job.spec import JobSpec
from cola_core.storage.specs import SourceSpec

spec = json.loads(sys.argv[1])
print(json.dumps(_local_session_here(JobSpec(source=SourceSpec(path="x"), conf=tuple(spec.pop("conf", ())), **spec))))
"""


@pytest.mark.parametrize(
    ("spec", "environment", "checked"),
    [
        ({}, {}, True),
        ({"master": "local[4]"}, {}, True),
        ({"conf": [["spark.master", "local"]]}, {}, True),
        ({"master": "yarn"}, {}, False),
        ({"master": "spark://127.0.0.1:7077"}, {}, False),
        ({"conf": [["spark.master", "k8s://https://api:6443"]]}, {}, False),
        ({"remote": "sc://127.0.0.1:15002"}, {}, False),
        ({}, {"SPARK_REMOTE": "sc://127.0.0.1:15002"}, False),
        ({}, {"PYSPARK_GATEWAY_PORT": "40000"}, False),  # under spark-submit: its JVM runs already
        ({}, {"PYSPARK_SUBMIT_ARGS": "--master yarn pyspark-shell"}, False),
        ({}, {"spark-defaults.conf": "spark.master yarn"}, False),
    ],
)
def test_paths_are_checked_before_spark_only_when_cola_starts_a_local_session(tmp_path, spec, environment, checked):
    env = _plain_environment(tmp_path)
    defaults = environment.pop("spark-defaults.conf", None)
    if defaults is not None:
        Path(env["SPARK_CONF_DIR"], "spark-defaults.conf").write_text(defaults + "\n")
    done = subprocess.run(
        [sys.executable, "-c", _DECISIONS, json.dumps(spec)], cwd=tmp_path, env={**env, **environment},
        capture_output=True, text=True, timeout=120, check=True,
    )
    assert json.loads(done.stdout) is checked


@pytest.mark.parametrize(
    ("location", "missing"),
    [
        ("nope", True),
        ("/no/such/folder", True),
        ("file:/no/such/folder", True),
        ("file:///no/such/folder", True),
        ("/no/such/orders-*.csv", False),  # a glob: Spark expands it
        ("/no/such/orders-{1,2}.csv", False),
        ("s3a://bucket/no/such", False),  # other storage: Spark finds it
        ("hdfs:/no/such", False),
        ("abfss://c@a.dfs.core.windows.net/x", False),
    ],
)
def test_which_paths_are_this_machines_to_check(location, missing):
    assert missing_local_path(location) is missing
    assert missing_local_path(str(DATA / "orders.csv")) is False


def test_cola_schema_lists_the_rule_types_of_checks_packages(custom_checks, capsys):
    # Pure Python: no session is asked for, so none starts.
    assert main(["schema", "--checks", custom_checks]) == 0
    definitions = json.loads(capsys.readouterr().out)["$defs"]
    assert {"always_fine", "buggy"} <= set(definitions)
    # Declaring no parameters, they accept any: the schema says what they are, nothing more.
    assert definitions["always_fine"] == {"description": "(A custom check that declares no parameters: it takes any.)"}
    assert main(["schema", "--checks", "no_such_checks"]) == 2
    assert capsys.readouterr().err.startswith("cola: error: cannot load checks from 'no_such_checks': No module named")

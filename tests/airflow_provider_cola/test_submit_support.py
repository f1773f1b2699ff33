"""The pieces around the hook: finding spark-submit, its environment, the results file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from airflow_provider_cola.errors import ColaJobError
from airflow_provider_cola.operators._results import ResultsFile
from airflow_provider_cola.operators._spark_submit import interpreter_bin_dir, launcher_environment
from cola_expected import ORDERS_PASS_SUMMARY, result, summary
from cola_testenv import unactivated_path

pytestmark = pytest.mark.airflow

VENV_BIN = Path(sys.executable).parent


def tail() -> str:
    return "26/01/01 ERROR Something: the end of the log"


def test_spark_submit_next_to_the_interpreter_is_found_when_not_on_path(monkeypatch):
    monkeypatch.setenv("PATH", unactivated_path())
    assert interpreter_bin_dir("spark-submit") == VENV_BIN
    assert interpreter_bin_dir("spark3-submit") is None  # the fake one, on PATH
    monkeypatch.setenv("PATH", os.pathsep.join([str(VENV_BIN), unactivated_path()]))
    assert interpreter_bin_dir("spark-submit") is None  # on PATH already: PATH is left alone


def test_launcher_environment_is_set_for_the_submit_and_restored(monkeypatch):
    path = unactivated_path()
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    before = dict(os.environ)

    with launcher_environment("spark-submit", "local[2]", None, None) as changes:
        assert changes == {"PATH": f"{VENV_BIN}{os.pathsep}{path}", "PYSPARK_PYTHON": sys.executable}
        assert os.environ["PATH"].split(os.pathsep)[0] == str(VENV_BIN)
        assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert dict(os.environ) == before

    # YARN and Kubernetes bring their own Python; a user's choice always wins.
    with launcher_environment("spark-submit", "yarn", None, None) as changes:
        assert "PYSPARK_PYTHON" not in changes
    with launcher_environment("spark-submit", "spark://h:7077", {"PYSPARK_PYTHON": "/opt/py"}, None) as changes:
        assert "PYSPARK_PYTHON" not in changes
    with launcher_environment("spark-submit", "local", None, {"spark.pyspark.python": "/opt/py"}) as changes:
        assert "PYSPARK_PYTHON" not in changes
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3")
    with launcher_environment("spark-submit", "local", None, None) as changes:
        assert "PYSPARK_PYTHON" not in changes
    assert os.environ["PYSPARK_PYTHON"] == "/usr/bin/python3"


def test_results_file_is_read_then_removed(tmp_path):
    results = ResultsFile(tmp_path)
    Path(results.target).write_text(json.dumps(ORDERS_PASS_SUMMARY))
    assert results.read(split=False, log_tail=tail) == ORDERS_PASS_SUMMARY
    assert not Path(results.target).exists()


def test_results_uri_gets_a_unique_file_per_run(tmp_path):
    first, second = ResultsFile(tmp_path, f"file://{tmp_path}/shared/"), ResultsFile(tmp_path, str(tmp_path))
    assert first.target.startswith(f"file://{tmp_path}/shared/cola-results-") and first.target.endswith(".json")
    assert second.target.startswith(f"{tmp_path}/cola-results-")
    assert ResultsFile(tmp_path, str(tmp_path)).target != second.target


def test_split_results_need_the_counts(tmp_path):
    results = ResultsFile(tmp_path)
    split_summary = summary(result("row_count", "pass", "row_count = 3 is within bounds (min 1)", "row_count"),
                            valid_count=3, invalid_count=0)
    Path(results.target).write_text(json.dumps(split_summary))
    assert results.read(split=True, log_tail=tail) == split_summary

    Path(results.target).write_text(json.dumps(ORDERS_PASS_SUMMARY))
    with pytest.raises(ColaJobError) as error:
        results.read(split=True, log_tail=tail)
    assert str(error.value) == (
        f"the results file is corrupt ('valid_count'): {results.target}\n"
        "Last lines of the Spark log:\n26/01/01 ERROR Something: the end of the log"
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "the Cola Spark job finished but wrote no results file"),
        ("", "the results file is corrupt (Expecting value: line 1 column 1 (char 0))"),
        ("[]", "the results file is corrupt (expected an object with a 'results' list)"),
        ('{"results": [{"rule_type": "x", "passed": true, "colour": "red"}]}',
         "the results file is corrupt (unknown CheckResult keys ['colour']; valid keys are ['rule_type', 'passed', "
         "'message', 'failed_count', 'metric_value', 'severity', 'check_name', 'code', 'dimension', 'samples'])"),
        (json.dumps({**ORDERS_PASS_SUMMARY, "passed": False}),
         "the results file is corrupt (its passed do not match its results)"),
        (json.dumps({**ORDERS_PASS_SUMMARY, "extra": 1}),
         "the results file is corrupt (its extra do not match its results)"),
    ],
    ids=["missing", "empty", "not-an-object", "unknown-key", "inconsistent", "extra-key"],
)
def test_a_bad_results_file_is_never_a_pass(tmp_path, content, problem):
    results = ResultsFile(tmp_path)
    if content is not None:
        Path(results.target).write_text(content)
    with pytest.raises(ColaJobError) as error:
        results.read(split=False, log_tail=tail)
    assert str(error.value) == (
        f"{problem}: {results.target}\nLast lines of the Spark log:\n26/01/01 ERROR Something: the end of the log"
    )

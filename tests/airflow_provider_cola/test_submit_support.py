"""The pieces around the hook: finding spark-submit, its environment, the results file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from airflow_provider_cola.operators._spark_submit import interpreter_bin_dir, launcher_environment
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

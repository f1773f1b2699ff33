"""The pieces around the hook: finding spark-submit, its environment, the results file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from airflow_provider_cola.operators._spark_submit import (
    interpreter_bin_dir,
    launcher_environment,
    names_a_secret,
    sensitive_settings,
)
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


@pytest.mark.parametrize(
    "key",
    [
        "spark.myapp.credential", "spark.hadoop.fs.s3a.secret.key", "spark.hadoop.fs.s3a.access.key",
        "spark.hadoop.fs.s3a.accesskey", "password", "PASSWORD", "db_passwd", "pwd", "apiKey", "api_key", "X-API-KEY",
        "spark.authenticate.secret", "auth", "spark.myapp.auth.header", "privateKey", "oauth.token",
        "spark.ssl.keyStorePassword", "spark.kubernetes.driver.secretKeyRef.TOKEN",
    ],
)
def test_keys_naming_a_secret(key):
    assert names_a_secret(key)


@pytest.mark.parametrize(
    "key",
    ["spark.ui.enabled", "spark.sql.shuffle.partitions", "header", "spark.author", "monkey", "spark.authenticate",
     "inferSchema", "spark.executor.memory", "keyspace.name"],
)
def test_keys_not_naming_a_secret(key):
    assert not names_a_secret(key)


def test_sensitive_settings_skip_empty_values():
    assert sensitive_settings({"password": "", "token": None, "spark.x.credential": 42}, None, {"header": "true"}) == {
        "spark.x.credential": "42"
    }

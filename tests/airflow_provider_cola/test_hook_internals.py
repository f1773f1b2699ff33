"""What the provider relies on in the apache-spark provider's ``SparkSubmitHook`` beyond its public API.

``operators/_spark_submit._SubmitHookInternals`` is the one place that touches the hook's
private members, and ``_spark_target`` reads a connection as the hook does. These tests fail
when the installed provider changes what they rely on: the members' signatures, that a real
spark-submit run goes through the overrides, and how a connection is read.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

from airflow_provider_cola._spark_target import SubmitTarget, submit_target
from airflow_provider_cola.errors import ColaJobError
from airflow_provider_cola.operators._spark_submit import ColaSubmitHook, _SubmitHookInternals
from cola_testenv import unactivated_path

pytestmark = pytest.mark.airflow

VENV_BIN = Path(sys.executable).parent


def test_the_private_members_the_overrides_rely_on_are_there_with_their_signatures():
    assert list(inspect.signature(SparkSubmitHook._mask_cmd).parameters) == ["self", "connection_cmd"]
    assert list(inspect.signature(SparkSubmitHook._process_spark_submit_log).parameters) == ["self", "itr"]
    # submit() hands its keyword arguments to Popen (the environment goes that way).
    assert list(inspect.signature(SparkSubmitHook.submit).parameters) == ["self", "application", "kwargs"]
    # Overridden or read in _SubmitHookInternals only.
    overridden = {name for name in vars(_SubmitHookInternals) if name.startswith("_") and not name.startswith("__")}
    assert overridden == {"_mask_cmd", "_process_spark_submit_log"}
    assert not {name for name in vars(ColaSubmitHook) if name.startswith("_") and not name.startswith("__")}
    hook = ColaSubmitHook(conn_id="spark_local")
    assert hook._submit_sp is None and hook.exit_code is None


def _application(tmp_path: Path, body: str) -> str:
    script = tmp_path / "app.py"
    script.write_text(f"import os, sys\n{body}\n")
    return str(script)


def test_a_real_spark_submit_run_goes_through_the_overrides(tmp_path, monkeypatch, capsys):
    """spark-submit itself (a JVM), with a Python application that prints a secret, then
    exits 2 as a refused job does, before any results file."""
    monkeypatch.setenv("PATH", unactivated_path())
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    application = _application(
        tmp_path,
        "print('PYSPARK_PYTHON=' + os.environ.get('PYSPARK_PYTHON', '(unset)'))\n"
        "print('cola check: error: spark.myapp.credential=hunter22 is refused', flush=True)\n"
        "sys.exit(2)",
    )
    hook = ColaSubmitHook(
        conn_id="spark_local", conf={"spark.ui.enabled": "false", "spark.myapp.credential": "hunter22"},
        secrets={"spark.myapp.credential": "hunter22"},
    )
    before = dict(os.environ)
    capsys.readouterr()
    with pytest.raises(ColaJobError) as error:
        hook.submit(application)
    assert dict(os.environ) == before
    # _mask_cmd: the command line the hook logs has the secret masked.
    commands = [line for line in capsys.readouterr().out.splitlines() if "Spark-Submit cmd:" in line]
    assert len(commands) == 1
    assert " --conf spark.myapp.credential=****** " in commands[0] and "hunter22" not in commands[0]
    # _process_spark_submit_log: every line the process printed went through it.
    assert f"PYSPARK_PYTHON={sys.executable}" in hook._cola_log
    assert "cola check: error: spark.myapp.credential=hunter22 is refused" in hook._cola_log
    # _submit_sp: the exit status, which tells a refusal from a crash.
    assert hook.exit_code == 2
    # The tail the task's error ends with has it masked (the job's refusal itself is read from its record).
    assert hook.log_tail().splitlines()[-1] == "cola check: error: spark.myapp.credential=****** is refused"
    assert str(error.value).startswith("the Cola Spark job failed (spark-submit exit code 2).\n")


def test_os_environ_is_the_same_after_a_task_and_spark_submit_had_its_variables(
    airflow_home, fake_submit_calls, monkeypatch
):
    from airflow_provider_cola.operators import ColaCheckOperator
    from cola_testenv import ORDERS

    path = unactivated_path()
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    before = dict(os.environ)
    operator = ColaCheckOperator(
        task_id="environment", rules=[{"type": "row_count", "min": 1}],
        source={"path": str(ORDERS / "2024-01-01"), "format": "json"}, conn_id="spark_local",
        spark_binary="spark3-submit", env_vars={"FAKE_SUBMIT_MODE": "environment"},
    )
    with pytest.raises(ColaJobError):  # the fake job writes no results
        operator.execute(context={})
    assert dict(os.environ) == before
    # The fake spark3-submit is on PATH already: only the Python is added, with env_vars.
    assert list(operator._hook._cola_log)[2:4] == [f"PATH={path}", f"PYSPARK_PYTHON={sys.executable}"]


@pytest.mark.parametrize(
    ("connection", "deploy_mode", "spark_binary"),
    [
        ({"conn_type": "spark", "host": "local[2]"}, None, None),
        ({"conn_type": "spark", "host": "spark://10.0.0.1:7077", "extra": {"deploy-mode": "cluster"}}, None, None),
        ({"conn_type": "spark", "host": "10.0.0.1", "port": 7077}, "cluster", None),
        ({"conn_type": "spark", "host": "yarn", "extra": {"spark-binary": "spark3-submit"}}, None, None),
        ({"conn_type": "yarn", "host": "rm.example"}, None, "spark2-submit"),
        ({"conn_type": "spark", "host": "k8s://https://10.0.0.1:6443", "extra": {"deploy-mode": "client"}}, "cluster", None),
        (None, "cluster", None),
    ],
)
def test_a_connection_is_read_as_the_hook_reads_it(connection, deploy_mode, spark_binary, monkeypatch):
    if connection is None:
        monkeypatch.delenv("AIRFLOW_CONN_CONNECTION_UNDER_TEST", raising=False)
    else:
        monkeypatch.setenv("AIRFLOW_CONN_CONNECTION_UNDER_TEST", json.dumps(connection))
    target = submit_target("connection_under_test", deploy_mode, spark_binary)
    if "k8s" in target.master:
        pytest.importorskip("airflow.providers.cncf.kubernetes")
    hook = SparkSubmitHook(conn_id="connection_under_test", deploy_mode=deploy_mode, spark_binary=spark_binary)
    resolved = hook._connection
    assert target == SubmitTarget(
        resolved["master"], resolved["deploy_mode"] or "client", resolved["spark_binary"] or "spark-submit"
    )


def test_spark_submit_is_found_next_to_the_interpreter_without_changing_path(tmp_path, monkeypatch):
    """The launcher's PATH reaches the real spark-submit script, which finds Spark's home with
    the python3 on that PATH."""
    path = unactivated_path()
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    hook = ColaSubmitHook(conn_id="spark_local", conf={"spark.ui.enabled": "false"})
    assert hook.environment["PATH"].split(os.pathsep)[0] == str(VENV_BIN)
    assert hook.submit(_application(tmp_path, "print('ran')")) is None
    assert "ran" in hook._cola_log
    assert os.environ["PATH"] == path
    assert shutil.which("spark-submit") is None

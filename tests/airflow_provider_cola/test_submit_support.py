"""The pieces around the hook: finding spark-submit, its environment, the results file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from airflow_provider_cola.operators._spark_submit import ColaSubmitHook, interpreter_bin_dir, launcher_environment
from cola_core.storage.session import log4j_config_path
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


def test_launcher_environment_is_what_spark_submit_gets_and_os_environ_is_left_alone(monkeypatch):
    path = unactivated_path()
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    before = dict(os.environ)

    changes = launcher_environment("spark-submit", "local[2]", None, None)
    assert changes == {"PATH": f"{VENV_BIN}{os.pathsep}{path}", "PYSPARK_PYTHON": sys.executable}
    assert dict(os.environ) == before

    # YARN and Kubernetes bring their own Python; a user's choice always wins.
    assert "PYSPARK_PYTHON" not in launcher_environment("spark-submit", "yarn", None, None)
    assert "PYSPARK_PYTHON" not in launcher_environment("spark-submit", "spark://h:7077", {"PYSPARK_PYTHON": "/opt/py"}, None)
    assert "PYSPARK_PYTHON" not in launcher_environment("spark-submit", "local", None, {"spark.pyspark.python": "/opt/py"})
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3")
    assert "PYSPARK_PYTHON" not in launcher_environment("spark-submit", "local", None, None)
    assert os.environ["PYSPARK_PYTHON"] == "/usr/bin/python3"


def test_the_hook_hands_the_launcher_environment_to_spark_submit_with_the_users_env_vars(monkeypatch):
    """The hook starts spark-submit with os.environ and env_vars whatever submit() is given,
    so on a local master the launcher's variables go with env_vars (the user's win)."""
    path = unactivated_path()
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    hook = ColaSubmitHook(conn_id="spark_local", env_vars={"APP": "1", "PYSPARK_PYTHON": "/opt/py"})
    assert hook.environment == {"PATH": f"{VENV_BIN}{os.pathsep}{path}"}
    assert hook._env_vars == {"PATH": f"{VENV_BIN}{os.pathsep}{path}", "APP": "1", "PYSPARK_PYTHON": "/opt/py"}
    # Without env_vars, submit() hands the environment to the process itself.
    hook = ColaSubmitHook(conn_id="spark_local")
    assert hook._env_vars is None
    assert hook.environment == {"PATH": f"{VENV_BIN}{os.pathsep}{path}", "PYSPARK_PYTHON": sys.executable}


# -- quiet Spark in the task log ----------------------------------------------------------------

CONFIG = f"-Dlog4j2.configurationFile={log4j_config_path().as_uri()}"
LEAN = {"spark.python.sql.dataFrameDebugging.enabled": "false"}


def test_in_client_mode_the_hook_adds_the_quiet_settings_after_the_users(monkeypatch, tmp_path):
    for name in ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS", "LOG4J_CONFIGURATION_FILE"):
        monkeypatch.delenv(name, raising=False)
    hook = ColaSubmitHook(conn_id="spark_local", conf={"spark.ui.enabled": "false"})
    # On a local master, a task that exhausts the JVM's memory fails without killing it; and
    # PySpark records no call sites (a third of a wide block's driver time, docs/performance.md).
    assert hook._conf == {
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.driver.extraJavaOptions": CONFIG,
        "spark.executor.killOnFatalError.depth": "0", **LEAN,
    }
    command = hook._build_spark_submit_command("job.py")
    assert command[:9] == [
        "spark-submit", "--master", "local[2]", "--conf", "spark.ui.enabled=false",
        "--conf", "spark.ui.showConsoleProgress=false", "--conf", f"spark.driver.extraJavaOptions={CONFIG}",
    ]
    # The user's Java options are kept, ours appended; their progress bar setting stays.
    hook = ColaSubmitHook(
        conn_id="spark_local",
        conf={"spark.driver.extraJavaOptions": "-Xss4m", "spark.ui.showConsoleProgress": "true"},
    )
    assert hook._conf == {
        "spark.driver.extraJavaOptions": f"-Xss4m {CONFIG}", "spark.ui.showConsoleProgress": "true", "spark.executor.killOnFatalError.depth": "0", **LEAN,
    }
    # A properties file's Java options would be replaced by a --conf: they are carried over.
    properties = tmp_path / "job.conf"
    properties.write_text("spark.driver.extraJavaOptions -Dfrom.file=1\nspark.ui.showConsoleProgress true\n")
    hook = ColaSubmitHook(conn_id="spark_local", properties_file=str(properties))
    assert hook._conf == {"spark.driver.extraJavaOptions": f"-Dfrom.file=1 {CONFIG}", "spark.executor.killOnFatalError.depth": "0", **LEAN}
    # ...and a log4j configuration it names wins, as one in the conf or in the task's env_vars does.
    properties.write_text("spark.driver.extraJavaOptions -Dlog4j.configurationFile=/etc/mine.properties\n")
    assert ColaSubmitHook(conn_id="spark_local", properties_file=str(properties))._conf == {
        "spark.ui.showConsoleProgress": "false", "spark.executor.killOnFatalError.depth": "0", **LEAN,
    }
    mine = {"spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=/etc/mine.xml"}
    assert ColaSubmitHook(conn_id="spark_local", conf=mine)._conf == {
        **mine, "spark.ui.showConsoleProgress": "false", "spark.executor.killOnFatalError.depth": "0", **LEAN,
    }
    hook = ColaSubmitHook(conn_id="spark_local", env_vars={"LOG4J_CONFIGURATION_FILE": "/etc/mine.xml"})
    assert hook._conf == {"spark.ui.showConsoleProgress": "false", "spark.executor.killOnFatalError.depth": "0", **LEAN}


def test_in_cluster_mode_the_conf_is_left_as_it_is():
    # The driver runs on the cluster, where this machine's log4j2.properties is not.
    hook = ColaSubmitHook(conn_id="spark_local", deploy_mode="cluster", conf={"spark.ui.enabled": "false"})
    assert hook._conf == {"spark.ui.enabled": "false"}


def test_the_users_call_site_setting_wins():
    mine = {"spark.python.sql.dataFrameDebugging.enabled": "true"}
    assert ColaSubmitHook(conn_id="spark_local", conf=mine)._conf["spark.python.sql.dataFrameDebugging.enabled"] == "true"


def test_the_jvms_start_up_notice_is_left_out_of_the_task_log_and_the_tail_and_the_jobs_own_lines_are_not():
    hook = ColaSubmitHook(conn_id="spark_local")
    lines = [
        "WARNING: Using incubator modules: jdk.incubator.vector\n",
        "SEVERITY  RULE  CODE\n",
        # A contract's unchecked parts, as the job says them after its results: the task's log
        # shows them there (the task says them nowhere else; the results carry them as data).
        "cola: warning: no rule checks these parts of the contract: schema[0].quality[1] (text)\n",
        "26/01/01 00:00:00 INFO ShutdownHookManager: Shutdown hook called\n",
        "26/01/01 00:00:00 ERROR Something: the end of the log\n",
    ]
    hook._process_spark_submit_log(iter(lines))
    # SparkSubmitHook logs each line it is given, and keeps it for its own message.
    assert list(hook._last_submit_log_lines) == [
        "SEVERITY  RULE  CODE",
        "cola: warning: no rule checks these parts of the contract: schema[0].quality[1] (text)",
        "26/01/01 00:00:00 INFO ShutdownHookManager: Shutdown hook called",
        "26/01/01 00:00:00 ERROR Something: the end of the log",
    ]
    assert hook.log_tail() == (
        "SEVERITY  RULE  CODE\ncola: warning: no rule checks these parts of the contract: schema[0].quality[1] (text)\n"
        "26/01/01 00:00:00 ERROR Something: the end of the log"
    )

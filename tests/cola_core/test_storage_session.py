"""The session factory (``storage/session.py``): which masters run this machine's Python, whether a
direct run already has a master configured somewhere, and how quiet Spark is kept; the
sessions themselves start in processes of their own."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cola_core
from cola_core.errors import ColaError
from cola_core.storage.session import (
    connect_mode,
    jvm_line_level,
    lean_conf,
    log4j_config_path,
    master_configured,
    quiet_spark_conf,
    spark_defaults,
    spark_session,
    survivable_conf,
    uses_local_python,
)
from cola_helpers import RUN_SPLIT_AND_SAY


@pytest.mark.parametrize(
    ("master", "local"),
    [
        ("local", True),
        ("local[2]", True),
        ("local[*]", True),
        ("local-cluster[2,1,1024]", True),
        ("spark://h:7077", True),
        ("yarn", False),
        ("k8s://https://kube:6443", False),
        ("sc://host:15002", False),
        ("mesos://h:5050", False),
    ],
)
def test_uses_local_python_for_local_mode_and_a_standalone_cluster_only(master, local):
    assert uses_local_python(master) is local


def test_connect_mode_follows_spark_remote(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("SPARK_CONNECT_MODE_ENABLED", raising=False)
    assert connect_mode() is False
    monkeypatch.setenv("SPARK_REMOTE", "sc://host:15002")
    assert connect_mode() is True
    monkeypatch.delenv("SPARK_REMOTE")
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    assert connect_mode() is True


def test_a_direct_run_finds_a_master_configured_elsewhere(tmp_path, monkeypatch):
    for name in ("PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert master_configured([]) is False
    assert master_configured([("spark.master", "local[2]")]) is True
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--master yarn pyspark-shell")
    assert master_configured([]) is True
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    (tmp_path / "spark-defaults.conf").write_text("# defaults\nspark.executor.memory 2g\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert master_configured([]) is False
    (tmp_path / "spark-defaults.conf").write_text("spark.executor.memory 2g\nspark.master   spark://h:7077\n")
    assert master_configured([]) is True


def test_spark_home_conf_is_read_when_spark_conf_dir_is_unset(tmp_path, monkeypatch):
    for name in ("PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert master_configured([]) is False  # no conf/spark-defaults.conf: nothing configured
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text("\nspark.master yarn\n")
    assert master_configured([]) is True


# -- quiet Spark: the shipped log4j configuration and no progress bar, unless the user says otherwise


CONFIG_URI = log4j_config_path().as_uri()
OURS = f"-Dlog4j2.configurationFile={CONFIG_URI}"


def test_the_shipped_log4j_config_keeps_spark_at_warn_and_quiets_the_native_hadoop_notice():
    path = log4j_config_path()
    assert path == Path(cola_core.__file__).resolve().parent / "log4j2.properties"
    settings = spark_defaults(path)  # a properties file, as spark-defaults.conf is
    assert settings["rootLogger.level"] == "warn"
    assert settings["appender.console.target"] == "SYSTEM_ERR"
    assert settings["logger.nativecodeloader.name"] == "org.apache.hadoop.util.NativeCodeLoader"
    assert settings["logger.nativecodeloader.level"] == "error"


def test_quiet_settings_are_added_after_the_users_own():
    assert quiet_spark_conf(None, environ={}) == {
        "spark.ui.showConsoleProgress": "false", "spark.driver.extraJavaOptions": OURS,
    }
    conf = {"spark.ui.enabled": "false", "spark.driver.extraJavaOptions": " -Xss4m -Dcola.flag=1 "}
    assert quiet_spark_conf(conf, environ={}) == {
        "spark.ui.enabled": "false",
        "spark.driver.extraJavaOptions": f"-Xss4m -Dcola.flag=1 {OURS}",
        "spark.ui.showConsoleProgress": "false",
    }
    assert conf == {"spark.ui.enabled": "false", "spark.driver.extraJavaOptions": " -Xss4m -Dcola.flag=1 "}
    # A --conf replaces the properties file's value: the file's options are carried over, then ours.
    assert quiet_spark_conf({}, {"spark.driver.extraJavaOptions": "-Dfrom.file=1"}, environ={}) == {
        "spark.ui.showConsoleProgress": "false", "spark.driver.extraJavaOptions": f"-Dfrom.file=1 {OURS}",
    }
    # ...but the conf's options are the ones spark-submit uses when both give some.
    assert quiet_spark_conf(
        {"spark.driver.extraJavaOptions": "-Dfrom.conf=1"}, {"spark.driver.extraJavaOptions": "-Dfrom.file=1"},
        environ={},
    )["spark.driver.extraJavaOptions"] == f"-Dfrom.conf=1 {OURS}"


def test_the_users_progress_bar_setting_wins():
    assert quiet_spark_conf({"spark.ui.showConsoleProgress": "true"}, environ={}) == {
        "spark.ui.showConsoleProgress": "true", "spark.driver.extraJavaOptions": OURS,
    }
    assert quiet_spark_conf({}, {"spark.ui.showConsoleProgress": "true"}, environ={}) == {
        "spark.driver.extraJavaOptions": OURS,
    }


@pytest.mark.parametrize(
    ("conf", "defaults", "environ"),
    [
        ({"spark.driver.extraJavaOptions": "-Xss4m -Dlog4j2.configurationFile=/etc/mine.xml"}, {}, {}),
        ({"spark.driver.extraJavaOptions": "-Dlog4j.configurationFile=file:/etc/mine.properties"}, {}, {}),
        ({}, {"spark.driver.extraJavaOptions": "-Dlog4j.configurationFile=/etc/mine.properties"}, {}),
        ({"spark.driver.defaultJavaOptions": "-Dlog4j2.configurationFile=/etc/admin.xml"}, {}, {}),
        ({}, {"spark.driver.defaultJavaOptions": "-Dlog4j2.configurationFile=/etc/admin.xml"}, {}),
        ({}, {}, {"SPARK_SUBMIT_OPTS": "-Dlog4j2.configurationFile=/etc/mine.xml"}),
        ({}, {}, {"JAVA_TOOL_OPTIONS": "-Dlog4j.configurationFile=/etc/mine.xml"}),
        ({}, {}, {"LOG4J_CONFIGURATION_FILE": "/etc/mine.xml"}),
    ],
    ids=["conf", "conf-log4j1-name", "properties-file", "default-options", "default-options-in-file",
         "spark-submit-opts", "java-tool-options", "log4j-environment"],
)
def test_a_log4j_configuration_the_user_names_wins(conf, defaults, environ):
    settings = quiet_spark_conf(conf, defaults, environ=environ)
    assert settings == {**conf, "spark.ui.showConsoleProgress": "false"}


def test_a_log4j2_file_in_sparks_conf_folder_wins(tmp_path):
    assert quiet_spark_conf({}, environ={"SPARK_CONF_DIR": str(tmp_path)})["spark.driver.extraJavaOptions"] == OURS
    (tmp_path / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert quiet_spark_conf({}, environ={"SPARK_CONF_DIR": str(tmp_path)}) == {"spark.ui.showConsoleProgress": "false"}
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "log4j2.xml").write_text("<Configuration/>\n")
    assert quiet_spark_conf({}, environ={"SPARK_HOME": str(tmp_path)}) == {"spark.ui.showConsoleProgress": "false"}


def test_spark_defaults_reads_a_properties_file_as_spark_submit_does(tmp_path, monkeypatch):
    path = tmp_path / "job.conf"
    path.write_text(
        "# comment\n! another\n\nspark.master   local[2]\nspark.executor.memory=2g\n"
        "spark.driver.extraJavaOptions  -Xss4m -Da=b  \n  spark.app.name : cola job\n"
    )
    assert spark_defaults(path) == {
        "spark.master": "local[2]", "spark.executor.memory": "2g",
        "spark.driver.extraJavaOptions": "-Xss4m -Da=b", "spark.app.name": "cola job",
    }
    assert spark_defaults(tmp_path / "missing.conf") == {}
    # Without a file: spark-defaults.conf of SPARK_CONF_DIR (the environment given, or this one's).
    (tmp_path / "spark-defaults.conf").write_text("spark.ui.showConsoleProgress true\n")
    assert spark_defaults(environ={"SPARK_CONF_DIR": str(tmp_path)}) == {"spark.ui.showConsoleProgress": "true"}
    assert spark_defaults(environ={}) == {}
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert spark_defaults() == {"spark.ui.showConsoleProgress": "true"}


@pytest.mark.parametrize(
    ("line", "previous", "level"),
    [
        ("26/01/01 10:00:00 WARN NativeCodeLoader: Unable to load native-hadoop library", None, logging.WARNING),
        ("26/01/01 10:00:00 ERROR Executor: Exception in task 0.0", logging.INFO, logging.ERROR),
        ("26/01/01 10:00:00 INFO SparkContext: Running Spark version 4.2.0", None, logging.INFO),
        ("26/01/01 10:00:00 DEBUG Foo: bar", None, logging.DEBUG),
        ("26/01/01 10:00:00 FATAL Foo: bar", None, logging.CRITICAL),
        ('{"ts":"2026-01-01T10:00:00.000Z","level":"WARN","msg":"x","logger":"Foo"}', None, logging.WARNING),
        # A stack trace continues the record before it.
        ("java.lang.RuntimeException: boom", logging.ERROR, logging.ERROR),
        ("\tat org.apache.spark.Foo.bar(Foo.scala:1)", logging.ERROR, logging.ERROR),
        # Before any record: the JVM's own output.
        ("Error: Could not find or load main class", None, logging.WARNING),
        ("WARNING: Using incubator modules: jdk.incubator.vector", None, logging.DEBUG),
        ("Warning: Java versions > Java 11 can only operate in restricted mode where no off-heap operations are "
         "allowed!", None, logging.DEBUG),
    ],
)
def test_each_line_of_the_jvms_stderr_has_its_own_level(line, previous, level):
    assert jvm_line_level(line, previous) == level


# -- for real: a session started here, in a process of its own (a JVM is started once per process)

SESSION_PROBE = """
import json, sys
from cola_core.storage.session import spark_session
conf = {"spark.ui.enabled": "false", **json.loads(sys.argv[1])}  # other runs may hold port 4040
lines = []
collect = (lambda level, line: lines.append([level, line])) if sys.argv[2] == "jvm_log" else None
spark, started = spark_session("local[1]", conf.items(), jvm_log=collect)
jvm = spark.sparkContext._jvm
spark.range(100).selectExpr("sum(id)").collect()
jvm.org.slf4j.LoggerFactory.getLogger("cola.probe").warn("a warning from the JVM")
jvm.org.slf4j.LoggerFactory.getLogger("cola.probe").info("an info line from the JVM")
seen = {
    "root": str(jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel()),
    "progress": spark.conf.get("spark.ui.showConsoleProgress"),
    "call_sites": spark.conf.get("spark.python.sql.dataFrameDebugging.enabled"),
    "options": spark.conf.get("spark.driver.extraJavaOptions"),
    "started": started,
}
spark.stop()
import time; time.sleep(0.5)  # the forwarding thread hands the last lines over
print(json.dumps({**seen, "lines": lines}))
"""
TIMESTAMPED = re.compile(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} ")


def probe(tmp_path, conf, mode):
    env = {key: value for key, value in os.environ.items() if key not in ("PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR")}
    done = subprocess.run(
        [sys.executable, "-c", SESSION_PROBE, json.dumps(conf), mode],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


@pytest.mark.spark
def test_a_session_started_here_logs_at_warn_without_a_progress_bar_its_stderr_to_jvm_log(tmp_path):
    seen, stderr = probe(tmp_path, {}, "jvm_log")

    assert (seen["root"], seen["progress"], seen["options"], seen["started"]) == ("WARN", "false", OURS, True)
    # PySpark records no call sites: a third of a wide block's driver time (lean_conf).
    assert seen["call_sites"] == "false"
    # Nothing reached this process's stderr: every line went to jvm_log, with its level.
    assert stderr == ""
    assert [(level, TIMESTAMPED.sub("", line)) for level, line in seen["lines"]] == [
        (logging.DEBUG, "WARNING: Using incubator modules: jdk.incubator.vector"),
        (logging.WARNING, "WARN probe: a warning from the JVM"),
    ]


@pytest.mark.spark
def test_without_jvm_log_the_jvm_writes_to_stderr_and_the_users_log4j_config_wins(tmp_path):
    seen, stderr = probe(tmp_path, {}, "inherit")
    assert (seen["root"], seen["progress"], seen["lines"]) == ("WARN", "false", [])
    assert [TIMESTAMPED.sub("", line) for line in stderr.splitlines()] == [
        "WARNING: Using incubator modules: jdk.incubator.vector",
        "WARN probe: a warning from the JVM",
    ]

    info = tmp_path / "info.properties"
    info.write_text(
        "rootLogger.level = info\nrootLogger.appenderRef.stderr.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\nappender.console.layout.pattern = %p %c{1}: %m%n\n"
    )
    conf = {
        "spark.driver.extraJavaOptions": f"-Dlog4j.configurationFile={info}", "spark.ui.showConsoleProgress": "true",
        "spark.python.sql.dataFrameDebugging.enabled": "true",
    }
    seen, stderr = probe(tmp_path, conf, "inherit")
    assert (seen["root"], seen["progress"], seen["options"]) == ("INFO", "true", f"-Dlog4j.configurationFile={info}")
    assert seen["call_sites"] == "true"
    # Their layout (no timestamp) is the one in use. (Spark itself then shows a session that
    # pyspark starts at WARN, as it does a shell: it says so in "Setting default log level".)
    assert "WARN probe: a warning from the JVM" in stderr.splitlines()


def test_a_connect_session_is_refused_beside_a_running_classic_one(spark):
    # pyspark cannot hold both kinds in one process; reusing the classic one would run elsewhere.
    with pytest.raises(ColaError) as raised:
        spark_session("sc://127.0.0.1:15002")
    assert str(raised.value) == (
        "a classic Spark session is already running in this process, so it cannot also be a Spark Connect "
        "client; run the Cola task in a process of its own (or stop that session first)"
    )
    assert spark_session("local[1]") == (spark, False)


def test_pyspark_records_no_call_sites_unless_the_user_asks():
    off = {"spark.python.sql.dataFrameDebugging.enabled": "false"}
    assert lean_conf({"a": "1"}) == {"a": "1", **off}
    assert lean_conf({"spark.python.sql.dataFrameDebugging.enabled": "true"}) == {
        "spark.python.sql.dataFrameDebugging.enabled": "true"
    }
    assert lean_conf({}, {"spark.python.sql.dataFrameDebugging.enabled": "true"}) == {}


def test_a_local_session_lets_a_task_that_runs_out_of_memory_fail_without_killing_the_jvm():
    assert survivable_conf("local[2]", {"a": "1"}) == {"a": "1", "spark.executor.killOnFatalError.depth": "0"}
    assert survivable_conf("local[2]", {"spark.executor.killOnFatalError.depth": "5"}) == {
        "spark.executor.killOnFatalError.depth": "5"
    }
    assert survivable_conf("local", {}, {"spark.executor.killOnFatalError.depth": "3"}) == {}
    # On a cluster a lost executor is replaced, and the job fails without taking the driver with it.
    assert survivable_conf("yarn", {}) == survivable_conf("spark://127.0.0.1:7077", {}) == {}
    assert survivable_conf(None, {}) == {}


ROW_BUILT = "size(array_repeat(id, cast(id * 600000000 AS int))) >= 0"
_OUT_OF_MEMORY = f"""
import json, os, sys
from cola_core import Cola
from cola_core.storage.session import spark_session
out = sys.argv[1]
# A small JVM: each row past the first asks for an array of 600 million longs or more.
spark, _ = spark_session("local[1]", [("spark.driver.memory", "512m"), ("spark.ui.enabled", "false"),
                                       ("spark.sql.shuffle.partitions", "1")])
df = spark.range(4)
rules = [{{"type": "expression", "expression": "{ROW_BUILT}"}}, {{"type": "row_count", "min": 1}},
         {{"type": "not_null", "columns": ["id"]}}]
""" + RUN_SPLIT_AND_SAY


@pytest.mark.spark
def test_a_rule_that_exhausts_the_memory_on_its_rows_fails_alone_and_the_session_survives(tmp_path):
    """The issue's per-row form, whose size the data gives (a constant one is refused before
    Spark): in local mode Spark's default kills the executor, which is the whole JVM."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY, str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.splitlines()[-1])
    unmeasured = f"expression({ROW_BUILT}): Spark could not evaluate the rule on this data: " \
                 "java.lang.OutOfMemoryError: Java heap space"
    assert outcome == {
        "results": [["fail", unmeasured], ["pass", "row_count = 4 is within bounds (min 1)"],
                    ["pass", "not_null(id): no NULL values"]],
        # The split cannot place the rows, says why, and leaves no staging folder behind.
        "split": ["ColaError", f"the split cannot be written, as a row rule fails on the data: {unmeasured}"],
        "left": [],
        "alive": 3,
    }

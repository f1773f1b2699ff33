"""The Spark session a Cola job runs in: one factory for the command line and the decorator.

A session already active in the process is used as it is (and left running). Otherwise one
is started, and the caller stops it when done.

Spark is quiet unless the user's settings say otherwise (:func:`quiet_spark_conf`): the JVM
logs with the ``log4j2.properties`` shipped in this package (warnings and errors only, the
known noise left out), and there is no console progress bar. The operators add the same
settings to the spark-submit they run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cola_core.common.sessions import is_classic
from cola_core.errors import ColaError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# What pyspark sets when it starts a Connect client, put back by stop_session.
_CONNECT_ENVIRONMENT = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
_ENVIRONMENT_BEFORE: weakref.WeakKeyDictionary[Any, dict[str, str | None]] = weakref.WeakKeyDictionary()

__all__ = [
    "JvmLog",
    "connect_mode",
    "driver_conf",
    "jvm_line_level",
    "jvm_noise",
    "lean_conf",
    "load_sketches_quietly",
    "log4j_config_path",
    "master_configured",
    "quiet_spark_conf",
    "spark_defaults",
    "spark_session",
    "stop_session",
    "survivable_conf",
    "uses_local_python",
]

JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# Set by administrators; Spark puts it before extraJavaOptions.
DEFAULT_JAVA_OPTIONS = "spark.driver.defaultJavaOptions"
PROGRESS_BAR = "spark.ui.showConsoleProgress"
KILL_ON_FATAL_ERROR = "spark.executor.killOnFatalError.depth"
# While on (PySpark's default), every Column method records its Python call site in the JVM
# first: several Py4J round trips per operator, a third of the driver time of a wide block's
# plan. The call sites it records are the engine's own lines, of no use in a user's error.
CALL_SITES = "spark.python.sql.dataFrameDebugging.enabled"
# log4j2 reads either name (the second is log4j 1's, which log4j2 still honours).
_LOG4J_PROPERTIES = ("log4j2.configurationFile", "log4j.configurationFile")
_LOG4J_OPTION = re.compile(r"-Dlog4j2?\.configurationFile=")
# What log4j2 finds on its own in Spark's conf folder (which spark-class puts on the classpath).
_LOG4J_FILES = ("log4j2.properties", "log4j2.xml", "log4j2.json", "log4j2.yaml", "log4j2.yml")

JvmLog = Callable[[int, str], None]
"""Receives each line the JVM writes to its stderr, with the ``logging`` level it was logged at."""


def uses_local_python(master: str) -> bool:
    """Whether executors of ``master`` run this machine's Python: local mode and a standalone
    cluster here do; on YARN or Kubernetes the executors' Python is the cluster's business."""
    return master.startswith(("local", "spark://"))


def connect_mode() -> bool:
    """Whether pyspark is set to reach Spark through Spark Connect (``SPARK_REMOTE``)."""
    return any(os.environ.get(name) for name in _CONNECT_ENVIRONMENT)


def master_configured(conf: Iterable[tuple[str, str]]) -> bool:
    """Whether a direct run already has a master: in ``conf``, PYSPARK_SUBMIT_ARGS or spark-defaults.conf."""
    if any(key == "spark.master" for key, _ in conf):
        return True
    if "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return True
    return "spark.master" in spark_defaults()


def _conf_dir(environ: Mapping[str, str]) -> str | None:
    """Spark's conf folder, as spark-submit finds it: SPARK_CONF_DIR, else SPARK_HOME/conf."""
    if environ.get("SPARK_CONF_DIR"):
        return environ["SPARK_CONF_DIR"]
    return os.path.join(environ["SPARK_HOME"], "conf") if environ.get("SPARK_HOME") else None


def spark_defaults(
    properties_file: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The settings spark-submit reads from a file: ``properties_file``, else spark-defaults.conf.

    spark-defaults.conf is looked for in SPARK_CONF_DIR, else SPARK_HOME/conf. Lines are read
    as spark-submit reads that file: ``key value`` or ``key=value``, the value trimmed, ``#``
    and ``!`` comments skipped (a line continued with a backslash is not joined). A file that
    cannot be read gives no settings.
    """
    environ = os.environ if environ is None else environ
    if properties_file is None:
        folder = _conf_dir(environ)
        if folder is None:
            return {}
        properties_file = Path(folder, "spark-defaults.conf")
    try:
        lines = Path(properties_file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    settings: dict[str, str] = {}
    for line in lines:
        match = re.match(r"\s*([^\s=:#!][^\s=:]*)\s*[=:\s]?\s*(.*)$", line)
        if match:
            settings[match.group(1)] = match.group(2).strip()
    return settings


def log4j_config_path() -> Path:
    """The ``log4j2.properties`` shipped in this package: Spark at WARN, known noise left out."""
    return Path(__file__).resolve().parents[1] / "log4j2.properties"  # cola_core/, beside py.typed


def _names_log4j_config(options: str) -> bool:
    return bool(_LOG4J_OPTION.search(options))


def quiet_spark_conf(
    conf: Mapping[str, Any] | None,
    defaults: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``conf`` with Cola's quiet logging added where the user has not said otherwise.

    - ``spark.ui.showConsoleProgress=false``, unless ``conf`` or ``defaults`` set it;
    - ``-Dlog4j2.configurationFile=<log4j_config_path()>`` appended to
      ``spark.driver.extraJavaOptions``, after the options the user gave there (in ``conf``,
      else in ``defaults``, since a ``--conf`` replaces the file's value), unless the user
      already names a log4j configuration: a ``-Dlog4j2.configurationFile`` or
      ``-Dlog4j.configurationFile`` in those options, in ``spark.driver.defaultJavaOptions``,
      in ``SPARK_SUBMIT_OPTS`` or ``JAVA_TOOL_OPTIONS``; ``LOG4J_CONFIGURATION_FILE``; or a
      log4j2 file in Spark's conf folder (which spark-submit puts on the classpath).

    Args:
        conf: the settings given with the job (``--conf``); not changed.
        defaults: the settings of the properties file spark-submit reads (:func:`spark_defaults`).
        environ: the environment spark-submit runs in (``os.environ`` by default).

    Returns:
        A new dict: ``conf``'s settings, then the added ones.
    """
    settings = dict(conf or {})
    defaults = defaults or {}
    environ = os.environ if environ is None else environ
    if PROGRESS_BAR not in settings and PROGRESS_BAR not in defaults:
        settings[PROGRESS_BAR] = "false"
    options = str(settings[JAVA_OPTIONS]) if JAVA_OPTIONS in settings else defaults.get(JAVA_OPTIONS, "")
    named = [
        options,
        str(settings.get(DEFAULT_JAVA_OPTIONS, defaults.get(DEFAULT_JAVA_OPTIONS, ""))),
        environ.get("SPARK_SUBMIT_OPTS", ""),
        environ.get("JAVA_TOOL_OPTIONS", ""),
    ]
    folder = _conf_dir(environ)
    if (
        # An install without the file (built without its package data): log4j2 would complain.
        not log4j_config_path().is_file()
        or any(_names_log4j_config(text) for text in named)
        or environ.get("LOG4J_CONFIGURATION_FILE")
        or (folder is not None and any(Path(folder, name).is_file() for name in _LOG4J_FILES))
    ):
        return settings
    # A file: URI has no spaces to quote: Spark splits these options as a shell would.
    ours = f"-D{_LOG4J_PROPERTIES[0]}={log4j_config_path().as_uri()}"
    settings[JAVA_OPTIONS] = f"{options.strip()} {ours}".strip()
    return settings


def survivable_conf(
    master: str | None, conf: Mapping[str, Any] | None, defaults: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``conf`` with ``spark.executor.killOnFatalError.depth=0`` for a local master, unless
    ``conf`` or ``defaults`` set it.

    In local mode the executor is a thread pool of the driver's own JVM, and Spark kills an
    executor whose task meets an ``OutOfMemoryError``: the whole JVM, and the session with
    it. With depth 0 the task fails instead, so a rule that builds values too large for the
    memory (``repeat(name, id * 1000000000)``) comes back as that rule's failure and the run
    goes on. On a cluster the default stays: a lost executor is replaced, and the job fails
    without taking the driver with it.
    """
    settings = dict(conf or {})
    if master is None or not master.startswith("local"):
        return settings
    if KILL_ON_FATAL_ERROR not in settings and KILL_ON_FATAL_ERROR not in (defaults or {}):
        settings[KILL_ON_FATAL_ERROR] = "0"
    return settings


def lean_conf(conf: Mapping[str, Any] | None, defaults: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``conf`` with PySpark's recording of call sites off (``CALL_SITES=false``), unless
    ``conf`` or ``defaults`` set it. A static setting: it must be given when the session starts."""
    settings = dict(conf or {})
    if CALL_SITES not in settings and CALL_SITES not in (defaults or {}):
        settings[CALL_SITES] = "false"
    return settings


def driver_conf(
    master: str | None,
    conf: Mapping[str, Any] | None,
    defaults: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``conf`` with every setting Cola adds to a driver it starts here, each unless the user
    set it: :func:`quiet_spark_conf`'s, :func:`survivable_conf`'s and :func:`lean_conf`'s."""
    return lean_conf(survivable_conf(master, quiet_spark_conf(conf, defaults, environ), defaults), defaults)


def spark_session(
    master: str | None = None,
    conf: Iterable[tuple[str, str]] = (),
    app_name: str = "cola",
    jvm_log: JvmLog | None = None,
) -> tuple[SparkSession, bool]:
    """The session to run in, and whether this call started it (and so must stop it).

    A session this call starts in classic mode gets :func:`driver_conf`'s settings (checked
    against spark-defaults.conf, or the ``--properties-file`` in PYSPARK_SUBMIT_ARGS).

    Args:
        master: a master URL (``local[2]``, ``spark://...``, ``yarn``) or a Spark Connect
            one (``sc://host:15002``). Without one, spark-submit's master is used, or
            ``local[*]`` when the process was not launched by spark-submit and nothing else
            (``--conf``, PYSPARK_SUBMIT_ARGS, spark-defaults.conf, SPARK_REMOTE) names one.
        conf: Spark settings for a session this call starts.
        app_name: the application's name, unless spark-submit or ``conf`` gives one.
        jvm_log: when this call starts the JVM, each line the JVM writes to its stderr goes
            here, with its level (:func:`jvm_line_level`), instead of to this process's
            stderr. For a task runner that logs a child's stderr as errors (Airflow's).
            Later sessions of the process reuse that JVM, and its lines go to the latest
            ``jvm_log`` given.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        if master is not None and master.startswith("sc://") and is_classic(active):
            # pyspark cannot hold a Connect client beside a classic session in one process, and
            # reusing the classic one would quietly run the job somewhere else than asked.
            raise ColaError(
                "a classic Spark session is already running in this process, so it cannot also be a Spark "
                "Connect client; run the Cola task in a process of its own (or stop that session first)"
            )
        return active, False
    settings = dict(conf)
    launched_by_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    remote = connect_mode() or (master is not None and master.startswith("sc://"))
    builder = SparkSession.builder
    if (
        master is None
        and not launched_by_spark_submit
        and not connect_mode()
        and not master_configured(settings.items())
    ):
        master = "local[*]"
    if master is not None:
        builder = builder.remote(master) if master.startswith("sc://") else builder.master(master)
        # Python workers would otherwise run whatever python3 is on PATH.
        if uses_local_python(master) and "spark.pyspark.python" not in settings and "PYSPARK_PYTHON" not in os.environ:
            settings["spark.pyspark.python"] = sys.executable
    if not launched_by_spark_submit and not remote:
        # spark-submit's own settings were fixed when it started the JVM; a Connect server's are its own.
        defaults = spark_defaults(_submit_args_properties_file())
        settings = driver_conf(master, settings, defaults)
    if not launched_by_spark_submit and "spark.app.name" not in settings:
        builder = builder.appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    if jvm_log is not None and not launched_by_spark_submit and not remote:
        options = {"spark.app.name": app_name, **({"spark.master": master} if master is not None else {})}
        _start_jvm_logging_to(jvm_log, {**options, **{key: str(value) for key, value in settings.items()}})
    # pyspark marks the process as a Connect client in os.environ, and leaves it so after stop().
    before = {name: os.environ.get(name) for name in _CONNECT_ENVIRONMENT} if remote else None
    session = builder.getOrCreate()
    if before is not None:
        _ENVIRONMENT_BEFORE[session] = before
    return session, True


def stop_session(spark: SparkSession) -> None:
    """Stop a session :func:`spark_session` started, and leave the process as it was before.

    After a Spark Connect session, pyspark would take every later session of the process (a
    classic ``@cola_check`` after a Connect task in one ``airflow dags test``) and every child
    spark-submit for a Connect client too.
    """
    spark.stop()
    for name, value in _ENVIRONMENT_BEFORE.pop(spark, {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _submit_args_properties_file() -> str | None:
    """The ``--properties-file`` in PYSPARK_SUBMIT_ARGS (which pyspark passes to spark-submit), if any."""
    try:
        words = shlex.split(os.environ.get("PYSPARK_SUBMIT_ARGS", ""))
    except ValueError:
        return None
    for index, word in enumerate(words):
        if word == "--properties-file" and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--properties-file="):
            return word.split("=", 1)[1]
    return None


_jvm_log_target: list[JvmLog] = []
# A log4j line in Spark's layout ("26/01/01 00:00:00 WARN Logger: ...") or its JSON one.
_LOG4J_LEVEL = re.compile(
    r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) "
    r"|^\{\"ts\":.*?\"level\":\"(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\""
)
_LEVELS = {
    "TRACE": logging.DEBUG, "DEBUG": logging.DEBUG, "INFO": logging.INFO,
    "WARN": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL,
}
# Printed by the JVM itself on every start: Spark's launcher always adds this module.
_JVM_NOISE = (
    "WARNING: Using incubator modules: jdk.incubator.vector",
    # Printed (System.err, not a logger) by the DataSketches library the first time a JVM on
    # Java 17 or later loads it, as a profile's distinct estimates do; Spark uses it on the heap only.
    "Warning: Java versions > Java 11 can only operate in restricted mode where no off-heap operations are allowed!",
)
# The DataSketches class whose loading prints that notice (datasketches-memory 3 and later).
_SKETCH_MEMORY_CLASS = "org.apache.datasketches.memory.internal.ResourceImpl"


def jvm_noise(line: str) -> bool:
    """Whether ``line`` is output the JVM prints whatever the job: the notice about the
    incubator module that Spark's launcher always adds, and DataSketches' notice about Java
    versions."""
    return line.strip() in _JVM_NOISE


def load_sketches_quietly(spark: SparkSession) -> None:
    """Load DataSketches' memory classes in this process's JVM with its stderr muted, so
    that the notice they print once per JVM (see ``_JVM_NOISE``) is not written to a
    console or a task log that pyspark left the JVM's stderr on. A classic session only
    (a Connect server's output is its own); nothing when the class is not there."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return
    system = jvm.java.lang.System
    stderr = system.err
    try:
        system.setErr(jvm.java.io.PrintStream(jvm.java.io.OutputStream.nullOutputStream()))
        jvm.java.lang.Class.forName(_SKETCH_MEMORY_CLASS)
    except Exception:
        pass  # the class is not there: an older DataSketches, which prints nothing of the kind
    finally:
        system.setErr(stderr)


def jvm_line_level(line: str, previous: int | None = None) -> int:
    """The ``logging`` level of one line of the JVM's stderr.

    A log4j line has its own level. Any other line continues the record before it (a stack
    trace), so it has that record's level; before any record, it is the JVM's own output,
    a warning. The JVM's start-up notice about the incubator module Spark always loads is
    DEBUG: it says nothing about the job.
    """
    match = _LOG4J_LEVEL.match(line)
    if match:
        return _LEVELS[match.group(1) or match.group(2)]
    if jvm_noise(line):
        return logging.DEBUG
    return logging.WARNING if previous is None else previous


def _start_jvm_logging_to(jvm_log: JvmLog, settings: Mapping[str, str]) -> None:
    """Start the JVM with ``settings`` (as ``SparkSession.builder`` would), its stderr piped to
    ``jvm_log``; only when this process has no JVM yet.

    pyspark's ``launch_gateway`` takes ``popen_kwargs`` for this (capturing the JVM's output);
    ``SparkContext(gateway=...)`` then runs on that JVM, and the builder takes that context.
    """
    from subprocess import PIPE

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    _jvm_log_target[:] = [jvm_log]
    # Set once pyspark has started this process's JVM: there must never be a second one.
    if SparkContext._gateway is not None:
        return
    conf = SparkConf()
    for key, value in settings.items():
        conf.set(key, value)
    gateway = launch_gateway(conf, popen_kwargs={"stderr": PIPE})  # type: ignore[no-untyped-call]
    process = getattr(gateway, "proc", None)
    if process is not None and process.stderr is not None:
        threading.Thread(
            target=_forward_jvm_stderr, args=(process.stderr,), name="cola-jvm-stderr", daemon=True
        ).start()
    SparkContext(conf=conf, gateway=gateway)


def _forward_jvm_stderr(stream: IO[bytes]) -> None:
    """Hand each line of the JVM's stderr to the latest ``jvm_log``, until the JVM exits.

    Nothing may stop this loop early: a JVM whose stderr pipe is full stops too.
    """
    record: int | None = None
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line.strip():
            continue
        level = jvm_line_level(line, record)
        if _LOG4J_LEVEL.match(line):
            record = level
        try:
            for target in list(_jvm_log_target):
                target(level, line)
        except Exception:
            with contextlib.suppress(Exception):
                print(line, file=sys.__stderr__, flush=True)

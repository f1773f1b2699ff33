"""A local Spark Connect server for the tests, started from the installed pyspark.

The pyspark wheel ships the server (``pyspark/jars/spark-connect_*.jar``): ``spark-submit``
runs its main class in local mode, bound to 127.0.0.1 on a free port. The engine suite
(``COLA_SPARK_CONNECT=1``) and the Airflow end-to-end tests over Connect both use it, and
always stop it, however the tests end.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The JVM option of the tests' short-lived JVMs (command-line runs, spark-submits, DAG runs):
# compiling with C1 alone starts them about 20% sooner. A JVM that serves a whole run (the
# Connect server here, the engine suite's session) leaves it out.
FAST_JVM = "-XX:TieredStopAtLevel=1"

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# Port readiness takes 10 to 20 s on these machines; a slow, loaded one gets more.
READY_TIMEOUT = 120


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def connect_server(conf: dict[str, str] | None = None) -> Iterator[str]:
    """Start a server and yield its URL (``sc://127.0.0.1:PORT``); stop it on exit.

    Raises:
        RuntimeError: the server exited or did not listen in time (with its log's tail).
    """
    port = _free_port()
    bin_dir = Path(sys.executable).parent
    settings = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.memory": "2g",
        **(conf or {}),
    }
    command = [str(bin_dir / "spark-submit"), "--class", SERVER_CLASS, "--master", "local[2]"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    env = {
        **os.environ,
        # pyspark-client's pyspark/ defaults every launcher to Connect mode; the server is classic.
        "SPARK_CONNECT_MODE": "0",
        "PYSPARK_PYTHON": sys.executable,
        # spark-submit's find-spark-home runs the python3 on PATH: make it this venv's.
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    env.pop("SPARK_REMOTE", None)
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    if env.get("SPARK_SUBMIT_OPTS") == FAST_JVM:
        del env["SPARK_SUBMIT_OPTS"]  # FAST_JVM is for short runs; the server serves a whole one
    log = tempfile.NamedTemporaryFile(prefix="cola-connect-", suffix=".log", delete=False)  # noqa: SIM115
    # Its own process group, so that stopping it also stops the JVM spark-submit started.
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while not _listening(port):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = Path(log.name).read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the Spark Connect server did not start (exit {process.poll()}):\n{tail}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        _stop(process)
        log.close()
        os.unlink(log.name)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

"""ColaCheckOperator against a real Spark standalone master and worker on 127.0.0.1.

Both are started from the installed pyspark with ``spark-class``, on free ports, and stopped
at the end whatever happens. The check runs in client mode: the driver runs here, and the
executor on the worker.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cola_expected import ORDERS_FAIL_SUMMARY

pytestmark = [pytest.mark.cluster, pytest.mark.airflow, pytest.mark.spark]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(log: Path, text: str, process: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"{text!r} never appeared in {log}:\n{log.read_text(errors='replace')[-3000:]}")


def stop(process: subprocess.Popen) -> None:
    """Stop a daemon and everything it started (the worker's executors)."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)


@pytest.fixture
def standalone_cluster(tmp_path):
    """A master and one worker (1 core, 1 GB); yields (master URL, master log, worker log)."""
    venv_bin = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        # spark-class runs find-spark-home, which needs this Python (and pyspark) on PATH.
        "PATH": os.pathsep.join([venv_bin, os.environ.get("PATH", "")]),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_WORKER_DIR": str(tmp_path / "work"),
        "SPARK_LOG_DIR": str(tmp_path / "logs"),
    }
    spark_class = str(Path(venv_bin) / "spark-class")
    master_port, worker_port = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{master_port}"
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    daemons: list[subprocess.Popen] = []
    try:
        with master_log.open("w") as out:
            daemons.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(master_port), "--webui-port", str(free_port())],
                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            ))
        wait_for(master_log, "I have been elected leader!", daemons[0])
        with worker_log.open("w") as out:
            daemons.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                 "--port", str(worker_port), "--webui-port", str(free_port()),
                 "--cores", "1", "--memory", "1g", master_url],
                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            ))
        wait_for(worker_log, "Successfully registered with master", daemons[1])
        yield master_url, master_log, worker_log
    finally:
        for daemon in reversed(daemons):
            stop(daemon)


def test_check_runs_on_a_standalone_cluster(standalone_cluster, run_dag, monkeypatch):
    master_url, master_log, worker_log = standalone_cluster
    host, port = master_url.rsplit(":", 1)
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", json.dumps({"conn_type": "spark", "host": host, "port": int(port)}))

    outcome = run_dag("cola_test_cluster", "2024-01-03")

    assert outcome.states == {"check_orders": "success"}
    assert outcome.xcom["check_orders"] == ORDERS_FAIL_SUMMARY
    assert f"--master {master_url} " in outcome.log
    # The master registered the application and the worker ran its executor.
    assert "Registering app cola-cola_test_cluster-check_orders" in master_log.read_text()
    assert "Asked to launch executor app-" in worker_log.read_text()

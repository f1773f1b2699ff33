"""The operators over Spark Connect: the example DAGs, unchanged, on a real server.

The DAGs' ``spark_local`` connection is replaced, for these runs only, by a ``spark_connect``
connection to a local Spark Connect server; the operators then run the engine in the task's
process as a client of that server, with no spark-submit. Each run is ``airflow dags test``
in a process of its own: a Connect client cannot live beside the classic sessions other tests
of this process start. The outcome is read back from the real metadata database.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from cola_expected import (
    ORDERS_FAIL_SUMMARY,
    ORDERS_PROFILE,
    ORDERS_PROFILE_TABLE,
    ORDERS_SUGGESTIONS,
    SPLIT_FAIL_SUMMARY,
    costs_apart,
)
from connect_server import connect_server

pytestmark = [pytest.mark.airflow, pytest.mark.spark]


@pytest.fixture(scope="module")
def server_port():
    with connect_server() as url:
        yield urlsplit(url).port


def _dags_test(dag_id: str, day: str, port: int, conf: dict | None = None) -> subprocess.CompletedProcess:
    connection = {"conn_type": "spark_connect", "host": "127.0.0.1", "port": port}
    gone = {"conn_type": "spark_connect", "host": "127.0.0.1", "port": _free_port()}
    env = {
        **os.environ, "AIRFLOW_CONN_SPARK_LOCAL": json.dumps(connection), "AIRFLOW_CONN_SPARK_GONE": json.dumps(gone),
    }
    # Nothing on PATH can run spark-submit: a run that tried would fail.
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != os.path.dirname(sys.executable))
    command = [sys.executable, "-m", "airflow", "dags", "test", dag_id, day]
    if conf is not None:
        command += ["-c", json.dumps(conf)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)


def _free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (``spark_gone``: a Spark Connect server out of reach)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tries(dag_id: str, day: str) -> dict[str, int]:
    """How many times each task of the DAG run of ``day`` ran."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    logical_date = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
    with create_session() as session:
        run = session.scalars(
            select(DagRun).where(DagRun.dag_id == dag_id, DagRun.logical_date == logical_date)
        ).one()
        return {ti.task_id: ti.try_number for ti in run.get_task_instances(session=session)}


def _outcome(dag_id: str, day: str) -> tuple[dict, dict]:
    """Task states and XCom return values of the DAG run of ``day``."""
    from airflow.models.dagrun import DagRun
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    logical_date = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
    with create_session() as session:
        run = session.scalars(
            select(DagRun).where(DagRun.dag_id == dag_id, DagRun.logical_date == logical_date)
        ).one()
        states = {ti.task_id: getattr(ti.state, "value", ti.state) for ti in run.get_task_instances(session=session)}
        rows = session.scalars(XComModel.get_many(run_id=run.run_id, dag_ids=dag_id, key="return_value"))
        xcom, costs = costs_apart({row.task_id: XComModel.deserialize_value(row) for row in rows})
    # Over Spark Connect the client sees no SparkContext: the time alone is known.
    assert set(costs.values()) <= {(None, None, None, None)}, costs
    return states, xcom


def test_the_check_and_branch_example_runs_over_spark_connect(airflow_home, server_port):
    done = _dags_test("cola_check_and_branch", "2024-01-03", server_port)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-5000:]
    states, xcom = _outcome("cola_check_and_branch", "2024-01-03")
    assert states == {"check_orders": "success", "quarantine": "success", "load": "skipped", "notify": "skipped"}
    # The same XCom, field by field, as the spark-submit run of the same day (test_example_dags).
    assert xcom["check_orders"] == ORDERS_FAIL_SUMMARY
    assert f"Cola runs in this worker as a Spark Connect client of 127.0.0.1:{server_port}" in log
    assert "spark-submit" not in log


def test_the_split_example_runs_over_spark_connect(airflow_home, server_port, tmp_path):
    done = _dags_test("cola_split_quarantine", "2024-01-03", server_port, {"output_dir": str(tmp_path)})
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-5000:]
    states, xcom = _outcome("cola_split_quarantine", "2024-01-03")
    assert states == {"split_orders": "success", "announce": "success"}
    assert xcom["split_orders"] == SPLIT_FAIL_SUMMARY
    # Published from the client after the probe: the local server shares this machine's files.
    assert sorted(os.listdir(tmp_path / "2024-01-03")) == ["quarantine", "report", "valid"]


def test_the_decorator_and_the_profile_operator_are_connect_clients_of_a_spark_connect_connection(
    airflow_home, server_port, tmp_path
):
    done = _dags_test("cola_test_connect", "2024-01-03", server_port, {"folder": str(tmp_path)})
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-5000:]
    states, xcom = _outcome("cola_test_connect", "2024-01-03")
    assert states == {
        "orders_over_connect": "success", "profile_over_connect": "success", "contract_over_connect": "success",
    }
    assert "session: pyspark.sql.connect.session" in log
    gap = "schema[0].quality[1] (text, no single mustBe* operator)"
    assert xcom["contract_over_connect"]["contract_gaps"] == [gap]
    assert [r["severity"] for r in xcom["contract_over_connect"]["results"]] == [
        "pass", "fail", "pass", "warn", "fail", "pass",
    ]
    assert log.count(f"no rule checks these parts of the contract: {gap}") == 1
    results = xcom["orders_over_connect"]["results"]
    assert [(r["code"], r["severity"], r["message"]) for r in results] == [
        ("unique(order_id)", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)"),
        ("row_count", "pass", "row_count = 6 is within bounds (min 1)"),
    ]
    # The profile the spark-submit run of the same day pushes (test_profiling.py), and the rules
    # suggested from it (without a history), as JSON for a .json file.
    assert xcom["profile_over_connect"] == ORDERS_PROFILE
    suggestions = tmp_path / "orders.suggested.json"
    assert suggestions.read_text() == json.dumps({"rules": ORDERS_SUGGESTIONS}, indent=2) + "\n"
    assert f"Cola profiles in this worker as a Spark Connect client of 127.0.0.1:{server_port}" in log
    assert "Cola profile:\n" + "\n".join(ORDERS_PROFILE_TABLE) in log
    assert f"Cola wrote {len(ORDERS_SUGGESTIONS)} suggested rules to {suggestions}: review them" in log


def test_over_connect_failures_fail_once_and_only_a_lost_server_is_retried(airflow_home, server_port):
    done = _dags_test("cola_test_connect_failures", "2024-01-03", server_port)
    log = done.stdout + done.stderr
    states, xcom = _outcome("cola_test_connect_failures", "2024-01-03")
    assert states == dict.fromkeys(
        ("fails", "submit_only", "wrong_column", "profile_wrong_column", "decorator_wrong_column", "server_gone",
         "decorator_server_gone"),
        "failed",
    )
    # XCom is pushed before the task fails, as through spark-submit.
    assert [(r["code"], r["severity"]) for r in xcom["fails"]["results"]] == [
        ("unique(order_id)", "fail"), ("row_count", "pass"),
    ]
    assert "ColaChecksFailed: 1 of 2 Cola checks failed:\n" \
           "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)" in log
    assert "ColaConfigError: executor_memory only apply to spark-submit; the spark_connect connection " \
           "'spark_local' runs the engine in this worker as a Spark Connect client (Spark settings go in conf)" in log
    assert "submit_only" not in xcom
    # A rule naming a column the data does not have: one try, although two retries are allowed,
    # from the operator and from the decorator alike.
    tries = _tries("cola_test_connect_failures", "2024-01-03")
    assert (tries["wrong_column"], tries["decorator_wrong_column"], tries["profile_wrong_column"]) == (1, 1, 1)
    assert log.count(
        "airflow_provider_cola.errors.ColaJobRefused: rules[0] (not_null): column 'order_ids' does not exist; "
        "the DataFrame has amount, country, email, order_id\n"
    ) == 2
    assert log.count(
        "airflow_provider_cola.errors.ColaJobRefused: no column 'order_ids' in the DataFrame; its columns are amount, "
        "country, email, order_id\n"
    ) == 1
    # A server that cannot be reached is a crash, which a retry may cure: both tries ran.
    assert (tries["server_gone"], tries["decorator_server_gone"]) == (2, 2)
    # The operator's ColaJobError (retried) says so; the decorator lets Spark's own error through.
    assert log.count("airflow_provider_cola.errors.ColaJobError: the Cola job over Spark Connect failed: ") == 2
    assert log.count(
        "pyspark.errors.exceptions.connect.SparkConnectGrpcException: <_InactiveRpcError of RPC that terminated with:"
        "\n\tstatus = StatusCode.UNAVAILABLE\n"
    ) == 4
    assert "ColaJobRefused: Spark refused a query" not in log
    for task_id in ("wrong_column", "profile_wrong_column", "decorator_wrong_column", "server_gone",
                    "decorator_server_gone"):
        assert task_id not in xcom

"""Airflow end-to-end fixtures: a temporary AIRFLOW_HOME on sqlite, the DAG files, connections.

Airflow reads its configuration once, when ``airflow`` is first imported, so the environment
is set here, at import time, before any test module imports the provider. Everything lives
in one temporary folder that is removed at the end of the session.

DAGs run with ``dag.test()`` on a DAG loaded from the dags folder (Airflow 3.3 refuses a DAG
built inside a test module, since it is not in any DAG bundle). Tasks run in this process,
and their log is read from the captured stdout.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

if "airflow" in sys.modules:  # the settings below would be ignored
    raise RuntimeError("airflow was imported before tests/airflow_provider_cola/conftest.py could configure it")

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "dags_examples"
TEST_DAGS = Path(__file__).resolve().parent / "dags"
HOME = Path(tempfile.mkdtemp(prefix="cola-airflow-"))
DAGS_FOLDER = HOME / "dags"
FAKE_BIN = HOME / "fake-bin"
FAKE_SUBMIT_LOG = HOME / "fake-submit.log"
WORK = HOME / "work"
# A connection secret and a Spark conf secret: neither may appear in a log, a message or XCom.
CONNECTION_PASSWORD = "conn-pw-7f3a91c2"
CONF_SECRET = "s3-secret-b55e0d14"

os.environ.update(
    {
        "AIRFLOW_HOME": str(HOME),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{HOME / 'airflow.db'}",
        "AIRFLOW_CONN_SPARK_LOCAL": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "AIRFLOW_CONN_SPARK_WITH_SECRET": json.dumps(
            {"conn_type": "spark", "host": "local[2]", "password": CONNECTION_PASSWORD}
        ),
        # The cola_core zip is cached here rather than in the user's ~/.cache.
        "COLA_CACHE_DIR": str(HOME / "cache"),
        "FAKE_SUBMIT_LOG": str(FAKE_SUBMIT_LOG),
        "COLA_TEST_SECRET": CONF_SECRET,
    }
)

# Stands in for spark-submit where a real one cannot produce the failure under test: a job
# that exits 0 without a results file, or with a corrupt one. It records every call, which
# also proves when nothing was submitted. Selected with spark_binary="spark3-submit".
_FAKE_SPARK_SUBMIT = f"""\
#!{sys.executable}
import os, sys
arguments = sys.argv[1:]
with open(os.environ["FAKE_SUBMIT_LOG"], "a") as log:
    log.write(" ".join(arguments) + "\\n")
results = arguments[arguments.index("--results") + 1]
mode = os.environ.get("FAKE_SUBMIT_MODE", "crash")
print("26/01/01 00:00:00 INFO SparkContext: Running Spark version 4 (fake)")
print("26/01/01 00:00:00 WARN FakeSubmit: mode " + mode)
if mode == "crash":
    print("Traceback (most recent call last):")
    print("RuntimeError: the fake job crashed on purpose")
    print("26/01/01 00:00:01 INFO ShutdownHookManager: Shutdown hook called")
    sys.exit(3)
if mode == "corrupt":
    with open(results, "w") as handle:
        handle.write('{{"severity": "pass", "passed": true, "counts": ')
if mode == "inconsistent":
    result = {{"rule_type": "row_count", "passed": False, "message": "row_count = 0 is below min 1",
              "failed_count": 1, "metric_value": None, "severity": "fail", "check_name": None,
              "code": "row_count"}}
    with open(results, "w") as handle:
        handle.write(
            '{{"severity": "pass", "passed": true, "counts": {{"pass": 1, "warn": 0, "fail": 0}}, "results": ['
            + __import__("json").dumps(result) + "]}}"
        )
sys.exit(0)
"""


def unactivated_path() -> str:
    """PATH as an unactivated virtualenv sees it: the fake binaries, and not the venv's bin/."""
    venv_bin = str(Path(sys.executable).parent)
    kept = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry and entry != venv_bin]
    return os.pathsep.join([str(FAKE_BIN), *kept])


@pytest.fixture(scope="session")
def airflow_home() -> Path:
    """The migrated sqlite metadata DB, and a dags folder with the example and test DAGs."""
    DAGS_FOLDER.mkdir(parents=True, exist_ok=True)
    WORK.mkdir(exist_ok=True)
    FAKE_BIN.mkdir(exist_ok=True)
    fake = FAKE_BIN / "spark3-submit"
    fake.write_text(_FAKE_SPARK_SUBMIT)
    fake.chmod(0o755)
    # Symlinks: the example DAGs find their data and rules next to the real file.
    for folder in (EXAMPLES, TEST_DAGS):
        for dag_file in folder.glob("*.py"):
            (DAGS_FOLDER / dag_file.name).symlink_to(dag_file)
    migrate = subprocess.run(
        [sys.executable, "-m", "airflow", "db", "migrate"], capture_output=True, text=True, timeout=300
    )
    assert migrate.returncode == 0, migrate.stdout[-3000:] + migrate.stderr[-3000:]
    yield HOME
    shutil.rmtree(HOME, ignore_errors=True)


@dataclass
class DagRunOutcome:
    """What one ``dag.test()`` run left behind.

    Attributes:
        state: the DAG run's state.
        states: task id -> task instance state (``success``, ``skipped``, ``failed``...).
        xcom: task id -> its XCom ``return_value`` (only tasks that pushed one).
        log: everything the run printed (the task logs included).
    """

    state: str
    states: dict[str, str]
    xcom: dict[str, Any]
    log: str


@pytest.fixture
def run_dag(airflow_home, capfd, monkeypatch):
    """Run a DAG from the dags folder with ``dag.test()``; returns a :class:`DagRunOutcome`."""
    from airflow.dag_processing.dagbag import DagBag
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    monkeypatch.setenv("PATH", unactivated_path())

    def run(dag_id: str, day: str, conf: dict[str, Any] | None = None) -> DagRunOutcome:
        bag = DagBag(dag_folder=str(DAGS_FOLDER))
        assert not bag.import_errors, bag.import_errors
        dag = bag.get_dag(dag_id)
        logical_date = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
        capfd.readouterr()
        dag_run = dag.test(logical_date=logical_date, run_conf=conf)
        out, err = capfd.readouterr()
        # Also shown by pytest when the test fails, to help whoever reads it.
        sys.stderr.write(out[-20000:])
        with create_session() as session:
            states = {ti.task_id: getattr(ti.state, "value", ti.state) for ti in dag_run.get_task_instances(session=session)}
            rows = session.scalars(XComModel.get_many(run_id=dag_run.run_id, dag_ids=dag_id, key="return_value"))
            xcom = {row.task_id: XComModel.deserialize_value(row) for row in rows}
        return DagRunOutcome(getattr(dag_run.state, "value", dag_run.state), states, xcom, out + err)

    return run


@pytest.fixture
def fake_submit_calls(airflow_home):
    """Reads the fake spark-submit's call log (one line of arguments per call)."""
    def calls() -> list[str]:
        return FAKE_SUBMIT_LOG.read_text().splitlines() if FAKE_SUBMIT_LOG.exists() else []

    return calls

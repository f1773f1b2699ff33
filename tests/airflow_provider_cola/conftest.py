"""Airflow end-to-end fixtures: a temporary AIRFLOW_HOME on sqlite, the DAG files, connections.

Airflow reads its configuration once, when ``airflow`` is first imported, so the environment
is set (by importing ``cola_testenv``) before any test module imports the provider.
Everything lives in one temporary folder, removed when the test process exits.

DAGs run with ``dag.test()`` on a DAG loaded from the dags folder (Airflow 3.3 refuses a DAG
built inside a test module, since it is not in any DAG bundle). Tasks run in this process,
and their log is read from the captured stdout.
"""

from __future__ import annotations

import datetime as dt
import logging
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cola_testenv import (
    DAGS_FOLDER,
    EXAMPLES,
    FAKE_BIN,
    FAKE_SPARK_SUBMIT,
    FAKE_SUBMIT_LOG,
    FAST_JVM,
    HOME,
    TEST_DAGS,
    unactivated_path,
)

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    # Airflow's in-process API server imports starlette's test client, which warns about
    # httpx; it is Airflow's dependency, not ours.
    ignore = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient` is deprecated")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(ignore)


@pytest.fixture(scope="session")
def airflow_home() -> Path:
    """The migrated sqlite metadata DB, and a dags folder with the example and test DAGs."""
    DAGS_FOLDER.mkdir(parents=True, exist_ok=True)
    FAKE_BIN.mkdir(exist_ok=True)
    fake = FAKE_BIN / "spark3-submit"
    fake.write_text(FAKE_SPARK_SUBMIT)
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
    # Log records emitted at interpreter exit (py4j closing its gateway) must find a stream.
    _log_to_process_stderr(only_closed=False)
    logging.getLogger("py4j").setLevel(logging.WARNING)


@dataclass
class DagRunOutcome:
    """What one ``dag.test()`` run left behind.

    Attributes:
        state: the DAG run's state.
        states: task id -> task instance state (``success``, ``skipped``, ``failed``...).
        tries: task id -> how many times it ran.
        xcom: task id -> its XCom ``return_value`` (only tasks that pushed one); a Cola
            summary's ``cost`` is in ``costs``.
        costs: Cola task id -> what its run cost Spark, ``(jobs, stages, rows_read,
            bytes_read)`` (``cola_expected.costs_apart``).
        log: everything the run printed (the task logs included).
        rendered: task id -> its rendered template fields, as the Rendered Template view
            shows them (only tasks that got as far as rendering).
    """

    state: str
    states: dict[str, str]
    tries: dict[str, int]
    xcom: dict[str, Any]
    log: str
    rendered: dict[str, dict[str, Any]]
    costs: dict[str, tuple]


@pytest.fixture
def run_dag(airflow_home, capfd, monkeypatch):
    """Run a DAG from the dags folder with ``dag.test()``; returns a :class:`DagRunOutcome`."""
    from airflow.dag_processing.dagbag import DagBag
    from airflow.models.renderedtifields import RenderedTaskInstanceFields
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from cola_expected import costs_apart

    monkeypatch.setenv("PATH", unactivated_path())
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", FAST_JVM)

    def run(dag_id: str, day: str, conf: dict[str, Any] | None = None) -> DagRunOutcome:
        bag = DagBag(dag_folder=str(DAGS_FOLDER))
        assert not bag.import_errors, bag.import_errors
        dag = bag.get_dag(dag_id)
        logical_date = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
        _log_to_process_stderr()
        capfd.readouterr()
        dag_run = dag.test(logical_date=logical_date, run_conf=conf)
        out, err = capfd.readouterr()
        # Also shown by pytest when the test fails, to help whoever reads it.
        sys.stderr.write(out[-20000:])
        with create_session() as session:
            instances = dag_run.get_task_instances(session=session)
            states = {ti.task_id: getattr(ti.state, "value", ti.state) for ti in instances}
            tries = {ti.task_id: ti.try_number for ti in instances}
            rows = session.scalars(XComModel.get_many(run_id=dag_run.run_id, dag_ids=dag_id, key="return_value"))
            xcom = {row.task_id: XComModel.deserialize_value(row) for row in rows}
            fields = session.scalars(
                select(RenderedTaskInstanceFields).where(
                    RenderedTaskInstanceFields.dag_id == dag_id, RenderedTaskInstanceFields.run_id == dag_run.run_id
                )
            )
            rendered = {row.task_id: row.rendered_fields for row in fields}
        state = getattr(dag_run.state, "value", dag_run.state)
        xcom, costs = costs_apart(xcom)
        return DagRunOutcome(state, states, tries, xcom, out + err, rendered, costs)

    return run


def _log_to_process_stderr(only_closed: bool = True) -> None:
    """Point stream log handlers at the process's own stderr.

    Airflow sets up its log handlers on the streams pytest is capturing at that moment, and
    pytest closes those later ("I/O operation on closed file"). The process's own stderr is
    never closed, and capfd still captures it (it works on file descriptors).
    """
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in logging.root.manager.loggerDict)]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if type(handler) is logging.StreamHandler and (
                not only_closed or getattr(handler.stream, "closed", False)
            ):
                handler.stream = sys.__stderr__


@pytest.fixture
def fake_submit_calls(airflow_home):
    """Reads the fake spark-submit's call log (one line of arguments per call)."""
    def calls() -> list[str]:
        return FAKE_SUBMIT_LOG.read_text().splitlines() if FAKE_SUBMIT_LOG.exists() else []

    return calls


@pytest.fixture(scope="module")
def session():
    """A local session for the module (the lineage tests build real summaries with it): the
    one already running in this process, if any (then left running), else one started here
    and stopped at the end."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2").getOrCreate()
    )
    yield spark
    spark.stop()

"""What a reader of a task's log sees: the task log file that Airflow's worker writes.

The tasks run as a worker runs them, each in its own process under Airflow's supervisor,
which writes the task log file and logs whatever the task process writes to its stderr as
errors (``task.stderr``). ``run_dag`` alone runs tasks inside the test process, where there
is no such file and stderr is not the task's, so here ``dag.test()``'s in-process runner is
replaced by the supervisor (``supervise_task``, the function a worker calls) for every task.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cola_expected import priced

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

SPARK_INFO = re.compile(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} INFO ")


@pytest.fixture
def supervised_run(run_dag, monkeypatch, tmp_path):
    """``run_dag``, each task run by Airflow's supervisor in a process of its own.

    Returns ``(outcome, logs)``: ``logs`` maps a task id to the records of its log file.
    """
    import airflow.sdk.execution_time.supervisor as supervisor
    from airflow.models.taskinstance import TaskInstance
    from airflow.sdk.api.datamodels._generated import BundleInfo
    from airflow.utils.session import create_session

    folders = iter(range(1_000_000))
    logs_folder = tmp_path

    def supervised(ti: Any, task: Any, client: Any = None) -> Any:
        supervisor.supervise_task(
            ti=ti,
            bundle_info=BundleInfo(name="dags-folder", version=None),
            dag_rel_path=task.dag.relative_fileloc,
            token="",
            client=client or supervisor.InProcessTestSupervisor._api_client(task.dag),
            log_path=str(logs_folder / f"{ti.task_id}.log"),
        )
        with create_session() as session:
            state = session.get(TaskInstance, ti.id).state
        # What dag.test() reads of the in-process runner's result.
        return SimpleNamespace(ti=SimpleNamespace(state=state, task=task), state=state, msg=None, error=None)

    monkeypatch.setattr(supervisor, "run_task_in_process", supervised)

    def run(dag_id: str, day: str, conf: dict[str, Any] | None = None) -> tuple[Any, dict[str, list[dict[str, Any]]]]:
        nonlocal logs_folder
        # A folder per run: the supervisor appends to a task's log file.
        logs_folder = tmp_path / str(next(folders))
        logs_folder.mkdir()
        outcome = run_dag(dag_id, day, conf)
        logs = {
            path.stem: [json.loads(line) for line in path.read_text().splitlines()]
            for path in logs_folder.glob("*.log")
        }
        return outcome, logs

    return run


def events(records: list[dict[str, Any]]) -> list[str]:
    return [record["event"] for record in records]


def test_a_passing_decorator_run_logs_nothing_at_error_level(supervised_run):
    outcome, logs = supervised_run("cola_decorator", "2024-01-01")

    assert outcome.states == {"check_orders": "success", "publish": "success"}
    records = logs["check_orders"]
    assert "Cola: pass (3 passed, 0 warned, 0 failed)" in events(records)
    # In the task's process too, the results come first, with what the run cost Spark.
    table = next(line for line in events(records) if line.startswith("Cola results:\n"))
    assert table.splitlines()[-2:] == [
        "3 results: 3 pass, 0 warn, 0 fail", priced(outcome.costs["check_orders"], table.splitlines()[-1])
    ]
    assert events(records).index(table) < events(records).index("Cola: pass (3 passed, 0 warned, 0 failed)")
    # Spark's start-up banner, the JVM's notice and the progress bar came as task.stderr errors.
    assert [record for record in records if record["level"] in ("error", "critical")] == []
    assert [record for record in records if record.get("logger") == "task.stderr"] == []
    assert {record["level"] for record in records} == {"info"}
    assert [line for line in events(records) if SPARK_INFO.match(line) or "[Stage " in line] == []


def test_the_operator_log_shows_the_results_table_right_after_the_command_line(supervised_run):
    outcome, logs = supervised_run("cola_check_and_branch", "2024-01-01")

    assert outcome.states == {"check_orders": "success", "load": "success", "notify": "skipped",
                              "quarantine": "skipped"}
    lines = events(logs["check_orders"])
    command = next(index for index, line in enumerate(lines) if line.startswith("Spark-Submit cmd: "))
    assert lines[command + 1:command + 11] == [
        "SEVERITY  RULE             CODE                    VALUE  FAILED  MESSAGE",
        "PASS      row_count        row_count                   -       0  row_count = 6 is within bounds (min 1)",
        "PASS      not_null         not_null(order_id)          -       0  not_null(order_id): no NULL values",
        "PASS      unique           unique(order_id)            -       0  unique(order_id): all 6 rows are unique",
        "PASS      range            NEGATIVE_AMOUNT             -       0  range(amount,0,): all values in range (>= 0)",
        "PASS      missing_percent  missing_percent(email)      0       0  missing_percent(email) = 0 meets must_be "
        "(< 20%)",
        "",
        "5 results: 5 pass, 0 warn, 0 fail",
        priced(outcome.costs["check_orders"], lines[command + 9]),
        "Cola: pass (5 passed, 0 warned, 0 failed)",
    ]
    assert [line for line in lines if SPARK_INFO.match(line)] == []
    assert {record["level"] for record in logs["check_orders"]} == {"info"}
    # The settings that make it so are on the command line, after the task's own conf.
    config = (Path(__file__).resolve().parents[2] / "cola_core" / "log4j2.properties").as_uri()
    assert (
        " --conf spark.ui.enabled=false --conf spark.sql.shuffle.partitions=2"
        " --conf spark.ui.showConsoleProgress=false"
        f" --conf spark.driver.extraJavaOptions=-Dlog4j2.configurationFile={config}"
        # A local master: a rule that exhausts the JVM's memory fails alone, the JVM lives.
        " --conf spark.executor.killOnFatalError.depth=0"
        " --conf spark.python.sql.dataFrameDebugging.enabled=false --py-files "
    ) in lines[command]



def test_the_first_run_on_a_history_store_that_does_not_exist_yet_logs_no_java_stack_trace(supervised_run, tmp_path):
    """A fresh store is an expected state: Spark logged a FileNotFoundException of some 90 lines
    (at WARN) when Cola read a store that was not there yet, in the check's log and the split's."""
    conf = {"history": str(tmp_path / "history"), "out": str(tmp_path / "out")}
    outcome, logs = supervised_run("cola_test_history", "2024-01-01", conf)

    assert outcome.states == {"check_orders": "success", "split_orders": "success"}
    for task in ("check_orders", "split_orders"):
        lines = events(logs[task])
        assert [line for line in lines if "Exception" in line or line.lstrip().startswith("at ")] == [], task
        assert {record["level"] for record in logs[task]} == {"info"}, [r for r in logs[task] if r["level"] != "info"]
    # The check's log: Airflow's own lines, the command line, the results table and the outcome;
    # 306 lines before, of which the stack traces were most.
    assert len(logs["check_orders"]) < 40, events(logs["check_orders"])
    assert len(logs["split_orders"]) < 40, events(logs["split_orders"])

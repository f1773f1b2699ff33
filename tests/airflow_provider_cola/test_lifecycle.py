"""The task lifecycle every Cola task shares: the kill flag and what a kill interrupts.

A kill is run for real (a SIGTERM while Spark works) in test_failures.py, test_decorator.py
and test_report_plugin.py; these check the pieces without a JVM.
"""

from __future__ import annotations

import pytest
from airflow.sdk.exceptions import AirflowTaskTerminated

from airflow_provider_cola.decorators.cola import _ColaCheckDecoratedOperator
from airflow_provider_cola.operators import ColaCheckOperator

pytestmark = pytest.mark.airflow

RULES = [{"type": "row_count", "min": 1}]
SOURCE = {"path": "/data/orders", "format": "json"}


def numbers(spark):
    return spark.range(3)


def _task(entry_point: str, task_id: str):
    if entry_point == "operator":
        return ColaCheckOperator(task_id=task_id, rules=RULES, source=SOURCE)
    return _ColaCheckDecoratedOperator(task_id=task_id, python_callable=numbers, rules=RULES)


@pytest.mark.parametrize("entry_point", ["operator", "decorator"])
def test_a_kill_interrupts_what_runs_then_stops_the_task(entry_point):
    task = _task(entry_point, "killed")
    lifecycle = task._lifecycle
    interrupted: list[str] = []
    lifecycle.stop_if_killed()  # not killed: nothing happens

    with lifecycle.interruptible(lambda: interrupted.append("the job")):
        task.on_kill()
    assert interrupted == ["the job"]
    task.on_kill()  # nothing runs any more: nothing is interrupted
    assert interrupted == ["the job"]

    cause = RuntimeError("what the interrupted query raised")
    with pytest.raises(AirflowTaskTerminated) as error:
        lifecycle.stop_if_killed(cause)
    assert str(error.value) == "the Cola task was killed: its run was interrupted"
    assert error.value.__cause__ is cause
    # Settling is the first thing it refuses: no XCom, no branch, no success.
    with pytest.raises(AirflowTaskTerminated):
        lifecycle.settle({}, {"severity": "pass"}, None)


def test_a_task_killed_before_spark_submit_starts_submits_nothing(tmp_path):
    from airflow_provider_cola.operators._results import ResultsFile
    from airflow_provider_cola.operators._runs import submit_job

    class NeverSubmitted:
        environment: dict[str, str] = {}

        def submit(self, application):
            raise AssertionError("submitted after a kill")

    operator = ColaCheckOperator(task_id="killed", rules=RULES, source=SOURCE)
    operator.on_kill()
    with pytest.raises(AirflowTaskTerminated):
        submit_job(operator, NeverSubmitted(), [ResultsFile(tmp_path)])  # type: ignore[arg-type]


@pytest.mark.parametrize("entry_point", ["operator", "decorator"])
def test_the_copy_airflow_runs_has_a_lifecycle_of_its_own(entry_point):
    # Airflow executes a copy of the task (prepare_for_execution); the summary the run leaves
    # for the OpenLineage listener and the outlets must land on that copy, and a kill of the
    # copy must interrupt what the copy runs.
    task = _task(entry_point, "copied")
    running = task.prepare_for_execution()
    assert running is not task
    assert running._lifecycle._task is running
    assert task._lifecycle._task is task
    running.on_kill()
    assert (running._lifecycle.killed, task._lifecycle.killed) == (True, False)

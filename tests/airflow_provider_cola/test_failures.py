"""How Cola operator tasks fail: rules, crashes, missing or corrupt results, bad sources, data.

One run of the ``cola_test_failures`` DAG covers every case (its tasks are independent), so
the two real spark-submits are shared by all the assertions below.
"""

from __future__ import annotations

import json
import re
import threading
import time

import pytest

from cola_expected import ORDERS_FAIL_SUMMARY, ORDERS_FAILED_CHECKS
from cola_testenv import (
    CONF_ACCESS_KEY,
    CONF_CREDENTIAL,
    CONF_SECRET,
    CONNECTION_PASSWORD,
    OPTION_PASSWORD,
    ORDERS,
    unactivated_path,
)

pytestmark = [pytest.mark.airflow, pytest.mark.spark]


def error_of(log: str, error_class: str, message: str) -> None:
    """Assert that the task log shows ``error_class: message`` (the line Airflow logs)."""
    assert f"{error_class}: {message}\n" in log, f"{error_class}: {message!r} not in the log"


def messages(log: str, error_class: str) -> list[str]:
    """The whole message of each ``error_class`` exception in the log: up to the next log record."""
    found = []
    for part in log.split(f"\n{error_class}: ")[1:]:
        lines = part.split("\n")
        end = next((i for i, line in enumerate(lines) if re.match(r"\d{4}-\d\d-\d\dT", line)), len(lines))
        found.append("\n".join(lines[:end]).rstrip("\n"))
    return found


@pytest.fixture(scope="module")
def broken_parquet(tmp_path_factory):
    work = tmp_path_factory.mktemp("failures")
    (work / "broken.parquet").write_bytes(b"this is not a parquet file\n")
    (work / "blocker").write_text("a file where a split's invalid output must go\n")
    return work


def test_every_failure_fails_its_task_with_a_clear_message(run_dag, broken_parquet, fake_submit_calls):
    outcome = run_dag("cola_test_failures", "2024-01-03", {"work_dir": str(broken_parquet)})

    assert outcome.states == {
        "malformed_rule": "failed",
        "crashed_job": "failed",
        "missing_results": "failed",
        "corrupt_results": "failed",
        "inconsistent_results": "failed",
        "no_results": "failed",
        "refused_in_file": "failed",
        "missing_source": "failed",
        "broken_source": "failed",
        "failing_checks": "failed",
        "blocked_split": "failed",
    }

    # A malformed rule fails at once with the ColaRuleError text, and nothing is submitted.
    error_of(
        outcome.log,
        "airflow_provider_cola.errors.ColaConfigError",
        "invalid Cola rules: rules[1] (range): unknown parameter 'minimum' (did you mean 'min'?); valid parameters are "
        "code, column, description, dimension, id, max, min, name, severity, tolerance, where",
    )
    calls = fake_submit_calls()
    assert not [call for call in calls if "cola_test_failures.malformed_rule" in call]
    # ...while the same fake spark-submit did run for the tasks with valid rules (crashed_job twice).
    submitted = [call.split("--pipeline cola_test_failures.")[1].split()[0] for call in calls]
    assert sorted(submitted) == [
        "corrupt_results", "crashed_job", "crashed_job", "inconsistent_results", "missing_results", "no_results",
        "refused_in_file",
    ]

    # A crash (non-zero exit) shows the tail of the Spark log, INFO lines left out.
    error_of(
        outcome.log,
        "airflow_provider_cola.errors.ColaJobError",
        "the Cola Spark job failed (spark-submit exit code 3).\n"
        "Last lines of the Spark log:\n"
        "26/01/01 00:00:00 WARN FakeSubmit: mode crash\n"
        "Traceback (most recent call last):\n"
        "RuntimeError: the fake job crashed on purpose",
    )
    # That is the whole message, and the log shows the tail once for each try: in it, and
    # nowhere else (the hook's own exception, which repeated it after the whole command line,
    # is not chained to it, and no spark-submit failure shows that exception).
    crash = (
        "the Cola Spark job failed (spark-submit exit code 3).\n"
        "Last lines of the Spark log:\n"
        "26/01/01 00:00:00 WARN FakeSubmit: mode crash\n"
        "Traceback (most recent call last):\n"
        "RuntimeError: the fake job crashed on purpose"
    )
    crashes = [text for text in messages(outcome.log, "airflow_provider_cola.errors.ColaJobError")
               if "exit code 3" in text]
    assert crashes == [crash, crash]
    assert outcome.log.count("\nRuntimeError: the fake job crashed on purpose\n") == 2
    assert "Cannot execute: " not in outcome.log
    assert "Last spark-submit output:" not in outcome.log
    # ...and is retried, as it may be transient.
    assert outcome.tries["crashed_job"] == 2
    # Exit 0 without a results file, or with a corrupt one, is never read as a pass.
    assert "ColaJobError: the Cola Spark job finished but wrote no results file: /tmp/" in outcome.log
    assert "Last lines of the Spark log:\n26/01/01 00:00:00 WARN FakeSubmit: mode silent\n" in outcome.log
    assert (
        "ColaJobError: the results file is corrupt (Expecting value: line 1 column 48 (char 47)): /tmp/"
        in outcome.log
    )
    assert "Last lines of the Spark log:\n26/01/01 00:00:00 WARN FakeSubmit: mode corrupt\n" in outcome.log
    assert "ColaJobError: the results file is corrupt (its counts, passed, severity do not match its results)" in (
        outcome.log
    )
    # A summary that measured nothing is no pass for a block of five rules.
    assert "ColaJobError: the results file is corrupt (it holds 0 results for a block of 5 rules): /tmp/" in outcome.log
    for task_id in (
        "malformed_rule", "crashed_job", "missing_results", "corrupt_results", "inconsistent_results", "no_results"
    ):
        assert task_id not in outcome.xcom

    # The job refusing its inputs is final, whether its exit status says so (client mode) or
    # only its results file does (as in cluster mode): one try each, although retries=2.
    refused = "airflow_provider_cola.errors.ColaJobRefused"
    error_of(
        outcome.log,
        refused,
        "the Cola job refused its inputs (exit code 2, so it is not retried): "
        "cannot read the json at /data/gone: no such path",
    )
    # A local source path that does not exist fails in the worker: nothing is submitted.
    error_of(
        outcome.log,
        "airflow_provider_cola.errors.ColaConfigError",
        f"invalid Cola source: the path '{broken_parquet}/no-such-folder' does not exist on this machine",
    )
    # A source Spark cannot read fails with Spark's own error in the message.
    broken = broken_parquet / "broken.parquet"
    error_of(
        outcome.log,
        refused,
        f"the Cola job refused its inputs (exit code 2, so it is not retried): cannot read the parquet at {broken}: "
        f"org.apache.spark.SparkException: [FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] Encountered error while "
        f"reading file file:{broken}. Could not read footer. Please ensure that the file is in either ORC or "
        "Parquet format.",
    )
    # A split whose invalid output cannot be published: the valid output, published first,
    # is taken back, nothing is left at either destination, and the task is not retried.
    blocker = f"file:{broken_parquet / 'blocker'}"
    error_of(
        outcome.log,
        refused,
        "the Cola job refused its inputs (exit code 2, so it is not retried): cannot publish the invalid output "
        f"{broken_parquet}/blocker/quarantine: cannot create the folder {blocker}: {blocker} is a file, not a folder; "
        "nothing was published",
    )
    assert list((broken_parquet / "split").iterdir()) == []
    assert (broken_parquet / "blocker").read_text() == "a file where a split's invalid output must go\n"
    for task_id in ("refused_in_file", "missing_source", "broken_source", "blocked_split"):
        assert outcome.tries[task_id] == 1, task_id
        assert task_id not in outcome.xcom

    # Failed checks: XCom and the report are written first, then the task fails listing them.
    assert outcome.xcom["failing_checks"] == ORDERS_FAIL_SUMMARY
    error_of(outcome.log, "airflow_provider_cola.errors.ColaChecksFailed", ORDERS_FAILED_CHECKS)
    # A data failure is final (AirflowFailException): no retry, although the task has one.
    assert outcome.tries["failing_checks"] == 1
    report = [
        json.loads(line)
        for part in sorted((broken_parquet / "report").glob("part-*.json"))
        for line in part.read_text().splitlines()
    ]
    assert [(row["pipeline"], row["code"], row["severity"]) for row in report] == [
        ("cola_test_failures.failing_checks", "row_count", "pass"),
        ("cola_test_failures.failing_checks", "not_null(order_id)", "fail"),
        ("cola_test_failures.failing_checks", "unique(order_id)", "fail"),
        ("cola_test_failures.failing_checks", "NEGATIVE_AMOUNT", "fail"),
        ("cola_test_failures.failing_checks", "missing_percent(email)", "pass"),
    ]
    # results_uri: the results file was written there, read, and removed.
    assert list((broken_parquet / "results").iterdir()) == []

    # Secrets from the connection, the conf and the source options reach neither the log,
    # nor XCom, nor the Rendered Template view; every key naming a secret is masked.
    command = [line for line in outcome.log.splitlines() if "Spark-Submit cmd:" in line and "failing_checks" in line]
    assert len(command) == 1
    assert (
        " --conf spark.ui.enabled=false --conf spark.sql.shuffle.partitions=2"
        " --conf spark.hadoop.fs.s3a.secret.key=****** --conf spark.myapp.credential=******"
        " --conf spark.hadoop.fs.s3a.access.key=****** "
    ) in command[0]
    assert f" --input {ORDERS / '2024-01-03'} --format json --option password=****** --results " in command[0]
    rendered = outcome.rendered["failing_checks"]
    assert rendered["conf"] == {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.hadoop.fs.s3a.secret.key": "***",
        "spark.myapp.credential": "***",
        "spark.hadoop.fs.s3a.access.key": "***",
    }
    assert rendered["source"] == {
        "path": str(ORDERS / "2024-01-03"), "format": "json", "options": {"password": "***"},
    }
    for secret in (CONNECTION_PASSWORD, CONF_SECRET, CONF_CREDENTIAL, CONF_ACCESS_KEY, OPTION_PASSWORD):
        assert secret not in outcome.log
        assert secret not in json.dumps(outcome.xcom)
        assert secret not in json.dumps(outcome.rendered)


def test_on_kill_stops_the_spark_application(airflow_home, monkeypatch, tmp_path):
    from airflow_provider_cola.errors import ColaJobError
    from airflow_provider_cola.operators import ColaCheckOperator

    monkeypatch.setenv("PATH", unactivated_path())
    # The user's own log4j configuration wins over Cola's (WARN): at INFO, the driver says
    # when it has started.
    info = tmp_path / "info.properties"
    info.write_text(
        "rootLogger.level = info\nrootLogger.appenderRef.stderr.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n"
    )
    java_options = f"-Xss4m -Dlog4j.configurationFile={info}"
    operator = ColaCheckOperator(
        task_id="killed",
        conn_id="spark_local",
        rules=[{"type": "row_count", "min": 1}],
        source={"path": str(ORDERS / "2024-01-01"), "format": "json"},
        conf={"spark.ui.enabled": "false", "spark.driver.extraJavaOptions": java_options},
    )
    failure: list[BaseException] = []

    def run() -> None:
        try:
            operator.execute(context={})
        except BaseException as error:  # collected for the assertions below
            failure.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 60
    # Wait until the Spark application (the driver, in client mode) has started.
    while time.monotonic() < deadline:
        hook = operator._hook
        if hook is not None and any("Running Spark version" in line for line in list(hook._cola_log)):
            break
        time.sleep(0.2)
    process = operator._hook._submit_sp
    assert operator._hook._conf == {
        "spark.ui.enabled": "false", "spark.driver.extraJavaOptions": java_options,
        "spark.ui.showConsoleProgress": "false", "spark.executor.killOnFatalError.depth": "0",
        "spark.python.sql.dataFrameDebugging.enabled": "false",
    }
    assert any("INFO SparkContext: Running Spark version" in line for line in list(operator._hook._cola_log))
    operator.on_kill()
    worker.join(timeout=60)

    assert not worker.is_alive()
    assert process.poll() is not None  # spark-submit (and the driver it runs) is gone
    assert len(failure) == 1 and isinstance(failure[0], ColaJobError)
    assert str(failure[0]).startswith("the Cola Spark job failed (spark-submit exit code -9).\n")


def test_a_rule_error_is_never_retried_whichever_entry_point(run_dag, tmp_path):
    # One run for every entry point (cola_test_rule_errors): each task may be retried twice.
    outcome = run_dag("cola_test_rule_errors", "2024-01-03", {"work_dir": str(tmp_path)})

    assert outcome.states == dict.fromkeys(
        ("check_operator", "split_operator", "decorator_check", "decorator_split", "decorator_query",
         "decorator_crash"),
        "failed",
    )
    # A rule naming a column the data does not have is the rules' error: one try each.
    assert outcome.tries == {
        "check_operator": 1, "split_operator": 1, "decorator_check": 1, "decorator_split": 1, "decorator_query": 1,
        "decorator_crash": 2,
    }
    wrong_column = "rules[1] (not_null): column 'order_ids' does not exist; the DataFrame has amount, country, email, " \
                   "order_id"
    refusals = messages(outcome.log, "airflow_provider_cola.errors.ColaJobRefused")
    # spark-submit says it with its exit status; in the task's process the engine's own words.
    assert sorted(refusals) == sorted([
        f"the Cola job refused its inputs (exit code 2, so it is not retried): {wrong_column}",  # check_operator
        f"the Cola job refused its inputs (exit code 2, so it is not retried): {wrong_column}",  # split_operator
        wrong_column,  # decorator_check
        wrong_column,  # decorator_split
        # The function's own query: as `cola` says it, and not retried either.
        "Spark refused a query: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter "
        "with name `order_ids` cannot be resolved. Did you mean one of the following? [`order_id`, `email`, "
        "`amount`, `country`]. SQLSTATE: 42703;",
    ])
    # The engine's error is the refusal's cause, in the same traceback.
    assert "cola_core.errors.ColaRuleError: " + wrong_column + "\n" in outcome.log
    # Anything else the function raises is a crash, retried as the task says.
    assert outcome.log.count("\nRuntimeError: the orders service did not answer\n") == 2
    # Neither split wrote anything.
    assert list(tmp_path.iterdir()) == []
    assert outcome.xcom == {}

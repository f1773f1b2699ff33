"""``@cola_check`` / ``@task.cola_check``: in-process rules, XCom, on_failure, branching and the split."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from cola_core.contracts import ContractWarning
from cola_expected import DECORATOR_IDS, SPLIT_IDS, ids_of, result, summary
from cola_helpers import broken_history_file

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

CONTRACT = Path(__file__).resolve().parent / "dags" / "orders_contract.yaml"
UNIQUE_FAILS = summary(
    result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
           failed_count=1),
    result("row_count", "pass", "row_count = 6 is within bounds (min 1)", "row_count", thresholds={"min": "1"}),
    ids=ids_of([{"type": "unique", "columns": ["order_id"]}, {"type": "row_count", "min": 1}]), rows=6,
)


def test_example_passes_and_publishes(run_dag, spark):
    outcome = run_dag("cola_decorator", "2024-01-01")

    assert outcome.states == {"check_orders": "success", "publish": "success"}
    assert outcome.xcom["check_orders"] == summary(
        result("not_null", "pass", "not_null(order_id,email): no NULL values", "not_null(order_id,email)",
               check_name="keys present", details={"columns": {"order_id": 0, "email": 0}}),
        result("unique", "pass", "unique(order_id): all 6 rows are unique", "unique(order_id)"),
        result("avg", "pass", "avg(amount) = 243.7483 meets must_be (between 10 and 500)", "avg(amount)",
               metric_value=243.74833333333333, thresholds={"must_be": "between 10 and 500"}),
        ids=DECORATOR_IDS, rows=6,
    )
    # (jobs, stages that ran, rows read, bytes read) in the task's Spark session, which is the
    # tests' own (``spark``: adaptive execution off, so that the job count is Spark's plan alone).
    assert outcome.costs == {"check_orders": (2, 5, 12, 976)}
    assert "publishing: {'pass': 3, 'warn': 0, 'fail': 0}" in outcome.log


def test_example_fails_on_bad_data_after_pushing_xcom(run_dag):
    outcome = run_dag("cola_decorator", "2024-01-03")

    assert outcome.states == {"check_orders": "failed", "publish": "upstream_failed"}
    assert outcome.tries["check_orders"] == 1
    # Pushed before the task failed, so a person (or a callback) can see what broke.
    assert outcome.xcom["check_orders"] == summary(
        result("not_null", "fail", "not_null(order_id,email): 1 NULL value (order_id: 1)", "not_null(order_id,email)",
               failed_count=1, check_name="keys present", details={"columns": {"order_id": 1, "email": 0}}),
        result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
               failed_count=1),
        result("avg", "pass", "avg(amount) = 70.0833 meets must_be (between 10 and 500)", "avg(amount)",
               metric_value=70.08333333333333, thresholds={"must_be": "between 10 and 500"}),
        ids=DECORATOR_IDS, rows=6,
    )
    assert (
        "airflow_provider_cola.errors.ColaChecksFailed: 2 of 3 Cola checks failed:\n"
        "  [FAIL] keys present: not_null(order_id,email): 1 NULL value (order_id: 1)\n"
        "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)\n"
    ) in outcome.log


def test_skip_succeeds_and_a_severity_missing_from_branch_skips_every_downstream_task(run_dag):
    outcome = run_dag("cola_test_decorator", "2024-01-03")

    assert outcome.states == {
        "not_a_dataframe": "failed",
        "informative": "success",
        "after_informative": "success",
        "gated": "success",
        "on_pass": "skipped",
        "also_downstream": "skipped",
        "trusted": "success",
        "untrusted": "failed",
        "contract": "success",
        "contract_submitted": "success",
    }
    assert outcome.xcom["informative"] == UNIQUE_FAILS
    # The ODCS contract read as the rules file: the results carry its quality ids into XCom, and
    # the one part no rule checks as their contract_gaps; in process, and submitted alike.
    with pytest.warns(ContractWarning):
        contract_ids = ids_of(CONTRACT)
    assert contract_ids[3] == "no-negative-amounts" and contract_ids[5] == "orders-arrived"
    gap = "schema[0].quality[1] (text, no single mustBe* operator)"
    contract_summary = {
        **summary(
            result("schema", "pass", "schema: matches (4 columns)", "schema", check_name="order_id is integer"),
            result("not_null", "fail", "not_null(order_id): 1 NULL value (order_id: 1)", "not_null(order_id)",
                   failed_count=1),
            result("schema", "pass", "schema: matches (4 columns)", "schema", check_name="amount is number"),
            result("sql", "warn", "SQL validation failed", "sql", failed_count=1, check_name="no-negative-amounts"),
            result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
                   failed_count=1, check_name="primary key"),
            result("row_count", "pass", "row_count = 6 meets must_be (> 0)", "row_count", metric_value=6,
                   check_name="orders-arrived", thresholds={"must_be": "> 0"}),
            ids=contract_ids, rows=6,
        ),
        "contract_gaps": [gap],
    }
    assert outcome.xcom["contract"] == contract_summary
    assert outcome.xcom["contract_submitted"] == contract_summary
    # Each task says the gap once, after its results table: the in-process task in its own
    # log line, the submitted one as the job's line in spark-submit's output (nothing filtered).
    warning = f"no rule checks these parts of the contract: {gap}"
    assert outcome.log.count(warning) == 2
    assert re.search(
        rf"\] 6 results: 3 pass, 1 warn, 2 fail \[airflow\.task\.hooks\.[^\n]*\n[^\n]*\] Spark cost: [^\n]*\n"
        rf"[^\n]*\[info +\] cola: warning: {re.escape(warning)} \[airflow\.task\.hooks\.", outcome.log,
    )
    assert re.search(
        rf"\n6 results: 3 pass, 1 warn, 2 fail\nSpark cost: [^\n]*_ColaCheckDecoratedOperator\][^\n]*\n"
        rf"[^\n]*\[warning +\] {re.escape(warning)} \[airflow\.task\.operators\.", outcome.log,
    )
    assert "Cola checks that warned:\n  [WARN] no-negative-amounts: SQL validation failed" in outcome.log
    assert outcome.xcom["gated"] == UNIQUE_FAILS
    # conf is a template field: its secret-named values are masked as the operators' are,
    # a number included (the masker redacts text only, so it is rendered as text).
    assert outcome.rendered["gated"]["conf"] == {
        "spark.myapp.credential": "***", "spark.myapp.kEy": "***", "spark.ui.enabled": "false",
    }
    for secret in ("clearcredvalue1", "987654321"):
        assert secret not in json.dumps(outcome.rendered)
        assert secret not in outcome.log
    assert (
        "Cola checks that failed (on_failure='skip', so the task succeeds):\n"
        "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)"
    ) in outcome.log
    assert "branch has no entry for 'fail': skipping every downstream task" in outcome.log
    assert "informative: fail" in outcome.log
    assert outcome.tries["not_a_dataframe"] == 1
    assert (
        "airflow_provider_cola.errors.ColaConfigError: a @cola_check function must return a Spark DataFrame, "
        "got list\n"
    ) in outcome.log
    # allow_external_access=True lets a trusted rule call reflect(); without it, the rule is
    # refused before any Spark session starts, naming the switch, and not retried.
    assert outcome.xcom["trusted"] == summary(
        result("sql", "pass", "sql: no failed rows", "REFLECT"),
        ids=ids_of([{"type": "sql", "code": "REFLECT", "failed_rows": "SELECT * FROM _validation_df WHERE "
                     "reflect('java.lang.String', 'valueOf', order_id) <> CAST(order_id AS STRING)"}]),
    )
    assert outcome.tries["untrusted"] == 1 and "untrusted" not in outcome.xcom
    assert (
        "airflow_provider_cola.errors.ColaConfigError: invalid Cola rules: rules[0] (sql): 'failed_rows' calls "
        "reflect() (it calls a Java method in the JVM): SQL that reaches outside the data is refused by default; "
        "for trusted rules only, run with allow_external_access=True (cola --allow-external-access)\n"
    ) in outcome.log


def test_task_cola_check_resolves_to_the_provider_decorator(airflow_home):
    from airflow.sdk import task

    from airflow_provider_cola.decorators import cola_check

    assert task.cola_check is cola_check


def test_spark_gets_a_none_default_so_dag_parsing_binds(airflow_home):
    from airflow_provider_cola.decorators.cola import _with_injected_spark

    def first(spark, limit=1): ...
    def only(spark): ...
    def keyword(*, spark, limit): ...
    def no_spark(limit): ...

    shown = {f.__name__: str(_with_injected_spark(inspect.signature(f))) for f in (first, only, keyword, no_spark)}
    assert shown == {
        "first": "(spark=None, limit=1)",
        "only": "(spark=None)",
        "keyword": "(*, spark=None, limit)",
        "no_spark": "(limit)",
    }

    from airflow.sdk import DAG

    from airflow_provider_cola.decorators import cola_check

    def orders(spark, limit):
        return spark.range(limit)

    with DAG("parse_only", schedule=None):
        created = cola_check(rules=[{"type": "row_count", "min": 1}])(orders)(limit=3)

    # spark moved last, as keyword-only, since `limit` (no default) follows it.
    assert str(created.operator.python_callable.__signature__) == "(limit, *, spark=None)"
    assert created.operator.op_kwargs == {"limit": 3}
    assert created.operator.rules == [{"type": "row_count", "min": 1}]


def _rows(folder: Path) -> list[dict]:
    """The rows of a parquet folder the task wrote, sorted by their JSON text; read without Spark,
    so that no session is active in the test process (a task would reuse it, not start its own)."""
    import pyarrow.parquet as pq

    return sorted(pq.read_table(str(folder)).to_pylist(), key=lambda row: json.dumps(row, sort_keys=True))


def test_split_writes_the_valid_rows_and_a_quarantine_with_codes(run_dag, tmp_path):
    outcome = run_dag("cola_test_decorator_split", "2024-01-03", {"output_dir": str(tmp_path)})

    assert outcome.states == {
        "split_orders": "success",
        "announce": "success",
        "split_lines": "success",
        "bad_output": "failed",
    }
    assert outcome.xcom["split_orders"] == summary(
        result("not_null", "fail", "not_null(order_id): 1 NULL value (order_id: 1)", "not_null(order_id)",
               failed_count=1),
        result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
               failed_count=1),
        result("range", "fail", "range(amount,0,): 1 value out of range (>= 0)", "NEGATIVE_AMOUNT", failed_count=1),
        result("regex", "fail", "regex(country,^[A-Z]{2}$): 1 value does not match (NULL counts as not matching)",
               "BAD_COUNTRY", failed_count=1),
        ids=SPLIT_IDS, rows=6,
        valid_count=1,
        invalid_count=5,
    )
    assert "1 valid rows, 5 quarantined" in outcome.log
    # valid_output, invalid_output and annotate are template fields.
    assert {key: outcome.rendered["split_orders"][key] for key in ("valid_output", "invalid_output", "annotate")} == {
        "valid_output": {"path": f"{tmp_path}/2024-01-03/valid", "mode": "overwrite"},
        "invalid_output": {"path": f"{tmp_path}/2024-01-03/quarantine", "mode": "overwrite"},
        "annotate": "rejections",
    }
    assert _rows(tmp_path / "2024-01-03" / "valid") == [
        {"amount": 22.0, "country": "KE", "email": "nia@example.com", "order_id": 3001},
    ]
    assert _rows(tmp_path / "2024-01-03" / "quarantine") == [
        {"amount": -15.0, "country": "EG", "email": "omar@example.com", "order_id": 3002,
         "rejections": ["NEGATIVE_AMOUNT"]},
        {"amount": 17.5, "country": "CA", "email": "quin@example.com", "order_id": None,
         "rejections": ["not_null(order_id)"]},
        {"amount": 300.0, "country": "in", "email": "raj@example.com", "order_id": 3005,
         "rejections": ["BAD_COUNTRY"]},
        {"amount": 48.0, "country": "FI", "email": "pia@example.com", "order_id": 3003,
         "rejections": ["unique(order_id)"]},
        {"amount": 48.0, "country": "FI", "email": "pia@example.com", "order_id": 3003,
         "rejections": ["unique(order_id)"]},
    ]


def test_split_with_parquet_paths_and_a_quarantine_key(run_dag, tmp_path):
    outcome = run_dag("cola_test_decorator_split", "2024-01-03", {"output_dir": str(tmp_path)})

    assert outcome.states["split_lines"] == "success"
    assert outcome.xcom["split_lines"] == summary(
        result("range", "fail", "range(amount,0,): 1 value out of range (>= 0)", "NEGATIVE_AMOUNT", failed_count=1),
        ids=ids_of([{"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"}]), rows=4,
        valid_count=2,
        invalid_count=2,
    )
    assert _rows(tmp_path / "lines" / "valid") == [
        {"order_id": 2, "line": 1, "amount": 3.0},
        {"order_id": 3, "line": 1, "amount": 8.5},
    ]
    # Line 1 of order 1 broke nothing: it is rejected with its order, under the key's code.
    assert _rows(tmp_path / "lines" / "quarantine") == [
        {"order_id": 1, "line": 2, "amount": -4.0, "rejections": ["NEGATIVE_AMOUNT"]},
        {"order_id": 1, "line": 1, "amount": 10.0, "rejections": ["quarantine_key(order_id)"]},
    ]
    assert (
        "Cola checks that failed (on_failure='skip', so the task succeeds):\n"
        "  [FAIL] range(amount,0,): 1 value out of range (>= 0)"
    ) in outcome.log


def test_a_malformed_split_output_fails_before_the_function_runs(run_dag, tmp_path):
    outcome = run_dag("cola_test_decorator_split", "2024-01-03", {"output_dir": str(tmp_path)})

    assert outcome.states["bad_output"] == "failed"
    assert outcome.tries["bad_output"] == 1 and "bad_output" not in outcome.xcom
    assert (
        "airflow_provider_cola.errors.ColaConfigError: invalid invalid_output: output 'mode' must be one of "
        "append, overwrite, error, errorifexists, ignore, got 'sometimes'\n"
    ) in outcome.log
    assert "bad_output was called" not in outcome.log
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"valid_output": "/lake/valid"},
         "a @cola_check split needs both valid_output and invalid_output: valid_output is given but "
         "invalid_output is not"),
        ({"invalid_output": {"path": "/lake/quarantine", "mode": "overwrite"}},
         "a @cola_check split needs both valid_output and invalid_output: invalid_output is given but "
         "valid_output is not"),
        ({"valid_output": "/lake/valid", "annotate": "rejections"},
         "a @cola_check split needs both valid_output and invalid_output: valid_output is given but "
         "invalid_output is not"),
        ({"annotate": "rejections"},
         "annotate only applies to a split: give valid_output and invalid_output as well"),
        ({"quarantine_key": ["order_id"]},
         "quarantine_key only applies to a split: give valid_output and invalid_output as well"),
        ({"annotate": "rejections", "quarantine_key": ["order_id"]},
         "annotate and quarantine_key only apply to a split: give valid_output and invalid_output as well"),
        ({"valid_output": "/lake/valid", "invalid_output": "/lake/quarantine", "quarantine_key": "order_id"},
         "quarantine_key must be a list of column names, got 'order_id' (for one column: ['order_id'])"),
        ({"checkpoint": "/lake/checkpoint"},
         "checkpoint only applies to a split: give valid_output and invalid_output as well"),
    ],
    ids=["valid-only", "invalid-only", "valid-and-annotate", "annotate-only", "key-only", "options-only",
         "key-as-a-string", "checkpoint-only"],
)
def test_a_split_given_by_halves_is_refused_at_parse_time(airflow_home, arguments, message):
    from airflow.sdk import DAG

    from airflow_provider_cola.decorators import cola_check
    from airflow_provider_cola.errors import ColaConfigError

    def orders(spark):
        return spark.range(1)

    with DAG("parse_only_split", schedule=None), pytest.raises(ColaConfigError) as raised:
        cola_check(rules=[{"type": "row_count", "min": 1}], **arguments)(orders)()
    assert str(raised.value) == message


def test_both_outputs_make_a_split_job(airflow_home):
    from airflow.sdk import DAG

    from airflow_provider_cola._rules import load_rules
    from airflow_provider_cola.decorators import cola_check
    from cola_core.job.spec import JobSpec
    from cola_core.storage.specs import parse_output

    def orders(spark):
        return spark.range(1)

    rules = [{"type": "row_count", "min": 1}]
    with DAG("parse_only_split_job", schedule=None):
        split = cola_check(
            rules=rules, valid_output="/lake/valid", invalid_output={"path": "/lake/quarantine", "mode": "overwrite"},
            annotate="rejections", quarantine_key=["id"], samples=2, annotate_valid=True,
        )(orders)().operator
        check = cola_check(rules=rules)(orders)().operator

    block = load_rules(rules)
    assert split._job_spec(block, split._job_outputs()) == JobSpec(
        command="split",
        rules=tuple(rules),
        samples=2,
        valid_output=parse_output("/lake/valid"),
        invalid_output=parse_output({"path": "/lake/quarantine", "mode": "overwrite"}),
        annotate="rejections",
        quarantine_key=("id",),
        annotate_valid=True,
    )
    assert check._job_spec(block, check._job_outputs()) == JobSpec(command="check", rules=tuple(rules))


def test_a_page_that_cannot_be_built_is_a_warning_and_pushes_no_report(run_dag, tmp_path):
    """The run is done (its history appended) when the page is built: failing the task then
    would have it retried, and the retry would append the same run twice. Whatever the error:
    here a Spark one, for real, from a history store with a file that cannot be read (the run
    appends to the store without reading its rows; the page's trends query reads them all)."""
    from airflow.models import DagRun
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    page = tmp_path / "decorated.html"
    broken = broken_history_file(tmp_path / "history")
    reason = (
        f"cannot read the history store {tmp_path / 'history'}: org.apache.spark.SparkException: "
        f"[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file://{broken}.  SQLSTATE: KD001"
    )
    outcome = run_dag("cola_test_report", "2024-01-03", {"out": str(tmp_path)})

    assert outcome.states["decorated_orders"] == "success"
    assert outcome.tries["decorated_orders"] == 1
    assert outcome.xcom["decorated_orders"]["severity"] == "fail"  # on_failure="warn": the run's own verdict
    assert f"The HTML report was not written: {reason}" in outcome.log
    assert not page.exists()
    with create_session() as session:
        run_id = session.scalars(
            select(DagRun.run_id).where(DagRun.dag_id == "cola_test_report").order_by(DagRun.id.desc()).limit(1)
        ).one()
        keys = session.scalars(
            select(XComModel.key).where(
                XComModel.dag_id == "cola_test_report", XComModel.run_id == run_id,
                XComModel.task_id == "decorated_orders",
            )
        ).all()
    assert "cola_report" not in keys and "return_value" in keys
    # One run of the three rules in the history (beside the broken file): the task ran once.
    import pyarrow.parquet as pq

    broken.unlink()
    history = pq.read_table(str(tmp_path / "history"), columns=["run_id", "rule_id"]).to_pylist()
    assert sorted(row["rule_id"] for row in history) == ["orders.keys", "orders.unique", "orders.volume"]
    assert len({row["run_id"] for row in history}) == 1


def test_a_kill_while_the_page_is_built_stops_the_task_instead_of_a_warning(run_dag, tmp_path, monkeypatch):
    """A kill raises nothing in the task: the Task SDK's SIGTERM handler only calls on_kill,
    which interrupts the session, so what the page's query raises next is an ordinary error.
    Killed for real (a SIGTERM to this process, which runs the task), as the page starts to be
    built, on a history store whose rows cannot be read: the page's query fails for real, and
    that must stop the task, not pass for a page that could not be written."""
    import os
    import signal

    from airflow_provider_cola import links

    built = links.write_report_page

    def killed_then_built(path, spark, spec, outcome):
        handler = signal.getsignal(signal.SIGTERM)
        assert getattr(handler, "__name__", None) == "_on_term", handler  # else SIGTERM would end pytest
        os.kill(os.getpid(), signal.SIGTERM)
        return built(path, spark, spec, outcome)

    monkeypatch.setattr(links, "write_report_page", killed_then_built)
    broken = broken_history_file(tmp_path / "history")
    outcome = run_dag("cola_test_report_killed", "2024-01-03", {"out": str(tmp_path)})

    assert outcome.states == {"killed_orders": "failed"}
    assert outcome.tries == {"killed_orders": 1}
    assert outcome.xcom == {}  # neither its results nor (below) a report
    assert "airflow.sdk.exceptions.AirflowTaskTerminated: the Cola task was killed: its run was interrupted" in (
        outcome.log
    )
    assert f"file://{broken}" in outcome.log  # the page's own error, as the kill's cause
    assert "The HTML report was not written" not in outcome.log
    assert not (tmp_path / "killed.html").exists()
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        keys = session.scalars(
            select(XComModel.key).where(
                XComModel.dag_id == "cola_test_report_killed", XComModel.task_id == "killed_orders"
            )
        ).all()
    assert "cola_report" not in keys

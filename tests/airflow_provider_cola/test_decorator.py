"""``@cola_check`` / ``@task.cola_check``: in-process rules, XCom, on_failure and branching."""

from __future__ import annotations

import inspect
import json

import pytest

from cola_expected import result, summary

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

UNIQUE_FAILS = summary(
    result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
           failed_count=1),
    result("row_count", "pass", "row_count = 6 is within bounds (min 1)", "row_count"),
)


def test_example_passes_and_publishes(run_dag):
    outcome = run_dag("cola_decorator", "2024-01-01")

    assert outcome.states == {"check_orders": "success", "publish": "success"}
    assert outcome.xcom["check_orders"] == summary(
        result("not_null", "pass", "not_null(order_id,email): no NULL values", "not_null(order_id,email)",
               check_name="keys present"),
        result("unique", "pass", "unique(order_id): all 6 rows are unique", "unique(order_id)"),
        result("avg", "pass", "avg(amount) = 243.7483 meets must_be (between 10 and 500)", "avg(amount)",
               metric_value=243.74833333333333),
    )
    assert "publishing: {'pass': 3, 'warn': 0, 'fail': 0}" in outcome.log


def test_example_fails_on_bad_data_after_pushing_xcom(run_dag):
    outcome = run_dag("cola_decorator", "2024-01-03")

    assert outcome.states == {"check_orders": "failed", "publish": "upstream_failed"}
    assert outcome.tries["check_orders"] == 1
    # Pushed before the task failed, so a person (or a callback) can see what broke.
    assert outcome.xcom["check_orders"] == summary(
        result("not_null", "fail", "not_null(order_id,email): 1 NULL value (order_id: 1)", "not_null(order_id,email)",
               failed_count=1, check_name="keys present"),
        result("unique", "fail", "unique(order_id): 1 duplicate row (6 rows, 5 distinct)", "unique(order_id)",
               failed_count=1),
        result("avg", "pass", "avg(amount) = 70.0833 meets must_be (between 10 and 500)", "avg(amount)",
               metric_value=70.08333333333333),
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
    }
    assert outcome.xcom["informative"] == UNIQUE_FAILS
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

"""The example DAGs, end to end: real ``dag.test()`` runs, real spark-submit in local mode.

Each run checks the sample day named by its logical date: the source path is templated
with ``{{ ds }}``, so the day (and the row counts in XCom) prove the template was rendered.
"""

from __future__ import annotations

import re

import pytest

from cola_expected import (
    ORDERS_FAIL_SUMMARY,
    ORDERS_FAILED_CHECKS,
    ORDERS_PASS_SUMMARY,
    ORDERS_WARN_SUMMARY,
    SPLIT_FAIL_SUMMARY,
)

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

# What each day's check cost Spark, as the submitted driver counted it: (jobs, stages that ran,
# rows read, bytes read). The CSV's header and schema inference take 2 of the 6 jobs.
COSTS = {"2024-01-01": (6, 6, 18, 1464), "2024-01-02": (6, 6, 24, 1893), "2024-01-03": (6, 6, 18, 1452)}


@pytest.mark.parametrize(
    ("day", "expected_summary", "ran", "skipped"),
    [
        ("2024-01-01", ORDERS_PASS_SUMMARY, ["load"], ["notify", "quarantine"]),
        ("2024-01-02", ORDERS_WARN_SUMMARY, ["load", "notify"], ["quarantine"]),
        ("2024-01-03", ORDERS_FAIL_SUMMARY, ["quarantine"], ["load", "notify"]),
    ],
    ids=["pass", "warn", "fail"],
)
def test_check_and_branch_follows_the_worst_severity(run_dag, day, expected_summary, ran, skipped):
    outcome = run_dag("cola_check_and_branch", day)

    assert outcome.state == "success"
    assert outcome.states == {
        "check_orders": "success",
        **dict.fromkeys(ran, "success"),
        **dict.fromkeys(skipped, "skipped"),
    }
    assert outcome.xcom["check_orders"] == expected_summary
    assert outcome.costs == {"check_orders": COSTS[day]}
    branch = {"2024-01-01": "['load']", "2024-01-02": "['load', 'notify']", "2024-01-03": "['quarantine']"}[day]
    assert f"Branch into {branch}" in outcome.log
    # The task is green whatever it found: its first Cola line says what, at WARNING level
    # unless the run passed, the codes that broke first, and the branch it follows.
    first = {
        "2024-01-01": "[info     ] Cola: pass (5 passed, 0 warned, 0 failed)",
        "2024-01-02": "[warning  ] Cola: WARN: 1 of 5 checks warned (missing_percent(email)); following load, notify",
        "2024-01-03": "[warning  ] Cola: FAIL: 3 of 5 checks failed (not_null(order_id), unique(order_id), "
                      "NEGATIVE_AMOUNT); following quarantine",
    }[day]
    cola_lines = [
        re.sub(r"^\S+ ", "", line).split(" [airflow.task.", 1)[0]
        for line in outcome.log.splitlines() if re.match(r"\S+ \[\w+ *\] Cola", line)
    ]
    assert cola_lines[0] == first
    if day == "2024-01-02":
        assert "orders loaded with 1 warning(s): ['missing_percent(email) = 12.5 violates warn (= 0)']" in outcome.log
    if day == "2024-01-03":
        assert "orders of 2024-01-03 held back; failed checks: ['not_null(order_id)', 'unique(order_id)', " \
               "'NEGATIVE_AMOUNT']" in outcome.log
        # With a branch, failed checks are logged and the task still succeeds.
        assert "Cola checks that failed:\n" + ORDERS_FAILED_CHECKS.split(":\n", 1)[1] in outcome.log


def test_split_writes_valid_rows_and_a_quarantine_with_codes(run_dag, spark, tmp_path):
    outcome = run_dag("cola_split_quarantine", "2024-01-03", {"output_dir": str(tmp_path)})

    assert outcome.states == {"split_orders": "success", "announce": "success"}
    assert outcome.xcom["split_orders"] == SPLIT_FAIL_SUMMARY
    assert outcome.costs == {"split_orders": (5, 5, 13, 2768)}
    assert "1 valid rows, 5 quarantined" in outcome.log
    valid = spark.read.parquet(str(tmp_path / "2024-01-03" / "valid"))
    quarantine = spark.read.parquet(str(tmp_path / "2024-01-03" / "quarantine"))
    assert [tuple(row) for row in valid.orderBy("order_id").collect()] == [(22.0, "KE", "nia@example.com", 3001)]
    assert sorted(
        (row.order_id or 0, row.rejections) for row in quarantine.collect()
    ) == [
        (0, ["not_null(order_id)"]),
        (3002, ["NEGATIVE_AMOUNT"]),
        (3003, ["unique(order_id)"]),
        (3003, ["unique(order_id)"]),
        (3005, ["BAD_COUNTRY"]),
    ]
    report = spark.read.parquet(str(tmp_path / "2024-01-03" / "report"))
    assert sorted((row.code, row.severity, row.pipeline) for row in report.collect()) == [
        ("BAD_COUNTRY", "fail", "cola_split_quarantine.split_orders"),
        ("NEGATIVE_AMOUNT", "fail", "cola_split_quarantine.split_orders"),
        ("not_null(order_id)", "fail", "cola_split_quarantine.split_orders"),
        ("unique(order_id)", "fail", "cola_split_quarantine.split_orders"),
    ]


def test_downstream_branch_reads_the_check_xcom(run_dag):
    outcome = run_dag("cola_xcom_branch", "2024-01-03")

    # on_failure="warn": the check succeeds and logs what failed; the branch decides.
    assert outcome.states == {
        "check_orders": "success",
        "route": "success",
        "publish": "skipped",
        "open_ticket": "skipped",
        "hold_back": "success",
    }
    assert outcome.xcom["check_orders"] == ORDERS_FAIL_SUMMARY
    assert (
        "Cola checks that failed (on_failure='warn', so the task succeeds):\n"
        + ORDERS_FAILED_CHECKS.split(":\n", 1)[1]
    ) in outcome.log
    assert "held back: ['not_null(order_id)', 'unique(order_id)', 'NEGATIVE_AMOUNT']" in outcome.log

"""The checks before any job: a rule Spark cannot run on the DataFrame is refused from its
schema and Spark's analyser, before the planner's scan starts a job.

Jobs are counted with a job group and ``statusTracker`` (the ``job_counter`` fixture).
"""

from __future__ import annotations

import pytest

from cola_core import Cola
from cola_core.errors import ColaRuleError

UNIQUE_ID = {"type": "unique", "columns": ["order_id"]}


def test_a_rule_that_does_not_fit_the_schema_fails_before_any_job(job_counter, benchmark_orders):
    # The distinct set would be counted first under "separate"; planning must finish before it.
    rules = [UNIQUE_ID, {"type": "avg", "column": "email", "must_be": "> 0"}]
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as caught:
        Cola(distinct_strategy="separate").run(benchmark_orders, rules)
    assert counted.jobs == 0
    assert (caught.value.position, caught.value.rule_type) == (1, "avg")


def test_a_missing_column_fails_before_any_job(job_counter, benchmark_orders):
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as caught:
        Cola().run(benchmark_orders, [UNIQUE_ID, {"type": "not_null", "columns": ["zip"]}])
    assert counted.jobs == 0
    assert caught.value.reason == (
        "column 'zip' does not exist; the DataFrame has "
        "order_id, customer_id, email, cpf, amount, status, created_at"
    )

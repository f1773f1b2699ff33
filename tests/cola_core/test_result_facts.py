"""Facts a result carries as fields, so that no reader parses its message: whether Spark could
evaluate the rule (``evaluation_failed``), and the counts per column (``details``)."""

from __future__ import annotations

import os

import pytest

from cola_core import BaseCheck, CheckResult, Cola, ColaError
from cola_core.report import summarise

pytestmark = pytest.mark.spark

DIVIDE = {"type": "expression", "expression": "id / (id - id) > 0"}


class Worded(BaseCheck):
    """A custom check whose own failure is worded like an unmeasured rule, but was measured."""

    def run(self, df):
        return CheckResult("worded", False, "the vendor could not evaluate this, on purpose", 1)


def test_a_rule_spark_fails_on_is_flagged_and_the_others_are_not(spark):
    df = spark.createDataFrame([(1, "a"), (None, "5")], "id int, s string")
    cola = Cola()
    cola.register("worded", Worded)
    results = cola.run(df, [DIVIDE, {"type": "not_null", "columns": ["id"]}, {"type": "worded"}])
    assert [(r.severity, r.evaluation_failed) for r in results] == [("fail", True), ("fail", False), ("fail", False)]
    written = summarise(results)["results"]
    assert written[0]["evaluation_failed"] is True
    assert ["evaluation_failed" in r for r in written] == [True, False, False]


def test_a_rule_spark_fails_on_in_a_where_is_flagged_too(spark):
    df = spark.createDataFrame([(1, "a"), (2, "5")], "id int, s string")
    results = Cola().run(df, [{"type": "unique", "columns": ["id"], "where": "cast(s AS int) > 0"}])
    assert results[0].evaluation_failed is True
    assert results[0].message.startswith("unique(id): Spark could not evaluate the rule on this data: [CAST_INVALID_INPUT]")


def test_the_split_names_only_the_rules_flagged_unmeasured_whatever_the_others_say(spark, tmp_path):
    df = spark.createDataFrame([(1,), (2,)], "id int")
    cola = Cola()
    cola.register("worded", Worded)
    with pytest.raises(ColaError) as raised:
        cola.split_write(df, [DIVIDE, {"type": "worded"}], valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert str(raised.value) == (
        "the split cannot be written, as a row rule fails on the data: expression(id / (id - id) > 0): "
        "Spark could not evaluate the rule on this data: [DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to "
        "tolerate divisor being 0 and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" "
        "to bypass this error. SQLSTATE: 22012"
    )
    assert os.listdir(tmp_path) == []


def test_not_null_over_several_columns_carries_its_counts_through_the_split(spark, tmp_path):
    df = spark.createDataFrame([(1, "a"), (None, "b"), (3, None)], "customer_id int, email string")
    rules = [{"type": "not_null", "columns": ["customer_id", "email"]}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results[0].details == {"columns": {"customer_id": 1, "email": 1}}
    assert outcome.results[0].message == "not_null(customer_id,email): 2 NULL values (customer_id: 1, email: 1)"
    assert (outcome.valid_count, outcome.invalid_count) == (1, 2)

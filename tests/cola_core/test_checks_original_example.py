"""The custom-check example of the original documentation runs unchanged.

Its import, ``from cola_core.checks import BaseCheck, CheckResult``, is what a custom check
written against the first releases has: the package of checks must keep giving both names.
The example is run from its text, exactly as it was published.
"""

from __future__ import annotations

import datetime as dt

import pytest

from cola_core import CheckResult

pytestmark = pytest.mark.spark

ORIGINAL_EXAMPLE = '''
from pyspark.sql import functions as F
from cola_core import Cola
from cola_core.checks import BaseCheck, CheckResult

class NoFutureDateCheck(BaseCheck):
    def run(self, df):
        column = self.params["column"]
        failed = df.filter(F.col(column) > F.current_date()).count()
        if failed:
            return CheckResult("no_future_date", False, f"{failed} future dates", failed)
        return CheckResult("no_future_date", True)

    def violation(self, df):
        return F.col(self.params["column"]) > F.current_date()

cola = Cola()
cola.register("no_future_date", NoFutureDateCheck)
cola.run(df, [{"type": "no_future_date", "column": "ordered_at"}])
'''


@pytest.fixture
def orders(spark):
    today = dt.date.today()
    rows = [(1, today + dt.timedelta(days=30)), (2, today - dt.timedelta(days=30))]
    return spark.createDataFrame(rows, "order_id int, ordered_at date")


def run_example(df):
    namespace = {"df": df}
    exec(compile(ORIGINAL_EXAMPLE, "original_example.py", "exec"), namespace)
    return namespace


def test_the_original_custom_check_example_runs_unchanged(orders):
    namespace = run_example(orders)
    results = namespace["cola"].run(orders, [{"type": "no_future_date", "column": "ordered_at"}])
    assert results == [
        CheckResult("no_future_date", False, "1 future dates", 1, code="no_future_date(ordered_at)")
    ]
    assert str(results[0]) == "[FAIL] check: 1 future dates"
    assert results[0].rule_id == namespace["NoFutureDateCheck"]({"column": "ordered_at"}, rule_type="no_future_date").rule_id
    past = orders.where("order_id = 2")
    assert namespace["cola"].run(past, [{"type": "no_future_date", "column": "ordered_at"}]) == [
        CheckResult("no_future_date", True, "", 0, code="no_future_date(ordered_at)")
    ]


def test_the_original_example_splits_the_future_row_into_invalid_with_its_code(orders):
    cola = run_example(orders)["cola"]
    split = cola.split(orders, [{"type": "no_future_date", "column": "ordered_at"}], annotate="errors")
    assert [row.order_id for row in split.valid.collect()] == [2]
    assert [(row.order_id, row.errors) for row in split.invalid.collect()] == [(1, ["no_future_date(ordered_at)"])]
    assert split.valid.columns == ["order_id", "ordered_at"]

"""Custom checks, written exactly as the seeds document them.

Seed 000: a subclass of ``BaseCheck`` with ``run(df)`` (its own Spark action) and an optional
``violation(df)`` that puts it into the split. Seed 001: the same check written with
``aggregations`` / ``from_aggregations``, which joins the block's shared scan.
"""

from __future__ import annotations

import ast
import datetime as dt

import pytest
from pyspark.sql import functions as F

from cola_core import BaseCheck, CheckResult, Cola, ColaError
from cola_helpers import NoFutureDateCheck as NoFutureDateAggregateCheck  # seed 001's variant

pytestmark = pytest.mark.spark


class NoFutureDateCheck(BaseCheck):
    """Seed 000's example."""

    def run(self, df):
        column = self.params["column"]
        failed = df.filter(F.col(column) > F.current_date()).count()
        if failed:
            return CheckResult("no_future_date", False, f"{failed} future dates", failed)
        return CheckResult("no_future_date", True)

    def violation(self, df):
        return F.col(self.params["column"]) > F.current_date()


# The session time zone is UTC, so "today" for Spark's current_date() is the UTC date.
TODAY = dt.datetime.now(dt.timezone.utc).date()


@pytest.fixture
def orders(spark):
    days = [TODAY - dt.timedelta(days=10), TODAY, TODAY + dt.timedelta(days=10), TODAY + dt.timedelta(days=20), None]
    return spark.createDataFrame([(i, d) for i, d in enumerate(days, start=1)], "id int, ordered_at date")


@pytest.fixture
def cola():
    cola = Cola()
    cola.register("no_future_date", NoFutureDateCheck)
    return cola


def test_seed_000_custom_check_runs_and_gets_its_code(cola, orders):
    [result] = cola.run(orders, [{"type": "no_future_date", "column": "ordered_at"}])
    assert result == CheckResult(
        "no_future_date", False, "2 future dates", 2, code="no_future_date(ordered_at)"
    )
    assert (result.severity, result.metric_value) == ("fail", None)
    assert str(result) == "[FAIL] check: 2 future dates"


def test_seed_000_custom_check_passing_and_named(cola, spark):
    past = spark.createDataFrame([(TODAY - dt.timedelta(days=1),)], "ordered_at date")
    [result] = cola.run(past, [{"type": "no_future_date", "column": "ordered_at", "name": "no orders from the future"}])
    assert result == CheckResult(
        "no_future_date", True, "", 0, check_name="no orders from the future", code="no_future_date(ordered_at)"
    )
    assert str(result) == "[PASS] no orders from the future: "


def test_seed_000_custom_check_on_an_empty_dataframe(cola, spark):
    empty = spark.createDataFrame([], "ordered_at date")
    [result] = cola.run(empty, [{"type": "no_future_date", "column": "ordered_at"}])
    assert result.passed is True and result.failed_count == 0


def test_registered_type_is_available_and_a_declared_code_wins(cola, orders):
    assert "no_future_date" in cola.available
    assert cola.available == sorted(cola.available)
    [result] = cola.run(orders, [{"type": "no_future_date", "column": "ordered_at", "code": "FUTURE"}])
    assert result.code == "FUTURE"


def test_seed_000_custom_check_joins_the_split_through_violation(cola, orders):
    valid, invalid = cola.split(orders, [{"type": "no_future_date", "column": "ordered_at"}], annotate="dq_codes")
    # The NULL date compares as NULL, which never blames a row.
    assert sorted(row.id for row in valid.collect()) == [1, 2, 5]
    assert sorted((row.id, row.dq_codes) for row in invalid.collect()) == [
        (3, ["no_future_date(ordered_at)"]),
        (4, ["no_future_date(ordered_at)"]),
    ]
    assert valid.schema == orders.schema


def test_custom_check_in_a_block_with_built_ins_keeps_rule_order(cola, orders):
    results = cola.run(
        orders,
        [
            {"type": "not_null", "columns": ["ordered_at"]},
            {"type": "no_future_date", "column": "ordered_at"},
            {"type": "row_count", "must_be": "= 5"},
        ],
    )
    assert [str(r) for r in results] == [
        "[FAIL] check: not_null(ordered_at): 1 NULL value (ordered_at: 1)",
        "[FAIL] check: 2 future dates",
        "[PASS] check: row_count = 5 meets must_be (= 5)",
    ]


def test_seed_001_aggregate_variant_gives_the_same_result_in_the_shared_scan(orders, job_counter):
    cola = Cola()
    cola.register("no_future_date", NoFutureDateAggregateCheck)
    check = cola.parse([{"type": "no_future_date", "column": "ordered_at"}])[0]
    assert check.supports_aggregations is True and check.is_row_level is False
    with job_counter.count() as jobs:
        results = cola.run(
            orders,
            [{"type": "no_future_date", "column": "ordered_at"}, {"type": "not_null", "columns": ["ordered_at"]}],
        )
    assert results[0] == CheckResult("no_future_date", False, "2 future dates", 2, code="no_future_date(ordered_at)")
    assert results[1].failed_count == 1
    assert jobs.jobs == 1  # one df.agg for both rules


def test_seed_001_variant_matches_seed_000_field_by_field(cola, orders):
    aggregate = Cola()
    aggregate.register("no_future_date", NoFutureDateAggregateCheck)
    rules = [{"type": "no_future_date", "column": "ordered_at", "name": "future"}]
    assert aggregate.run(orders, rules) == cola.run(orders, rules)


def test_a_custom_check_without_violation_stays_out_of_the_split(orders):
    cola = Cola()
    cola.register("no_future_date", NoFutureDateAggregateCheck)
    valid, invalid = cola.split(orders, [{"type": "no_future_date", "column": "ordered_at"}])
    assert valid.count() == 5 and invalid.count() == 0


def test_registering_twice_needs_replace(cola):
    with pytest.raises(ColaError) as raised:
        cola.register("no_future_date", NoFutureDateAggregateCheck)
    assert str(raised.value) == (
        "check type 'no_future_date' is already registered (to NoFutureDateCheck); pass replace=True to override it"
    )
    cola.register("no_future_date", NoFutureDateAggregateCheck, replace=True)
    assert cola.parse([{"type": "no_future_date", "column": "c"}])[0].supports_aggregations is True


class AtMostCheck(BaseCheck):
    """A custom check that says its own thresholds, with values (and a key) that are no text."""

    def run(self, df):
        rows = df.count()
        limit = self.params["limit"]
        return CheckResult("at_most", rows <= limit, f"{rows} rows", 0, float(rows),
                           thresholds={"limit": limit, 2: 0.5, "ok": "as text"})


def test_a_custom_checks_own_thresholds_are_kept_in_their_order_as_text(orders):
    import json

    from cola_core.report.results import results_text, summarise

    cola = Cola()
    cola.register("at_most", AtMostCheck)
    [result] = cola.run(orders, [{"type": "at_most", "limit": 5}])
    # The provider reads the results file's thresholds as an object of strings (a 5 would be
    # refused, and the same rule would fail under spark-submit but not in @cola_check).
    assert list(result.thresholds.items()) == [("limit", "5"), ("2", "0.5"), ("ok", "as text")]
    written = json.loads(results_text(summarise([result])))
    assert written["results"][0]["thresholds"] == {"limit": "5", "2": "0.5", "ok": "as text"}


def giving(thresholds):
    """A custom check whose result gives ``thresholds`` as they are."""

    class GivingCheck(BaseCheck):
        def run(self, df):
            return CheckResult("giving", True, "m", 0, thresholds=thresholds)

    cola = Cola()
    cola.register("giving", GivingCheck)
    return cola


def test_a_custom_checks_own_threshold_that_is_none_is_left_out_as_a_rules_parameter_is(orders):
    from types import MappingProxyType

    # judging_parameters leaves out a parameter that is None; a custom check's own, alike:
    # "None" would read as a limit someone set.
    [result] = giving({"limit": None, "max": 3}).run(orders, [{"type": "giving"}])
    assert list(result.thresholds.items()) == [("max", "3")]
    [result] = giving({"limit": None}).run(orders, [{"type": "giving"}])
    assert result.thresholds == {} and result.to_dict()["thresholds"] == {}
    # Any mapping, made a dict the results file can write.
    [result] = giving(MappingProxyType({"limit": "5"})).run(orders, [{"type": "giving"}])
    assert type(result.thresholds) is dict and result.thresholds == {"limit": "5"}


@pytest.mark.parametrize("thresholds", [["limit", 5], "limit 5", 5])
def test_a_custom_checks_own_thresholds_that_are_no_mapping_are_refused_naming_the_rule(orders, thresholds):
    from cola_core import ColaRuleError

    cola = giving(thresholds)
    with pytest.raises(ColaRuleError) as raised:
        cola.run(orders, [{"type": "row_count", "must_be": "> 0"}, {"type": "giving"}])
    assert str(raised.value) == (
        "rules[1] (giving): the check's result gives thresholds that are no mapping of names to values (such as "
        f'{{"limit": 5}}): got {type(thresholds).__name__}'
    )
    assert (raised.value.position, raised.value.rule_type) == (1, "giving")


def test_a_custom_checks_own_thresholds_whose_names_are_the_same_text_are_refused(orders):
    from cola_core import ColaRuleError

    # {1: 1, "1": 2} made text was {"1": "2"}: one threshold silently gone.
    with pytest.raises(ColaRuleError) as raised:
        giving({"limit": 5, 1: 1, "1": 2}).run(orders, [{"type": "giving"}])
    assert str(raised.value) == (
        "rules[0] (giving): the check's result gives thresholds named 1 and '1', the same name '1' once made text: "
        "give each its own name"
    )


# -- the original example, run from its text ------------------------------------------------------
# Its import, ``from cola_core.checks import BaseCheck, CheckResult``, is what a custom check
# written against the first releases has: the package of checks must keep giving both names.

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
def ordered(spark):
    today = dt.date.today()
    rows = [(1, today + dt.timedelta(days=30)), (2, today - dt.timedelta(days=30))]
    return spark.createDataFrame(rows, "order_id int, ordered_at date")


def run_example(df):
    """Run the example's text on ``df``: its namespace, and what its last line (``cola.run``) gave."""
    tree = ast.parse(ORIGINAL_EXAMPLE)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr)
    namespace = {"df": df}
    exec(compile(tree, "original_example.py", "exec"), namespace)
    return namespace, eval(compile(ast.Expression(last.value), "original_example.py", "eval"), namespace)


def test_the_original_custom_check_example_runs_unchanged(ordered):
    namespace, results = run_example(ordered)
    assert results == [
        CheckResult("no_future_date", False, "1 future dates", 1, code="no_future_date(ordered_at)")
    ]
    assert str(results[0]) == "[FAIL] check: 1 future dates"
    assert results[0].rule_id == namespace["NoFutureDateCheck"]({"column": "ordered_at"}, rule_type="no_future_date").rule_id
    past = ordered.where("order_id = 2")
    assert namespace["cola"].run(past, [{"type": "no_future_date", "column": "ordered_at"}]) == [
        CheckResult("no_future_date", True, "", 0, code="no_future_date(ordered_at)")
    ]


def test_the_original_example_splits_the_future_row_into_invalid_with_its_code(ordered):
    cola = run_example(ordered)[0]["cola"]
    split = cola.split(ordered, [{"type": "no_future_date", "column": "ordered_at"}], annotate="errors")
    assert [row.order_id for row in split.valid.collect()] == [2]
    assert [(row.order_id, row.errors) for row in split.invalid.collect()] == [(1, ["no_future_date(ordered_at)"])]
    assert split.valid.columns == ["order_id", "ordered_at"]

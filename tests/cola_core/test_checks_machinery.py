"""What the engine does with a check (``checks/machinery.py``), beside what its author writes:
how a result is completed and judged by the rule's options (``severity``, ``tolerance``,
``dimension``: ``finish``), that a check is built once and never changes, and the bound
copies the planner makes."""

from __future__ import annotations

import pytest

from cola_core import BaseCheck, CheckResult, Cola, ColaError, RuleOptions
from cola_core.storage.specs import SourceSpec
from cola_helpers import fk, run_all

pytestmark = [pytest.mark.spark, pytest.mark.connect]


class _Offending(BaseCheck):
    def violation(self, df):
        raise NotImplementedError


# -- severity, tolerance, dimension: finish() -------------------------------------------------


@pytest.mark.spark
def test_a_warn_rule_that_fails_is_a_warn_and_keeps_its_count(order_lines):
    (result,) = run_all(order_lines, {"type": "range", "column": "amount", "min": 0, "severity": "warn", "name": "amounts"})
    assert result == CheckResult(
        "range", True, "range(amount,0,): 1 value out of range (>= 0)", 1, None, "warn", "amounts", code="range(amount,0,)"
    )
    assert str(result) == "[WARN] amounts: range(amount,0,): 1 value out of range (>= 0)"
    (metric,) = run_all(order_lines, {"type": "missing_count", "column": "email", "must_be": "= 0", "severity": "warn"})
    assert (metric.severity, metric.passed, metric.metric_value) == ("warn", True, 2)


@pytest.mark.spark
def test_tolerance_passes_a_row_rule_under_its_share_and_still_quarantines(order_lines):
    within, beyond = run_all(
        order_lines,
        {"type": "not_null", "columns": ["email"], "tolerance": "< 50%"},
        {"type": "not_null", "columns": ["email"], "tolerance": "< 10%"},
    )
    assert (within.severity, within.failed_count, within.message) == (
        "pass", 2, "not_null(email): 2 NULL values (email: 2); 40% of rows, within tolerance (< 50%)"
    )
    assert (beyond.severity, beyond.message) == (
        "fail", "not_null(email): 2 NULL values (email: 2); 40% of rows, beyond tolerance (< 10%)"
    )
    _, invalid = Cola().split(order_lines, [{"type": "not_null", "columns": ["email"], "tolerance": "< 50%"}])
    assert invalid.count() == 2


@pytest.mark.spark
def test_tolerance_is_a_share_of_the_rows_in_scope(order_lines):
    (result,) = run_all(order_lines, {"type": "not_null", "columns": ["email"], "tolerance": "<= 50%", "where": "id < 3"})
    assert result.message == "not_null(email): 2 NULL values (email: 2); 50% of rows, within tolerance (<= 50%)"


@pytest.mark.spark
def test_dimension_is_carried_into_the_result(order_lines):
    (result,) = run_all(order_lines, {"type": "not_null", "columns": ["id"], "dimension": "Completeness"})
    assert (result.dimension, result.to_dict()["dimension"]) == ("Completeness", "Completeness")


# -- a check is built once and never changes ----------------------------------------------------


def test_a_parsed_check_cannot_be_changed():
    (check,) = Cola().parse([{"type": "not_null", "columns": ["id"], "severity": "warn"}])
    for name, value in (("code", "OTHER"), ("params", {}), ("options", RuleOptions()), ("anything", 1)):
        with pytest.raises(AttributeError) as raised:
            setattr(check, name, value)
        assert str(raised.value) == (
            f"a check is built once and never changes; cannot set {name!r} on <NotNullCheck not_null(id)>"
        )
    assert (check.code, check.severity_level, dict(check.params)) == ("not_null(id)", "warn", {"columns": ["id"]})


def test_a_checks_params_are_read_only():
    (check,) = Cola().parse([{"type": "range", "column": "amount", "min": 0}])
    with pytest.raises(TypeError) as raised:
        check.params["min"] = -1  # type: ignore[index]
    assert str(raised.value) == "'mappingproxy' object does not support item assignment"
    assert dict(check.params) == {"column": "amount", "min": 0}


def test_a_custom_check_is_frozen_once_its_own_init_returns():
    class Configured(_Offending):
        def __init__(self, params=None, **kwargs):
            super().__init__(params, **kwargs)
            self.limit = 5  # still building: allowed

    check = Configured({"column": "a"})
    with pytest.raises(AttributeError) as raised:
        check.limit = 6
    assert str(raised.value) == "a check is built once and never changes; cannot set 'limit' on <Configured Configured(a)>"
    assert check.limit == 5


# -- references and bound copies ---------------------------------------------------------------


def test_with_inputs_returns_a_bound_copy_and_leaves_the_original_unbound():
    (check,) = Cola().parse([fk()])
    assert check.references() == {"reference": SourceSpec(table="ref_customers")}
    reference = object()  # the planner hands over a DataFrame; the check only keeps it
    bound = check.with_inputs({"reference": reference})
    assert bound is not check and type(bound) is type(check)
    assert (bound.is_bound, check.is_bound) == (True, False)
    assert bound.input("reference") is reference
    assert (bound.code, bound.options, dict(bound.params)) == (check.code, check.options, dict(check.params))
    with pytest.raises(AttributeError):
        bound.code = "other"


def test_input_on_an_unbound_check_names_the_reference():
    (check,) = Cola().parse([fk()])
    with pytest.raises(ColaError) as raised:
        check.input("reference")
    assert str(raised.value) == (
        "<ForeignKeyCheck foreign_key(customer_id)> reads the reference 'reference', which the planner has not "
        "read; run the check through Cola().run or cola_core.plan.planner"
    )
    assert _Offending().is_bound is True  # a check without references needs nothing


def test_bindings_are_copies_of_the_checks_own_class():
    check = _Offending({"column": "a"}, rule_type="offending")
    named, judged = check.with_rule_id("mine"), check.with_history([3.0, 2.0])
    assert (type(named), type(judged)) == (_Offending, _Offending)
    assert (named.rule_id, check.rule_id) == ("mine", check.identity())
    assert (judged.history_values, check.history_values) == ((3.0, 2.0), None)
    suffixed = check.with_code_suffix("#2")
    assert (suffixed.code, suffixed.code_suffix, check.code, check.code_suffix) == (
        "offending(a)#2", "#2", "offending(a)", ""
    )

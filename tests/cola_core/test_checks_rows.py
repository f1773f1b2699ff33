"""Row rules written by the user (``checks/rows.py``): ``expression`` and ``castable``."""

from __future__ import annotations

import pytest

from cola_core import Cola
from cola_helpers import codes_of, refused, run_all

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_expression_rule(order_lines):
    strict, lenient = run_all(
        order_lines,
        {"type": "expression", "expression": "ends > starts"},
        {"type": "expression", "expression": "ends > starts", "null_is_valid": True},
    )
    assert (strict.failed_count, strict.message) == (
        2, "expression(ends > starts): 2 rows do not meet the expression (NULL counts as not met)"
    )
    assert (lenient.failed_count, lenient.message, lenient.code) == (
        1, "expression(ends > starts): 1 row does not meet the expression", "expression(ends > starts)"
    )
    _, invalid = Cola().split(order_lines, [{"type": "expression", "expression": "ends > starts"}], annotate="dq")
    assert codes_of(invalid) == [(1, 2, ("expression(ends > starts)",)), (2, 1, ("expression(ends > starts)",))]


def test_castable_rule(order_lines):
    as_int, as_decimal, as_date = run_all(
        order_lines,
        {"type": "castable", "column": "qty", "to": "int"},
        {"type": "castable", "column": "qty", "to": "decimal(5,1)"},
        {"type": "castable", "column": "qty", "to": "date"},
    )
    assert (as_int.failed_count, as_int.message) == (2, "castable(qty,int): 2 values cannot be cast to int")
    assert (as_decimal.failed_count, as_decimal.code) == (1, "castable(qty,decimal(5,1))")
    assert as_date.failed_count == 4  # NULL is not a value to cast, so it never fails



@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"type": "castable", "column": "qty", "to": "varchar"},
         "rules[0] (castable): 'to' is 'varchar'; it must be one of boolean, tinyint, smallint, int, bigint, float, "
         "double, decimal(p,s), date, timestamp"),
        ({"type": "expression", "expression": "a > b", "null_is_valid": "yes"},
         "rules[0] (expression): 'null_is_valid' must be true or false, got 'yes'"),
    ],
)
def test_malformed_expression_and_castable_rules_are_refused(rule, message):
    assert refused(rule) == message

"""``values_present`` (``checks/presence.py``): every listed value occurs in a column."""

from __future__ import annotations

import datetime as dt

import pytest

from cola_helpers import refused, run_all

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_values_present_rule(order_lines):
    complete, missing = run_all(
        order_lines,
        {"type": "values_present", "column": "dt", "values": ["2024-01-01", "2024-01-02"]},
        {"type": "values_present", "column": "dt", "values": ["2024-01-01", "2024-01-03", dt.date(2024, 1, 5)]},
    )
    assert (complete.passed, complete.message) == (True, "values_present(dt): all 2 values present")
    assert (missing.passed, missing.failed_count, missing.message) == (
        False, 2, "values_present(dt): 2 of 3 values missing: 2024-01-03, 2024-01-05"
    )



def test_an_empty_values_list_is_refused():
    assert refused({"type": "values_present", "column": "dt", "values": []}) == (
        "rules[0] (values_present): 'values' must be a non-empty list of values, got []"
    )

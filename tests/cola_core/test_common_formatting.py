"""How values are written in messages, codes and samples (``common/formatting.py``)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cola_core.common.formatting import format_number, format_value, iso_duration, json_safe, plural, render_code


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (8, "8"), (8.0, "8"), (100 / 3, "33.3333"), (0.00001, "0"), (-0.00001, "0"), (2.5, "2.5"),
        (True, "true"), (Decimal("12345678901234567890"), "12345678901234567890"), (Decimal("1.50"), "1.5"),
        (1e308, "1e+308"), (float("nan"), "nan"), (float("-inf"), "-inf"), ("x", "x"),
    ],
)
def test_format_number(value, shown):
    assert format_number(value) == shown


def test_format_value_render_code_and_plural():
    assert [format_value(v) for v in (None, 3.0, dt.datetime(2024, 1, 31, 10), dt.date(2024, 1, 31), "a")] == [
        "", "3", "2024-01-31 10:00:00", "2024-01-31", "a",
    ]
    assert render_code("range", "age", 1, None) == "range(age,1,)"
    assert render_code("row_count") == "row_count"
    assert (plural(1, "value"), plural(0, "value"), plural(3, "row")) == ("1 value", "0 values", "3 rows")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (dt.timedelta(days=1, seconds=7384, microseconds=500000), "P1DT2H3M4.5S"),
        (-dt.timedelta(seconds=1.25), "-P0DT0H0M1.25S"),
        (dt.timedelta(microseconds=1), "P0DT0H0M0.000001S"),
        (dt.timedelta(0), "P0DT0H0M0S"),
    ],
)
def test_day_time_intervals_are_iso_durations(value, shown):
    assert iso_duration(value) == shown
    assert json_safe(value) == shown


def test_json_safe_forms():
    assert json_safe(
        {2: Decimal("2"), True: b"\x00\xff", dt.time(10, 11, 12): float("-inf"), "s": (1, float("nan"))}
    ) == {"2": 2, "true": "00ff", "10:11:12": "-Infinity", "s": [1, "NaN"]}
    assert json_safe(Decimal("0.1")) == 0.1
    assert json_safe(Decimal("0.12345678901234567890")) == "0.12345678901234567890"
    assert json_safe(object.__new__(type("Geometry", (), {"__str__": lambda self: "POINT (1 2)"}))) == "POINT (1 2)"


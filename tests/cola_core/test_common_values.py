"""What a rule's values are (``common/values.py``): numbers, ISO dates and timestamps, type aliases."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest

from cola_core.common.values import (
    DATETIME_TEXT,
    SPARK_TYPE_ALIASES,
    as_datetime,
    is_datetime_text,
    is_finite_number,
    is_number,
    plain_number,
    python_pattern,
)


@pytest.mark.parametrize(
    ("value", "number", "finite"),
    [
        (1, True, True), (-2.5, True, True), (Decimal("1.5"), True, True), (True, False, False),
        (float("nan"), True, False), (float("inf"), True, False), (Decimal("NaN"), True, False),
        (Decimal("-Infinity"), True, False), ("1", False, False), (None, False, False),
    ],
)
def test_numbers_are_ints_floats_and_decimals_never_bools(value, number, finite):
    assert (is_number(value), is_finite_number(value)) == (number, finite)


def test_plain_number_keeps_whole_decimals_exact():
    assert plain_number(Decimal("12345678901234567890123")) == 12345678901234567890123
    assert type(plain_number(Decimal("2.000"))) is int
    assert plain_number(Decimal("2.5")) == 2.5 and type(plain_number(Decimal("2.5"))) is float
    assert plain_number(7) == 7 and plain_number(None) is None


def test_python_pattern_spells_the_absolute_end_for_re():
    assert python_pattern(r"^a+\z") == r"^a+\Z"
    assert re.match(python_pattern(DATETIME_TEXT), "2024-01-31\n") is None


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("2024-01-31", True), ("2024-01-31 10:00", True), ("2024-01-31T10:00:05.123456Z", True),
        ("2024-01-31 10:00:05+05:30", True), ("2022-02-30", True),  # the shape only
        ("2024-13-01", False), ("2024-01-32", False), ("2024-01-31 24:00", False), ("2024-01-31\n", False),
        ("2024-01-31 10:00+05:30", False),  # Spark takes a zone only after the seconds
        ("24-01-31", False),
    ],
)
def test_is_datetime_text(text, accepted):
    assert is_datetime_text(text) is accepted


def test_as_datetime_reads_dates_datetimes_and_iso_text():
    assert as_datetime(dt.date(2024, 1, 31)) == dt.datetime(2024, 1, 31)
    moment = dt.datetime(2024, 1, 31, 10, tzinfo=dt.timezone.utc)
    assert as_datetime(moment) is moment
    assert as_datetime("2024-01-31") == dt.datetime(2024, 1, 31)
    assert as_datetime("2024-01-31T10:11:12.5") == dt.datetime(2024, 1, 31, 10, 11, 12, 500000)
    assert as_datetime("2024-01-31 10:11:12Z") == dt.datetime(2024, 1, 31, 10, 11, 12, tzinfo=dt.timezone.utc)
    assert as_datetime("2024-01-31 10:11:12-03:30") == dt.datetime(
        2024, 1, 31, 10, 11, 12, tzinfo=dt.timezone(-dt.timedelta(hours=3, minutes=30))
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("31/01/2024", "'31/01/2024' is not an ISO date or timestamp"),
        ("2024-01-31 10:00:00+19:00", "the zone offset +19:00 is beyond Spark's largest, +-18:00"),
        ("2022-02-30", "day is out of range for month"),
    ],
)
def test_as_datetime_refuses_text_naming_no_instant(text, message):
    with pytest.raises(ValueError) as raised:
        as_datetime(text)
    assert str(raised.value) == message


def test_type_aliases_name_spark_types():
    assert SPARK_TYPE_ALIASES["long"] == "bigint"
    assert SPARK_TYPE_ALIASES["integer"] == "int"
    assert set(SPARK_TYPE_ALIASES.values()) == {
        "bigint", "int", "smallint", "tinyint", "boolean", "string", "float", "double", "timestamp",
    }

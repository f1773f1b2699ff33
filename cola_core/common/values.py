"""What a rule's values are: numbers, ISO dates and timestamps, and Spark type names.

Pure Python, shared by the rule parser and the checks, so that "is this a number" and "is
this an ISO date" have one answer in the engine.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal
from typing import Any

__all__ = [
    "DATETIME_TEXT",
    "DATE_TEXT",
    "SPARK_TYPE_ALIASES",
    "as_datetime",
    "is_datetime_text",
    "is_finite_number",
    "is_number",
    "plain_number",
    "python_pattern",
    "utc_datetime",
]


def is_number(value: Any) -> bool:
    """An int, float or Decimal; never a bool, which Python counts as an int."""
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def is_finite_number(value: Any) -> bool:
    """A number that is neither NaN nor an infinity."""
    if not is_number(value):
        return False
    return isinstance(value, int) or (math.isfinite(value) if isinstance(value, float) else value.is_finite())


def plain_number(value: Any) -> Any:
    """A Spark number as a plain Python one: a whole Decimal becomes an exact int, any other
    Decimal a float (JSON has no Decimal; a sum of bigints keeps every digit)."""
    if isinstance(value, Decimal):
        return int(value) if value.is_finite() and value == value.to_integral_value() else float(value)
    return value


def python_pattern(java: str) -> str:
    """A Java pattern for Python's ``re``, which spells the absolute end ``\\Z``, not ``\\z``."""
    return java.replace("\\z", "\\Z")


# A calendar date's shape, yyyy-MM-dd with a real month and a day of at most 31 (Java regex).
DATE_TEXT = r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
# ISO dates and timestamps that Spark's string cast reads the same way Python does (Spark
# takes a zone only after the seconds). The shape only: '2022-02-30' has it, so Spark reads
# such text with try-cast semantics. It ends in \z, never $ (see checks.validity).
DATETIME_TEXT = (
    rf"^{DATE_TEXT}([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{{1,6}})?(Z|[+-][0-9]{{2}}:[0-9]{{2}})?)?)?\z"
)
_DATETIME_PYTHON = re.compile(python_pattern(DATETIME_TEXT))
# The same text, read into its parts (after is_datetime_text has accepted its shape).
_ISO_PARTS = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})?)?)?\Z",
    re.ASCII,
)
# Spark reads zone offsets up to 18 hours either way (java.time.ZoneOffset); Python up to 24.
_LARGEST_OFFSET = dt.timedelta(hours=18)


def is_datetime_text(text: str) -> bool:
    """Whether ``text`` is an ISO date or timestamp (``2024-01-31``, ``2024-01-31 10:00:00``)."""
    return bool(_DATETIME_PYTHON.match(text))


def as_datetime(value: dt.date | str) -> dt.datetime:
    """A date, datetime or ISO text as a datetime; the text is read by hand, as
    ``fromisoformat`` varies by Python version.

    Raises:
        ValueError: for text naming no real instant (``2022-02-30``, an offset beyond 18 hours).
    """
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    parts = _ISO_PARTS.match(value)
    if parts is None:
        raise ValueError(f"{value!r} is not an ISO date or timestamp")
    year, month, day, hour, minute, second, fraction, zone = parts.groups()
    tzinfo = None
    if zone:
        offset = dt.timedelta() if zone == "Z" else dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        if offset > _LARGEST_OFFSET:
            raise ValueError(f"the zone offset {zone} is beyond Spark's largest, +-18:00")
        tzinfo = dt.timezone(-offset if zone[0] == "-" else offset)
    return dt.datetime(
        int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0),
        int((fraction or "0").ljust(6, "0")), tzinfo,
    )



def utc_datetime(value: dt.date | str) -> dt.datetime:
    """A date, datetime or ISO text as a tz-aware UTC datetime: a date is its midnight in UTC,
    and a datetime or text without a zone is taken as UTC (as Airflow keeps its dates).

    Raises:
        ValueError: for text naming no real instant, or a value that is none of these.
    """
    if not isinstance(value, (dt.date, str)):
        raise ValueError(f"expected a date, a datetime or ISO text, got {type(value).__name__}")
    moment = as_datetime(value)
    if moment.utcoffset() is None:
        return moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc)

# Other names people write for Spark's types, mapped to Spark's own (``long`` is ``bigint``).
SPARK_TYPE_ALIASES = {
    "long": "bigint",
    "integer": "int",
    "short": "smallint",
    "byte": "tinyint",
    "bool": "boolean",
    "str": "string",
    "real": "float",
    "float64": "double",
    "timestamp_ltz": "timestamp",
    "text": "string",
    "varchar": "string",
    "char": "string",
}

"""Constant dates, timestamps and intervals, read as seconds, for the size guard.

``sequence(TIMESTAMP '0001-01-01', TIMESTAMP '9999-12-31', INTERVAL 1 SECOND)`` asks for 315
billion elements: the guard (:mod:`cola_core.guards.sqlsize`) reads its bounds as seconds since
1970 and its step as a length in seconds, so the count is (stop - start) / step as for numbers.
A month and a year are read at their average length; a bound is only ever needed to the order
of magnitude.
"""

from __future__ import annotations

import datetime as dt
import re
import time

__all__ = ["DEFAULT_STEP", "INTERVAL_UNITS", "TIME_WORDS", "interval_seconds", "now", "seconds_of"]

# Seconds in each unit an interval may be written in (singular, as Spark also takes plurals).
INTERVAL_UNITS = {
    "microsecond": 1e-6,
    "millisecond": 1e-3,
    "second": 1.0,
    "minute": 60.0,
    "hour": 3600.0,
    "day": 86400.0,
    "week": 604800.0,
    "month": 2629746.0,
    "year": 31556952.0,
}
# A sequence of dates or timestamps with no step steps one day.
DEFAULT_STEP = INTERVAL_UNITS["day"]
# Typed literals (TIMESTAMP '2000-01-01') and the casts and calls that make a time of a text.
TIME_WORDS = frozenset("date timestamp timestamp_ntz timestamp_ltz".split())
_EPOCH = dt.datetime(1970, 1, 1)
_DATE_TIME = re.compile(r"\s*([+-]?\d{1,6})-(\d{1,2})(?:-(\d{1,2}))?(?:[ T](\d{1,2})(?::(\d{1,2})(?::(\d{1,2}))?)?)?")
_DAY_TIME = re.compile(r"\s*([+-]?)(\d+)\s+(\d+):(\d+):(\d+(?:\.\d*)?)\s*$")


def seconds_of(text: str) -> float | None:
    """A date or timestamp text (``2000-01-01``, ``9999-12-31 23:59:59``) as seconds since
    1970, or None when it is not one. Years past 9999 are read too (Spark takes six digits)."""
    found = _DATE_TIME.match(text)
    if not found:
        return None
    year, month, day, hour, minute, second = (int(part) if part else 0 for part in found.groups())
    try:
        # datetime stops at year 9999: count the years apart, in days of the average year.
        moment = dt.datetime(1 + year % 400 if year < 1 or year > 9999 else year, month, max(day, 1), hour, minute,
                             second)
    except ValueError:
        return None
    shifted = year - moment.year
    return (moment - _EPOCH).total_seconds() + shifted * INTERVAL_UNITS["year"]


def interval_seconds(words: list[str]) -> float | None:
    """The length of an interval written as amounts and units (``1 day 2 hours``, or one text
    ``'0 00:00:01'`` read ``DAY TO SECOND``), in seconds, or None when it is not that shape."""
    if len(words) >= 3 and [word.lower() for word in words[-3:-1]] in (["day", "to"], ["hour", "to"]):
        found = _DAY_TIME.match(words[0]) if len(words) == 4 else None
        if found and words[-1].lower() == "second" and words[1].lower() == "day":
            sign, days, hours, minutes, seconds = found.groups()
            total = int(days) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)
            return -total if sign == "-" else total
        return None
    if len(words) == 1:
        words = words[0].split()
    if not words or len(words) % 2:
        return None
    total = 0.0
    for amount, unit in zip(words[::2], words[1::2], strict=True):
        seconds = INTERVAL_UNITS.get(unit.lower().removesuffix("s"))
        if seconds is None:
            return None
        try:
            total += float(amount.strip("'\"")) * seconds
        except ValueError:
            return None
    return total


def now() -> float:
    """``current_timestamp()`` and its kin: constants Spark folds, read as the wall clock."""
    return time.time()

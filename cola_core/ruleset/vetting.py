"""Checking each suggested rule against the profile it came from, before it is offered.

A suggestion is derived from the profile's statistics, so it should pass on the data; this is
the net under that promise. Each rule is judged here from the same statistics, as its check
would judge the data (a column's NULLs, its bounds, its values, its format counts, the
newest timestamp's age), and a rule the profile shows would not pass, or that could not find
its column, is dropped with the reason, never offered. Pure Python: no Spark work.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from typing import Any

from cola_core.language.profiles import ColumnProfile, Profile
from cola_core.language.thresholds import threshold_of

__all__ = ["clashing_names", "failure", "local_time"]


def clashing_names(profile: Profile) -> set[str]:
    """The names (lower-cased) that more than one profiled column answers to: Spark resolves
    a name ignoring case by default, so a rule naming ``a`` beside ``a`` or ``A`` fails as
    ambiguous."""
    counts = Counter(c.name.lower() for c in profile.columns)
    return {name for name, count in counts.items() if count > 1}


def local_time(moment: dt.datetime) -> dt.datetime:
    """``moment`` as this process's naive local time, as pyspark gives a profile's timestamps."""
    return moment if moment.tzinfo is None else moment.astimezone().replace(tzinfo=None)


def failure(rule: dict[str, Any], profile: Profile, instant: dt.datetime | None) -> str | None:
    """Why ``rule`` would not pass on the data ``profile`` describes, or None when it would.

    Args:
        instant: the moment a ``freshness`` rule's age is taken at.
    """
    names = [rule["column"]] if "column" in rule else list(rule.get("columns", ()))
    clashing = clashing_names(profile)
    for name in names:
        if name.lower() in clashing:
            same = [c.name for c in profile.columns if c.name.lower() == name.lower()]
            return (f"{len(same)} columns are named {', '.join(map(repr, same))}, so a rule naming {name!r} "
                    "fails as ambiguous: rename them apart (DataFrame.toDF) and suggest again")
    column = profile.column(names[0]) if names else None
    measured = _measured(rule, profile, column, instant)
    if isinstance(measured, str):
        return measured
    if measured is None or "must_be" not in rule:
        return None
    if not threshold_of(rule["must_be"]).accepts(measured):
        return f"the profile measured {measured:g}, which does not meet must_be ({rule['must_be']})"
    return None


def _measured(
    rule: dict[str, Any], profile: Profile, c: ColumnProfile | None, instant: dt.datetime | None
) -> float | str | None:
    """What ``rule``'s check would measure, from the profile (a number its ``must_be`` judges),
    or why it would fail (text), or None for a rule judged here in full."""
    kind = rule["type"]
    if kind == "row_count":
        return float(profile.rows)
    if c is None or kind == "schema":
        return None
    present = c.rows - (c.nulls or 0)
    if kind == "not_null":
        return None if c.nulls == 0 else f"the column has {c.nulls} NULLs"
    if kind == "missing_percent":
        return c.null_percent
    if kind == "unique":
        exact = c.distinct_exact and c.distinct == present and (c.nulls or 0) <= 1
        return None if exact else f"its {present} present values are not counted all distinct"
    if kind == "invalid_count" and "valid_values" in rule:
        listed = set(rule["valid_values"])
        if c.top_values is None or c.top_values_cut or any(value not in listed for value, _ in c.top_values):
            return "a value of the column is not among valid_values"
        return 0.0
    if kind == "invalid_percent" and "valid_format" in rule:
        return 100.0 * (present - c.formats.get(rule["valid_format"], 0)) / c.rows
    if kind == "range":
        return _outside(rule, c)
    if kind == "freshness":
        if instant is None or not isinstance(c.maximum, dt.datetime):
            return "no instant to take the newest value's age at"
        return (local_time(instant) - local_time(c.maximum)).total_seconds()
    return None


def _outside(rule: dict[str, Any], c: ColumnProfile) -> str | None:
    """Why a ``range`` rule's bounds leave out the column's smallest or largest value."""
    if c.minimum is None or c.maximum is None:
        return "the column has no bounds to check"
    if c.kind == "date":
        low, high = dt.date.fromisoformat(rule["min"]), dt.date.fromisoformat(rule["max"])
    else:
        low, high = _comparable(rule["min"], c.minimum), _comparable(rule["max"], c.maximum)
    if not low <= _comparable(c.minimum, low) or not _comparable(c.maximum, high) <= high:
        return f"its values from {c.minimum} to {c.maximum} are not all within {rule['min']} and {rule['max']}"
    return None


def _comparable(value: Any, like: Any) -> Any:
    """``value`` as a number comparable with ``like`` exactly: a decimal column against a
    double bound compares as doubles (as Spark does), else as decimals."""
    if isinstance(value, dt.date):
        return value
    if isinstance(like, float) or isinstance(value, float):
        return float(value)
    return Decimal(value)

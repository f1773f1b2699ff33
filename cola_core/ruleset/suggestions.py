"""Suggesting a rule block from a table's profile (``Cola().suggest``).

Every suggestion is an ordinary rule dict, named for why it was suggested (``"0 NULLs in
200 rows"``), and passes on the data it was profiled from: each bound is the observed value
itself, rounded outwards, or with ``strictness="margin"`` widened by ``MARGIN`` of it. What is
suggested, per column, in this order:

- ``not_null`` for a column with no NULL;
- ``missing_percent`` for a column whose NULLs are rare (at most ``RARE_NULLS_PERCENT``);
- ``unique`` for a column whose present values were counted exactly and are all distinct (at
  most one NULL, as ``unique`` holds NULL equal to NULL);
- ``invalid_count`` with ``valid_values`` for text whose values were all counted (at most
  ``language.profiles.TOP_VALUES_UP_TO``) and none of them shown cut,
  each seen at least twice on average (so that an identifier column is not taken for a list);
- ``range`` for numbers without NaN or infinity, and for dates;
- ``invalid_percent`` with the ``valid_format`` that accepts the most values, for text where
  it accepts at least ``FORMAT_SHARE_PERCENT`` of the present values;

and first, for the table, ``row_count`` bounds and the ``freshness`` of the timestamp column
with the newest value (its age when profiled, in whole days, and one day more). A profile of no rows suggests only a
``schema`` rule, the one thing it knows. Nothing is suggested for a column whose profile was
sampled away or skipped, nor ``unique`` from a sample (a sample cannot prove a key).

**From history** (:func:`learned_rules`): when the history store holds at least
``LEARN_FROM_AT_LEAST`` earlier data intervals of a suggested rule (the same ``rule_id``: the
same type, column and parameters, whatever its thresholds), its threshold comes from those runs
and today's profile together, not from today alone:

- ``row_count`` becomes ``change between`` the smallest and the largest change from one
  interval to the next (in percent; in rows when an interval had none), rounded outwards;
- ``missing_percent`` and ``invalid_percent`` become ``<=`` the largest share seen.

Both still pass on the profiled data, judged against the store's latest interval.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import sys
from decimal import Decimal
from typing import Any

from cola_core.common.formatting import format_value
from cola_core.errors import ColaError
from cola_core.language.profiles import ColumnProfile, Profile

__all__ = [
    "FORMAT_SHARE_PERCENT", "LEARNED_TYPES", "LEARN_FROM_AT_LEAST", "LEARN_FROM_RUNS", "MARGIN", "RARE_NULLS_PERCENT",
    "STRICTNESS", "checked_strictness", "learned_rules", "measured_values", "suggest_rules", "suggestions_text",
    "suggestions_yaml",
]

STRICTNESS = ("exact", "margin")
# How much a "margin" bound is widened: a tenth of the value (of the range, for range bounds).
MARGIN = 0.1
RARE_NULLS_PERCENT = 5.0
FORMAT_SHARE_PERCENT = 99.0
# The suggestions whose thresholds a history can teach, and how many earlier data intervals it
# takes (fewer say too little of how the data moves) and are read (the latest ones).
LEARNED_TYPES = ("row_count", "missing_percent", "invalid_percent")
LEARN_FROM_AT_LEAST = 3
LEARN_FROM_RUNS = 30


def suggest_rules(
    profile: Profile, strictness: str = "exact", now: dt.datetime | None = None
) -> list[dict[str, Any]]:
    """A rule block that passes on the data ``profile`` describes (the module docstring).

    Args:
        now: the instant the ``freshness`` rule's age is taken at (this process's clock by
            default); a profile's timestamps are this process's local time, as pyspark gives them.
    """
    checked_strictness(strictness)
    margin = MARGIN if strictness == "margin" else 0.0
    rows = profile.rows
    if rows == 0:
        return [{
            "type": "schema", "name": "the profiled table's columns and types (it had no rows)",
            "column_types": {c.name: c.type for c in profile.columns},
        }]
    # The metric form (must_be), not min/max: a run records its count in the history only in
    # that form, and learning from history (learned_rules) needs the count.
    if profile.sample is None:
        low, high = math.floor(round(rows * (1 - margin), 6)), math.ceil(round(rows * (1 + margin), 6))
        counted, why = f"between {low} and {high}", f"{rows} rows when profiled"
    else:  # a sample's rows say little of the table's
        counted, why = "> 0", "rows are present (profiled from a sample)"
    rules: list[dict[str, Any]] = [{"type": "row_count", "must_be": counted, "name": why}]
    fresh = _freshness(profile, now or dt.datetime.now(), margin)
    if fresh is not None:
        rules.append(fresh)
    for column in profile.columns:
        if column.skipped is None and column.nulls is not None:
            rules.extend(_for_column(column, rows, margin, sampled=profile.sample is not None))
    return rules


def checked_strictness(strictness: Any) -> str:
    """``strictness`` when it is one of :data:`STRICTNESS`; raises ``ColaError`` otherwise."""
    if strictness not in STRICTNESS:
        raise ColaError(f"strictness must be 'exact' or 'margin', got {strictness!r}")
    return str(strictness)


def _for_column(c: ColumnProfile, rows: int, margin: float, sampled: bool) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    present = rows - (c.nulls or 0)
    if c.nulls == 0:
        rules.append({"type": "not_null", "columns": [c.name], "name": f"0 NULLs in {rows} rows"})
    elif c.null_percent is not None and c.null_percent <= RARE_NULLS_PERCENT and present:
        limit = _limit(c.null_percent, margin)
        rules.append({
            "type": "missing_percent", "column": c.name, "must_be": f"<= {format_value(limit)}",
            "name": f"{c.nulls} NULLs in {rows} rows ({format_value(round(c.null_percent, 4))}%)",
        })
    if c.kind == "collection":
        return rules
    if not sampled and c.distinct_exact and c.distinct == present and present > 1 and (c.nulls or 0) <= 1:
        rules.append({"type": "unique", "columns": [c.name], "name": f"all {present} present values are distinct"})
    counted = () if c.top_values_cut else c.top_values or ()  # a cut value could not be listed as it is
    if c.kind == "text" and counted and c.distinct_exact and present >= 2 * len(counted):
        values = sorted(value for value, _ in counted)
        rules.append({
            "type": "invalid_count", "column": c.name, "valid_values": values, "must_be": "= 0",
            "name": f"{len(values)} distinct values",
        })
    bounds = _bounds(c, margin)
    if bounds is not None:
        low, high = bounds
        rules.append({
            "type": "range", "column": c.name, "min": low, "max": high,
            "name": f"values from {format_value(c.minimum)} to {format_value(c.maximum)} when profiled",
        })
    if c.kind == "text" and c.formats and present:
        name, matched = max(c.formats.items(), key=lambda item: item[1])  # the first of equals, by name order
        share = 100.0 * matched / present
        if share >= FORMAT_SHARE_PERCENT:
            invalid = _invalid_percent(c, name, rows)
            rules.append({
                "type": "invalid_percent", "column": c.name, "valid_format": name,
                "must_be": f"<= {format_value(_limit(invalid, margin))}",
                "name": f"{format_value(round(share, 4))}% of present values are {name}",
            })
    return rules


def _invalid_percent(c: ColumnProfile, valid_format: str, rows: int) -> float:
    """The percent of all rows an ``invalid_percent`` rule with ``valid_format`` measures."""
    present = rows - (c.nulls or 0)
    return 100.0 * (present - c.formats.get(valid_format, 0)) / rows


def _freshness(profile: Profile, now: dt.datetime, margin: float) -> dict[str, Any] | None:
    """``freshness`` of the timestamp column with the newest value: its age in whole days, and
    one day more, which also covers a time zone's offset between this process and Spark's
    session (never more than 14 hours)."""
    stamped = [c for c in profile.columns if c.kind == "timestamp" and isinstance(c.maximum, dt.datetime)]
    if not stamped:
        return None
    def local(moment: dt.datetime) -> dt.datetime:
        return moment if moment.tzinfo is None else moment.astimezone().replace(tzinfo=None)

    newest = max(stamped, key=lambda c: local(c.maximum))
    seen = local(newest.maximum)
    age_days = max(0.0, (local(now) - seen).total_seconds() / 86_400)
    days = math.ceil(age_days * (1 + margin)) + 1
    return {
        "type": "freshness", "column": newest.name, "must_be": f"< {days}d",
        "name": f"the newest {newest.name} was {format_value(round(age_days, 2))} days old when profiled",
    }


def _bounds(c: ColumnProfile, margin: float) -> tuple[Any, Any] | None:
    """The range of a number column without NaN or infinity, or of a date column."""
    if c.minimum is None or c.maximum is None:
        return None
    if c.kind == "date" and isinstance(c.minimum, dt.date):
        spread = dt.timedelta(days=math.ceil((c.maximum - c.minimum).days * margin))
        # A margin stops at the calendar's ends (0001-01-01, 9999-12-31).
        first = c.minimum - spread if c.minimum - dt.date.min >= spread else dt.date.min
        last = c.maximum + spread if dt.date.max - c.maximum >= spread else dt.date.max
        return first.isoformat(), last.isoformat()
    if c.kind != "number" or c.nan or c.infinite:
        return None
    low, high = _number(c.minimum), _number(c.maximum)
    if margin and high > low:
        widen = (high - low) * margin
        if isinstance(low, int) and isinstance(high, int):
            return low - math.ceil(widen), high + math.ceil(widen)
        return _outwards(low - widen, -1), _outwards(high + widen, 1)
    return low, high


def _number(value: Any) -> int | float:
    """A rule number for a measured bound: Spark compares a decimal column with a double bound
    as doubles, and ``float`` of a decimal is the double Spark's cast gives."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value if isinstance(value, int) else float(value)


def _limit(percent: float, margin: float) -> float:
    """A limit the measured ``percent`` meets: rounded up at the fourth decimal, and with a
    margin, widened by it (rounded at the fourth decimal too)."""
    limit = math.ceil(percent * 10_000) / 10_000
    exact = limit if limit >= percent else limit + 0.0001
    return max(exact, round(percent * (1 + margin), 4))


def measured_values(rules: list[dict[str, Any]], profile: Profile) -> list[float | None]:
    """What ``profile`` measured of each rule's metric, for the rules of :data:`LEARNED_TYPES`
    (None for the others, and for a row count profiled from a sample)."""
    values: list[float | None] = []
    for rule in rules:
        value: float | None = None
        if rule["type"] == "row_count" and profile.sample is None:
            value = float(profile.rows)
        elif rule["type"] == "missing_percent":
            value = profile.column(rule["column"]).null_percent
        elif rule["type"] == "invalid_percent":
            value = _invalid_percent(profile.column(rule["column"]), rule["valid_format"], profile.rows)
        values.append(value)
    return values


def learned_rules(
    rules: list[dict[str, Any]], measured: list[float | None], earlier: list[list[float]], strictness: str,
    dataset: str,
) -> list[dict[str, Any]]:
    """``rules``, each rule of :data:`LEARNED_TYPES` with ``LEARN_FROM_AT_LEAST`` or more
    earlier values given its threshold from them (the module docstring says how).

    Args:
        measured: each rule's value in the profile (:func:`measured_values`).
        earlier: each rule's values in the history store, one per earlier data interval,
            the newest first (``cola_core.history.baselines.read_baselines``).
        dataset: the dataset those runs were of, named in each learned rule's ``name``.
    """
    margin = MARGIN if checked_strictness(strictness) == "margin" else 0.0
    learned = []
    for rule, value, before in zip(rules, measured, earlier, strict=True):
        if rule["type"] in LEARNED_TYPES and len(before) >= LEARN_FROM_AT_LEAST:
            series = [*reversed(before), *([] if value is None else [value])]  # oldest first
            runs = f"the last {len(series)} runs of {dataset}"
            if rule["type"] == "row_count":
                rule = _learned_row_count(rule, series, margin, runs)
            else:
                rule = _learned_share(rule, series, margin, runs)
        learned.append(rule)
    return learned


def _learned_row_count(rule: dict[str, Any], series: list[float], margin: float, runs: str) -> dict[str, Any]:
    """``row_count`` as ``change between`` the changes from one interval to the next."""
    relative = all(before != 0 for before in series[:-1])
    changes = [
        100.0 * (after - before) / abs(before) if relative else after - before
        for before, after in itertools.pairwise(series)
    ]
    low, high = min(changes), max(changes)
    widen = (high - low) * margin
    low, high = _outwards(low - widen, -1), _outwards(high + widen, 1)
    unit, named = ("%", "%") if relative else ("", " rows")
    return {
        **rule, "must_be": f"change between {format_value(low)}{unit} and {format_value(high)}{unit}",
        "name": f"rows changed by {format_value(round(min(changes), 2))}{named} to "
                f"{format_value(round(max(changes), 2))}{named} from one run to the next in {runs}",
    }


def _learned_share(rule: dict[str, Any], series: list[float], margin: float, runs: str) -> dict[str, Any]:
    """``missing_percent`` or ``invalid_percent`` at most the largest share seen."""
    what = "NULLs" if rule["type"] == "missing_percent" else f"values not {rule['valid_format']}"
    return {
        **rule, "must_be": f"<= {format_value(_limit(max(series), margin))}",
        "name": f"{what} from {format_value(round(min(series), 4))}% to {format_value(round(max(series), 4))}% "
                f"in {runs}",
    }


def _outwards(value: float, direction: int) -> float:
    """``value`` rounded at the second decimal, away from the values it bounds (down for a
    lower bound, ``direction`` -1; up for an upper one, 1), never past it by a float's error:
    a margin needs no more digits than that. A bound widened past the largest double is the
    largest double, and one of 15 digits or more before the point is kept as it is (a
    hundredth is below its precision)."""
    if not math.isfinite(value):
        return math.copysign(sys.float_info.max, value)
    if abs(value) >= 1e15:
        return value
    rounded = (math.floor(value * 100) if direction < 0 else math.ceil(value * 100)) / 100
    if (rounded - value) * direction < 0:
        rounded += direction * 0.01
    return round(rounded, 2)


def suggestions_text(rules: list[dict[str, Any]], as_json: bool) -> str:
    """``rules`` as a rules file: ``{"rules": [...]}`` in JSON, or :func:`suggestions_yaml`."""
    return json.dumps({"rules": rules}, indent=2, allow_nan=False) + "\n" if as_json else suggestions_yaml(rules)


def suggestions_yaml(rules: list[dict[str, Any]]) -> str:
    """``rules`` as a YAML rules file with a comment per rule saying why it was suggested.

    Every value is written in JSON's notation, which YAML reads as the same value (a quoted
    string stays a string, ``"2024-01-01"`` never becomes a date), so no YAML library is needed.
    """
    lines = [
        "# Rules suggested by `cola suggest` from a profile of the data. Each passes on the data",
        "# it was profiled from; review the bounds before you commit the file.",
        "rules:",
    ]
    for rule in rules:
        lines.append("  # " + " ".join(str(rule.get("name", rule["type"])).split()))
        for number, (key, value) in enumerate(rule.items()):
            lines.append(f"  {'- ' if number == 0 else '  '}{key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"

"""Suggesting a rule block from a table's profile (``Cola().suggest``).

Every suggestion is an ordinary rule dict, named for why it was suggested (``"0 NULLs in
200 rows"``), and passes on the data it was profiled from: each bound is the observed value
itself, rounded outwards (and kept within the column type's values), or with
``strictness="margin"`` widened by ``MARGIN`` of it. Each is then judged against the profile
(``ruleset.vetting``): one the profile shows would not pass is dropped, and
:attr:`Suggestions.skipped` says why. What is suggested, per column, in this order:

- ``not_null`` for a column with no NULL;
- ``missing_percent`` for a column whose NULLs are rare (at most ``RARE_NULLS_PERCENT``);
- ``unique`` for a column whose present values were counted exactly and are all distinct (at
  most one NULL, as ``unique`` holds NULL equal to NULL);
- ``invalid_count`` with ``valid_values`` for text whose values were all counted (at most
  ``language.profiles.TOP_VALUES_UP_TO``) and none of them shown cut,
  each seen at least twice on average (so that an identifier column is not taken for a list);
- ``range`` for numbers without NaN or infinity, and for dates;
- ``invalid_percent`` with a ``valid_format`` that accepts at least ``FORMAT_SHARE_PERCENT``
  of the present values and means something (:func:`_meant_format`);

and first, for the table, ``row_count`` between the rows seen less and more ``VOLUME_MARGIN``
of them (twice that with a margin; never below 1), as a day's volume is never exactly the
last one's, and the ``freshness`` of the timestamp column with the newest value: its age at
the end of the data date (or at ``now``), in whole days, and one day more; never by the clock,
which would make the bound a fact of the day it was suggested. A profile of no rows suggests
only a ``schema`` rule, the one thing it knows. Nothing is suggested for a column whose profile was
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
import math
import re
import sys
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from cola_core.common.formatting import format_value, plural
from cola_core.errors import ColaError, ColaRuleError
from cola_core.language.profiles import ColumnProfile, Profile
from cola_core.ruleset.suggestions_file import suggestions_text, suggestions_yaml
from cola_core.ruleset.vetting import failure, local_time

__all__ = [
    "FORMAT_SHARE_PERCENT", "LEARNED_TYPES", "LEARN_FROM_AT_LEAST", "LEARN_FROM_RUNS", "MARGIN", "RARE_NULLS_PERCENT",
    "STRICTNESS", "VOLUME_MARGIN", "Suggestions", "checked_strictness", "data_date_end", "learned_rules",
    "measured_values", "parsed", "suggest_rules", "suggestions_text", "suggestions_yaml",
]

STRICTNESS = ("exact", "margin")
# How much a "margin" bound is widened: a tenth of the value (of the range, for range bounds).
MARGIN = 0.1
RARE_NULLS_PERCENT = 5.0
FORMAT_SHARE_PERCENT = 99.0
# A suggested row count's bounds: the rows seen, less and more this share of them (twice it
# with a margin). A day's volume is never exactly the last one's.
VOLUME_MARGIN = 0.1
# Formats that say what a value means; the others say only its shape. Two meanings accepting
# the same values (an order id '20261204-000123' is phone- and card-shaped) mean neither,
# and the narrowest shape that accepts them is suggested instead, in this order.
_SHAPES = ("integer", "decimal", "number", "alphanumeric")
# A meaning that another one always contains: both accept an IPv4 address, which is ipv4.
_NARROWER = {"ip": "ipv4"}


class Suggestions(list[dict[str, Any]]):
    """The suggested rules, a list of rule dicts; ``skipped`` says, one line each, what was
    not suggested although the profile pointed at it, and why."""

    def __init__(self, rules: Iterable[dict[str, Any]] = (), skipped: Iterable[str] = ()) -> None:
        super().__init__(rules)
        self.skipped: tuple[str, ...] = tuple(skipped)
# The suggestions whose thresholds a history can teach, and how many earlier data intervals it
# takes (fewer say too little of how the data moves) and are read (the latest ones).
LEARNED_TYPES = ("row_count", "missing_percent", "invalid_percent")
LEARN_FROM_AT_LEAST = 3
LEARN_FROM_RUNS = 30


def suggest_rules(
    profile: Profile, strictness: str = "exact", now: dt.datetime | None = None, data_date: dt.date | None = None
) -> Suggestions:
    """A rule block that passes on the data ``profile`` describes (the module docstring).

    Args:
        now: the instant the ``freshness`` rule's age is taken at; a profile's timestamps
            are this process's local time, as pyspark gives them.
        data_date: without ``now``, the date of the data: the age is taken at its end
            (:func:`data_date_end`). With neither, no ``freshness`` is suggested.
    """
    checked_strictness(strictness)
    margin = MARGIN if strictness == "margin" else 0.0
    rows = profile.rows
    if rows == 0:
        return Suggestions([{
            "type": "schema", "name": "the profiled table's columns and types (it had no rows)",
            "column_types": {c.name: c.type for c in profile.columns},
        }])
    # The metric form (must_be), not min/max: a run records its count in the history only in
    # that form, and learning from history (learned_rules) needs the count.
    if profile.sample is None:
        volume = VOLUME_MARGIN * (2 if margin else 1)
        low, high = math.floor(round(rows * (1 - volume), 6)), math.ceil(round(rows * (1 + volume), 6))
        counted, why = f"between {max(1, low)} and {high}", f"{plural(rows, 'row')} when profiled"
    else:  # a sample's rows say little of the table's
        counted, why = "> 0", "rows are present (profiled from a sample)"
    rules: list[dict[str, Any]] = [{"type": "row_count", "must_be": counted, "name": why}]
    skipped: list[str] = []
    instant = now if now is not None else None if data_date is None else data_date_end(data_date)
    at = "at the end of the data date" if now is None else f"at {now.isoformat(sep=' ')}"
    fresh = _freshness(profile, instant, at, margin)
    if isinstance(fresh, str):
        skipped.append(fresh)
    elif fresh is not None:
        rules.append(fresh)
    for column in profile.columns:
        if column.skipped is None and column.nulls is not None:
            rules.extend(_for_column(column, rows, margin, sampled=profile.sample is not None))
    offered = []
    for rule in rules:
        why_not = failure(rule, profile, instant)
        if why_not is None:
            offered.append(rule)
        else:
            skipped.append(f"{_what(rule)}: {why_not}")
    return Suggestions(offered, skipped)


def data_date_end(data_date: dt.date) -> dt.datetime:
    """The end of the day ``data_date`` falls on (a day's data interval), in UTC: the instant a
    ``freshness`` suggestion's age is taken at, so that the same data suggests the same bound
    on any day, in a rerun and in a backfill alike."""
    day = data_date.date() if isinstance(data_date, dt.datetime) else data_date
    return dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=dt.timezone.utc)


def parsed(rules: Suggestions, parse: Callable[[list[dict[str, Any]]], object]) -> Suggestions:
    """``rules`` without a suggestion ``parse`` (the engine's parser) refuses, each named in
    ``skipped`` with the parser's reason: a suggestion is never a block ``cola check`` refuses."""
    try:
        parse(rules)
        return rules
    except ColaRuleError:
        pass
    kept, skipped = [], list(rules.skipped)
    for rule in rules:
        try:
            parse([rule])
            kept.append(rule)
        except ColaRuleError as error:
            skipped.append(f"{_what(rule)}: {error.reason}")
    return Suggestions(kept, skipped)


def _what(rule: dict[str, Any]) -> str:
    """A suggestion in a few words, for the list of those not offered: ``unique(a)``."""
    names = [rule["column"]] if "column" in rule else list(rule.get("columns", ()))
    return f"{rule['type']}({', '.join(names)})" if names else str(rule["type"])


def checked_strictness(strictness: Any) -> str:
    """``strictness`` when it is one of :data:`STRICTNESS`; raises ``ColaError`` otherwise."""
    if strictness not in STRICTNESS:
        raise ColaError(f"strictness must be 'exact' or 'margin', got {strictness!r}")
    return str(strictness)


def _for_column(c: ColumnProfile, rows: int, margin: float, sampled: bool) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    present = rows - (c.nulls or 0)
    if c.nulls == 0:
        rules.append({"type": "not_null", "columns": [c.name], "name": f"0 NULLs in {plural(rows, 'row')}"})
    elif c.null_percent is not None and c.null_percent <= RARE_NULLS_PERCENT and present:
        limit = _limit(c.null_percent, margin)
        rules.append({
            "type": "missing_percent", "column": c.name, "must_be": f"<= {format_value(limit)}",
            "name": f"{plural(c.nulls or 0, 'NULL')} in {plural(rows, 'row')} "
                    f"({format_value(round(c.null_percent, 4))}%)",
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
            "name": plural(len(values), "distinct value"),
        })
    bounds = _bounds(c, margin)
    if bounds is not None and c.kind == "number":
        bounds = _within_type(c.type, *bounds)
    if bounds is not None:
        low, high = bounds
        rules.append({
            "type": "range", "column": c.name, "min": low, "max": high,
            "name": f"values from {format_value(c.minimum)} to {format_value(c.maximum)} when profiled",
        })
    name = _meant_format(c, present) if c.kind == "text" and present else None
    if name is not None:
        share = 100.0 * c.formats[name] / present
        if share >= FORMAT_SHARE_PERCENT:
            invalid = _invalid_percent(c, name, rows)
            rules.append({
                "type": "invalid_percent", "column": c.name, "valid_format": name,
                "must_be": f"<= {format_value(_limit(invalid, margin))}",
                "name": f"{format_value(round(share, 4))}% of present values are {name}",
            })
    return rules


def _meant_format(c: ColumnProfile, present: int) -> str | None:
    """The format to suggest for a text column: of those accepting at least
    ``FORMAT_SHARE_PERCENT`` of the present values, the one meaning (email, uuid, phone...)
    that accepts the most; when two meanings accept as many, the values mean neither, and
    the narrowest shape (:data:`_SHAPES`) that accepts them is suggested, or none."""
    best = max(c.formats.values(), default=0)
    if best == 0 or 100.0 * best / present < FORMAT_SHARE_PERCENT:
        return None
    meanings = [name for name, count in c.formats.items() if count == best and name not in _SHAPES]
    meanings = [name for name in meanings if _NARROWER.get(name) not in meanings]
    if len(meanings) == 1:
        return meanings[0]
    shapes = [name for name in _SHAPES if c.formats.get(name) == best]
    return shapes[0] if shapes else None


def _within_type(type_name: str, low: Any, high: Any) -> tuple[Any, Any]:
    """``range`` bounds kept within what a column of ``type_name`` holds: a margin past a
    ``decimal(38,0)``'s 38 digits is a number no Spark type holds, and the rule is refused."""
    integral = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}
    if type_name in integral:
        low, high = max(low, -integral[type_name]), min(high, integral[type_name] - 1)
    elif (shape := re.fullmatch(r"decimal\((\d+),(\d+)\)", type_name)) is not None:
        # Whole bounds only (a fractional bound is a double, compared as doubles): the
        # largest whole value has precision - scale digits. In ints, as Decimal's default
        # context would round 38 nines up to 1E+38.
        largest = 10 ** (int(shape[1]) - int(shape[2])) - 1
        if isinstance(low, int) and isinstance(high, int):
            low, high = max(low, -largest), min(high, largest)
    return low, high


def _invalid_percent(c: ColumnProfile, valid_format: str, rows: int) -> float:
    """The percent of all rows an ``invalid_percent`` rule with ``valid_format`` measures."""
    present = rows - (c.nulls or 0)
    return 100.0 * (present - c.formats.get(valid_format, 0)) / rows


def _freshness(profile: Profile, now: dt.datetime | None, at: str, margin: float) -> dict[str, Any] | str | None:
    """``freshness`` of the timestamp column with the newest value: its age at ``now`` in whole
    days, and one day more, which also covers a time zone's offset between this process and
    Spark's session (never more than 14 hours). Without ``now``, why none is suggested."""
    stamped = [c for c in profile.columns if c.kind == "timestamp" and isinstance(c.maximum, dt.datetime)]
    if not stamped:
        return None
    newest = max(stamped, key=lambda c: local_time(c.maximum))
    if now is None:
        return (f"freshness({newest.name}): no data date to take the newest value's age at (give data_date, "
                "--data-date, or now); an age by the clock would break the next day and any backfill")
    age_days = max(0.0, (local_time(now) - local_time(newest.maximum)).total_seconds() / 86_400)
    days = math.ceil(age_days * (1 + margin)) + 1
    return {
        "type": "freshness", "column": newest.name, "must_be": f"< {days}d",
        "name": f"the newest {newest.name} was {format_value(round(age_days, 2))} days old {at}",
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

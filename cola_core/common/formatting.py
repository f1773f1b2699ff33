"""How numbers and rule parameters are written in messages and codes, and how text is shown on one line.

Codes land in users' data, so the same rule must always render to the same string:
integral values have no decimals (``8``, not ``8.0``) and other values keep at most four
decimals with trailing zeros trimmed (``33.3333``).

:func:`one_line` is how every plain-text output (an alert, a task log line, the printed tables,
``str(CheckResult)``) shows a rule author's text: a name, code or message with a line break
in it must not forge a line of its own.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from decimal import Decimal
from typing import Any

__all__ = [
    "cut_text", "cut_texts", "format_number", "format_value", "iso_duration", "json_safe", "json_type", "one_line",
    "plural", "render_code",
]


def format_number(value: Any) -> str:
    """Render a number for a message or a code."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Decimal):
        # A whole decimal keeps its exact digits (a sum of bigints); others read as floats.
        value = int(value) if value.is_finite() and value == value.to_integral_value() else float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        if abs(value) >= 1e16:
            # Beyond 16 digits a double's digits are noise: 1e308 reads '1e+308', not 309 digits.
            return repr(value)
        text = f"{value:.4f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return str(value)


def format_value(value: Any) -> str:
    """Render a rule parameter (number, date, string) the way codes and messages show it."""
    if value is None:
        return ""
    if isinstance(value, (int, float, Decimal)):
        return format_number(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def render_code(rule_type: str, *parts: Any) -> str:
    """``render_code('range', 'age', 1, 99) == 'range(age,1,99)'``; no parts gives the bare type."""
    if not parts:
        return rule_type
    return f"{rule_type}({','.join(format_value(part) for part in parts)})"


def json_type(value: Any) -> str:
    """What a JSON value is, as a message says it: ``an object``, ``a list``, ``a string``, ``null``..."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def plural(count: int, word: str) -> str:
    """``plural(1, 'value') == '1 value'``, ``plural(3, 'value') == '3 values'``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# What one_line escapes. Unicode's controls (Cc, a fixed set: U+0000-U+001F, U+007F-U+009F,
# which holds \n, \r, \t, ESC and NEL \x85), the line and paragraph separators (Zl, Zp: U+2028,
# U+2029): every character at which str.splitlines(), a mail client or a terminal breaks or
# rewrites a line. Lone surrogates (Cs), which have no UTF-8 form, so that a log or a mail
# cannot fail on them. The bidirectional embeddings, overrides and isolates (U+202A-U+202E,
# U+2066-U+2069), which reorder how the rest of a line reads ("Trojan Source").
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def one_line(text: Any) -> str:
    r"""``text`` (made a string) as one line of plain text: each character that would break
    the line or change how it reads is written as its visible Python escape.

    A newline becomes the two characters ``\n``; NEL ``\x85``, ``\u2028``, ESC ``\x1b`` and
    the others likewise. Anything else, backslashes included, is kept as it is, so that an
    ordinary name, code or message (``regex(code,^\d+$)``) reads exactly as written. HTML
    needs escaping of its own (``html.escape``): this is for plain text.
    """
    shown = str(text)
    if shown.isprintable():  # the common case: no control, separator or surrogate at all
        return shown
    return _NOT_ONE_LINE.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), shown)


def cut_text(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters; otherwise its first ``limit``
    characters, then ``… [cut: N characters]`` saying how many followed."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text) - limit:,} characters]"


def cut_texts(value: Any, limit: int) -> Any:
    """``value`` (JSON-like data) with every text in it, at any depth, cut by :func:`cut_text`;
    keys are kept as they are (a row's column names)."""
    if isinstance(value, str):
        return cut_text(value, limit)
    if isinstance(value, dict):
        return {key: cut_texts(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [cut_texts(item, limit) for item in value]
    return value


def json_safe(value: Any) -> Any:
    """A collected Spark value as strict JSON carries it (``json.dumps(..., allow_nan=False)``).

    Every form is readable and says what the value was:

    - dates, timestamps (with or without a time zone) and times: ISO-8601 text;
    - day-time intervals (``timedelta``): ISO-8601 durations, ``P1DT2H3M4.5S``, with a
      leading ``-`` when negative (year-month intervals are rendered in Spark, by
      ``cola_core.plan.samples``, as ``P1Y2M``);
    - decimals: a JSON number when it is exact (integral, or a float that reads back the
      same), else the decimal's exact text;
    - NaN and infinite floats: the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
    - binary: lower-case hex text;
    - maps: objects; a key that is not a string becomes text (``1`` -> ``"1"``, a date ->
      its ISO text, a struct -> its JSON text);
    - variants: the JSON value they hold; anything else unknown: its ``str()``.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _NON_FINITE[math.copysign(1, value) if math.isinf(value) else 0]
    if isinstance(value, dict):
        return {_json_key(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, tuple) and hasattr(value, "asDict"):  # a Row (a struct)
        return json_safe(value.asDict(recursive=True))
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return iso_duration(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if hasattr(value, "toJson"):  # pyspark.sql.types.VariantVal
        return _variant(value)
    return str(value)


# Keyed by math.copysign(1, value) for the infinities (a float: 1.0 finds the key 1), 0 for NaN.
_NON_FINITE: dict[float, str] = {0: "NaN", 1: "Infinity", -1: "-Infinity"}


def iso_duration(delta: dt.timedelta) -> str:
    """``timedelta(days=1, seconds=7384.5)`` -> ``"P1DT2H3M4.5S"``; negative ones start with ``-``."""
    sign = "-" if delta < dt.timedelta(0) else ""
    micros = abs(delta) // dt.timedelta(microseconds=1)
    days, micros = divmod(micros, 86_400_000_000)
    hours, micros = divmod(micros, 3_600_000_000)
    minutes, micros = divmod(micros, 60_000_000)
    whole, fraction = divmod(micros, 1_000_000)
    seconds = f"{whole}.{fraction:06d}".rstrip("0") if fraction else str(whole)
    return f"{sign}P{days}DT{hours}H{minutes}M{seconds}S"


def _decimal(value: Decimal) -> Any:
    if not value.is_finite():
        return str(value)
    if value == value.to_integral_value():
        return int(value)
    number = float(value)
    # Exact text when a float would change the digits (decimal(38,18) holds more than a double).
    return number if Decimal(repr(number)) == value else str(value)


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    safe = json_safe(key)
    return safe if isinstance(safe, str) else json.dumps(safe, allow_nan=False)


def _variant(value: Any) -> Any:
    text = value.toJson()
    try:
        return json_safe(json.loads(text))
    except ValueError:
        return text

"""How numbers and rule parameters are written in messages and codes.

Codes land in users' data, so the same rule must always render to the same string:
integral values have no decimals (``8``, not ``8.0``) and other values keep at most four
decimals with trailing zeros trimmed (``33.3333``).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

__all__ = ["format_number", "format_value", "json_safe", "plural", "render_code"]


def format_number(value: Any) -> str:
    """Render a number for a message or a code."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
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


def plural(count: int, word: str) -> str:
    """``plural(1, 'value') == '1 value'``, ``plural(3, 'value') == '3 values'``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def json_safe(value: Any) -> Any:
    """A value as JSON can carry it: dates as ISO text, decimals as numbers, NaN as None."""
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value

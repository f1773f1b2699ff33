"""Parameter declarations for checks, built-in or custom, checked in pure Python before any Spark work.

A check class lists its parameters in ``params_spec``; the rule parser uses it to refuse
unknown keys (listing the valid ones), missing required keys and values of the wrong type::

    from cola_core.language.params import STRING, THRESHOLD, Param

    class PositiveShareCheck(BaseCheck):
        params_spec = {"column": Param(STRING, required=True), "must_be": Param(THRESHOLD)}
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cola_core.common.values import is_finite_number
from cola_core.language.text import is_text

__all__ = [
    "BOOL",
    "LONG_RANGE",
    "MAPPING",
    "MAX_LIST_VALUES",
    "NUMBER",
    "ORDERED",
    "SCALAR_LIST",
    "STRING",
    "STRING_LIST",
    "STRING_MAP",
    "THRESHOLD",
    "WHOLE",
    "Kind",
    "Param",
]


# Spark takes a Python int as a LongType literal, so a whole number outside this range fails
# inside a job (a Py4J error) unless the parameter handles decimals itself.
LONG_RANGE = (-(2**63), 2**63 - 1)
# The most values one list parameter (valid_values, invalid_values, missing_values, values)
# holds. Each value is a literal of the rule's plan, built through Py4J and analysed with the
# plan: 50,000 take a minute to plan on a local driver and 999,000 exhaust its memory, while
# a list of codes a rule names by hand has tens or hundreds. A larger set of valid values is
# a table, which a foreign_key rule joins against.
MAX_LIST_VALUES = 10_000


@dataclass(frozen=True)
class Kind:
    """A kind of value: a predicate plus the words used when a value is not of this kind.

    Attributes:
        whole_range: when set, the whole numbers this kind takes (the value, or each item of
            a list) must lie in it; the structure pre-pass names the limit in its message.
    """

    describe: str
    accepts: Callable[[Any], bool]
    whole_range: tuple[int, int] | None = None


def _is_number(value: Any) -> bool:
    # Rule values come from JSON or YAML: ints and floats, never Decimals.
    return isinstance(value, (int, float)) and is_finite_number(value)


def _is_long(value: Any) -> bool:
    """A finite number that Spark can take as a literal: ints within the 64-bit range."""
    return _is_number(value) and (isinstance(value, float) or LONG_RANGE[0] <= value <= LONG_RANGE[1])


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_nonempty_string(value: Any) -> bool:
    # Visible text, as the rules schema has it too (``text.TEXT_PATTERN``); strip() would keep
    # a lone U+FEFF or U+200B, which the schema's ECMAScript engine calls blank.
    return is_text(value)


def _is_string_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(_is_nonempty_string(v) for v in value)


def _is_scalar(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _is_long(value)
    return value is None or isinstance(value, (str, bool, dt.date))


STRING = Kind("a non-empty string", _is_nonempty_string)
STRING_LIST = Kind("a non-empty list of column names", _is_string_list)
NUMBER = Kind("a number", _is_long, LONG_RANGE)
WHOLE = Kind(
    "a whole number >= 0",
    lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= LONG_RANGE[1],
    LONG_RANGE,
)
# Range bounds may be numbers, or dates/timestamps written as ISO strings.
ORDERED = Kind(
    "a number, or a date/timestamp such as '2024-01-31'",
    lambda v: _is_number(v) or isinstance(v, (dt.date, dt.datetime)) or _is_nonempty_string(v),
)
THRESHOLD = Kind("a threshold string such as '< 5%' (or a plain number)", lambda v: _is_number(v) or _is_string(v))
BOOL = Kind("true or false", lambda v: isinstance(v, bool))
MAPPING = Kind("an object", lambda v: isinstance(v, dict))
STRING_MAP = Kind(
    "an object of column name to type name",
    lambda v: (
        isinstance(v, dict)
        and len(v) > 0
        and all(_is_nonempty_string(k) and _is_nonempty_string(t) for k, t in v.items())
    ),
)
SCALAR_LIST = Kind(
    "a non-empty list of values",
    lambda v: isinstance(v, (list, tuple)) and len(v) > 0 and all(_is_scalar(x) for x in v),
    LONG_RANGE,
)


@dataclass(frozen=True)
class Param:
    """One declared parameter of a check.

    Attributes:
        description: one line, for the rule reference: what the parameter means, in the
            user's words.
        choices: the only values the parameter takes, when it has a fixed set; the rules
            JSON Schema lists them (``enum``). The check's ``validate`` refuses others, with
            its own message, from the same constant.
    """

    kind: Kind
    required: bool = False
    default: Any = None
    description: str = ""
    choices: tuple[Any, ...] | None = None


# The one ``baseline`` parameter of every built-in check whose thresholds may compare with earlier
# runs. Kept out of ``__all__``: it is the built-ins' shared declaration, not a kind for custom checks.
BASELINE_PARAM = Param(
    MAPPING, description="Earlier runs a change or anomaly threshold compares with: {runs, aggregate: avg or median}"
)

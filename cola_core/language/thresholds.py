"""The threshold language used by ``must_be``, ``warn`` and ``tolerance``.

Three layers, in the manner of ``packaging.specifiers``: a tokenizer driven by a table of
regexes, a recursive-descent parser whose functions carry their grammar rule, and frozen
value objects that compare on one normalised key. Examples of the language::

    > 0        <= 10       = 0        != 0        0   (a bare number means "= 0")
    between 10 and 20      not between 1 and 2    (both ends inclusive)
    < 5%       (the percent sign is cosmetic: the number is 5)
    < 1d       <= 2h       > 30m      (durations, converted to seconds: s m h d w)

and, for a metric compared with its history (``must_be`` and ``warn`` only)::

    change between -10% and 10%    the relative change from the baseline, in percent, signed
    change < 500                   the absolute change (value - baseline), signed
    anomaly < 3                    the robust z-score against the recent runs
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import NamedTuple

from cola_core.common.formatting import format_number
from cola_core.errors import ThresholdError

__all__ = ["DURATION_SECONDS", "MAX_THRESHOLD_DIGITS", "Quantity", "Threshold", "parse_threshold", "threshold_of"]

DURATION_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

_COMPARISONS = (">=", "<=", "!=", "==", "=", ">", "<")

# Order matters: longer operators before their prefixes, keywords before bare words.
_TOKEN_TABLE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("WS", re.compile(r"\s+")),
    ("OP", re.compile(r">=|<=|!=|==|=|>|<")),
    ("NOT", re.compile(r"not\b", re.IGNORECASE)),
    ("BETWEEN", re.compile(r"between\b", re.IGNORECASE)),
    ("AND", re.compile(r"and\b", re.IGNORECASE)),
    ("CHANGE", re.compile(r"change\b", re.IGNORECASE)),
    ("ANOMALY", re.compile(r"anomaly\b", re.IGNORECASE)),
    # ASCII digits only: Decimal would also read other scripts' digits, which no one means here.
    ("NUMBER", re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:%|[smhdw]\b)?", re.IGNORECASE)),
)
# Forms people try that the language leaves out on purpose, each with the reason.
_REFUSED_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[-+]?(?:inf(?:inity)?|nan)\b", re.IGNORECASE), "a threshold number must be finite, got {!r}"),
    (
        re.compile(r"[eE][-+]?[0-9]"),
        "exponents such as '1e3' are not part of the language; write the number in digits (1000)",
    ),
)
# Spark's widest exact number (DecimalType) has 38 digits; a longer one cannot be measured
# against, and Python refuses to print an int of more than 4,300 digits.
MAX_THRESHOLD_DIGITS = 38
_EXACT = Context(prec=2 * MAX_THRESHOLD_DIGITS)


class _Token(NamedTuple):
    kind: str
    text: str
    offset: int


def _tokenize(text: str) -> Iterator[_Token]:
    offset = 0
    while offset < len(text):
        for kind, pattern in _TOKEN_TABLE:
            match = pattern.match(text, offset)
            if match:
                if kind != "WS":
                    yield _Token(kind, match.group(), offset)
                offset = match.end()
                break
        else:
            for pattern, problem in _REFUSED_FORMS:
                refused = pattern.match(text, offset)
                if refused:
                    raise ThresholdError(text, offset, problem.format(refused.group()))
            raise ThresholdError(text, offset, f"unexpected {text[offset]!r}")
    yield _Token("END", "", len(text))


@dataclass(frozen=True, eq=False)
class Quantity:
    """A number as written, with its optional suffix (``%`` or a duration unit)."""

    amount: Decimal
    suffix: str = ""

    @property
    def value(self) -> float:
        """The number in base units: seconds for a duration, the plain number otherwise."""
        return float(self.amount * DURATION_SECONDS.get(self.suffix, 1))

    @property
    def is_duration(self) -> bool:
        return self.suffix in DURATION_SECONDS

    def __str__(self) -> str:
        # The default context (28 digits) would round a 38-digit bound while printing it.
        return f"{format(self.amount.normalize(_EXACT), 'f')}{self.suffix}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


@dataclass(frozen=True, eq=False)
class Threshold:
    """A parsed threshold. Equal thresholds accept exactly the same values.

    Attributes:
        operator: one of ``> >= < <= = != between``, or ``not between``.
        bounds: one quantity for a comparison, two for a range.
        kind: ``value`` (the measured value is judged), ``change`` (its change from the
            baseline: relative, in percent, when the bounds carry ``%``) or ``anomaly`` (its
            robust z-score against the recent runs).
    """

    operator: str
    bounds: tuple[Quantity, ...]
    kind: str = "value"

    @property
    def compares_with_history(self) -> bool:
        """Whether judging needs earlier runs (a change or an anomaly threshold)."""
        return self.kind != "value"

    @property
    def is_relative(self) -> bool:
        """A change in percent of the baseline (``change between -10% and 10%``)."""
        return self.kind == "change" and any(bound.suffix == "%" for bound in self.bounds)

    def accepts(self, value: float) -> bool:
        """Whether a measured value meets the threshold: the value itself, or for a change
        or anomaly threshold, the change or the score the caller computed from it."""
        if self.operator in ("between", "not between"):
            low, high = (bound.value for bound in self.bounds)
            inside = low <= value <= high
            return inside if self.operator == "between" else not inside
        limit = self.bounds[0].value
        return {
            ">": value > limit,
            ">=": value >= limit,
            "<": value < limit,
            "<=": value <= limit,
            "=": value == limit,
            "!=": value != limit,
        }[self.operator]

    @property
    def is_duration(self) -> bool:
        return any(bound.is_duration for bound in self.bounds)

    def _key(self) -> tuple[object, ...]:
        return (self.kind, self.is_relative, self.operator, tuple(bound.value for bound in self.bounds))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Threshold) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        prefix = "" if self.kind == "value" else f"{self.kind} "
        if len(self.bounds) == 2:
            return f"{prefix}{self.operator} {self.bounds[0]} and {self.bounds[1]}"
        return f"{prefix}{self.operator} {self.bounds[0]}"

    def __repr__(self) -> str:
        return f"<Threshold({str(self)!r})>"


def parse_threshold(text: str) -> Threshold:
    """Parse a threshold, raising :class:`ThresholdError` with a caret under the bad part.

    threshold := comparison | range | quantity
    """
    if not isinstance(text, str):
        raise _not_a_string(text)
    parser = _Parser(text)
    threshold = parser.threshold()
    parser.expect_end()
    return threshold


def threshold_of(value: str | int | float) -> Threshold:
    """A threshold from a rule value; a plain number (``0``) means equality (``= 0``)."""
    if isinstance(value, bool):  # an int to Python, but neither a number nor a threshold here
        raise _not_a_string(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        # Every digit, never a message's short form (1e+20): the parser reads digits only.
        text = str(int(value))
    elif isinstance(value, (int, float)):
        text = format_number(value)
    else:
        text = value
    return parse_threshold(text)


def _not_a_string(value: object) -> TypeError:
    return TypeError(f"a threshold is a string, got {type(value).__name__}")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = list(_tokenize(text))
        self.index = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def _take(self) -> _Token:
        token = self.current
        self.index += 1
        return token

    def _fail(self, problem: str, token: _Token | None = None) -> ThresholdError:
        token = token or self.current
        return ThresholdError(self.text, token.offset, problem)

    def threshold(self) -> Threshold:
        """threshold := CHANGE plain | ANOMALY ('<' | '<=') quantity | plain"""
        token = self.current
        if token.kind == "CHANGE":
            self._take()
            if self.current.kind == "END":
                raise self._fail("expected a comparison after 'change', such as 'change < 10%'")
            plain = self.plain()
            percents = {bound.suffix == "%" for bound in plain.bounds}
            if len(percents) > 1:
                raise self._fail("write both bounds of a change in % (relative) or neither (absolute)", token)
            if any(bound.is_duration for bound in plain.bounds) and True in percents:
                raise self._fail("a relative change is in %, not a duration", token)
            return Threshold(plain.operator, plain.bounds, "change")
        if token.kind == "ANOMALY":
            self._take()
            operator = self.current
            if operator.kind != "OP" or operator.text not in ("<", "<="):
                raise self._fail("an anomaly threshold bounds the score from above, such as 'anomaly < 3'")
            self._take()
            bound = self.quantity()
            if bound.suffix:
                raise self._fail(f"an anomaly score is a plain number, not {bound}", operator)
            return Threshold(operator.text, (bound,), "anomaly")
        return self.plain()

    def plain(self) -> Threshold:
        """plain := OP quantity | [NOT] BETWEEN quantity AND quantity | quantity"""
        token = self.current
        if token.kind == "OP":
            self._take()
            operator = "=" if token.text == "==" else token.text
            return Threshold(operator, (self.quantity(),))
        if token.kind in ("NOT", "BETWEEN"):
            return self.range()
        if token.kind == "NUMBER":
            return Threshold("=", (self.quantity(),))
        if token.kind == "END":
            raise self._fail("the threshold is empty")
        raise self._fail(f"expected a comparison such as '<' or 'between', got {token.text!r}")

    def range(self) -> Threshold:
        """range := [NOT] BETWEEN quantity AND quantity"""
        operator = "between"
        if self.current.kind == "NOT":
            self._take()
            operator = "not between"
            if self.current.kind != "BETWEEN":
                raise self._fail("expected 'between' after 'not'")
        self._take()
        low_token = self.current
        low = self.quantity()
        if self.current.kind != "AND":
            raise self._fail("expected 'and' between the two bounds")
        self._take()
        high = self.quantity()
        if low.value > high.value:
            raise self._fail(f"the lower bound {low} is above the upper bound {high}", low_token)
        return Threshold(operator, (low, high))

    def quantity(self) -> Quantity:
        """quantity := NUMBER ['%' | 's' | 'm' | 'h' | 'd' | 'w']"""
        token = self.current
        if token.kind != "NUMBER":
            got = "the end" if token.kind == "END" else repr(token.text)
            raise self._fail(f"expected a number, got {got}")
        digits = sum(character.isdigit() for character in token.text)
        if digits > MAX_THRESHOLD_DIGITS:
            raise self._fail(f"the number has {digits} digits; a threshold number has at most {MAX_THRESHOLD_DIGITS}")
        self._take()
        text = token.text
        suffix = ""
        if text[-1] == "%" or text[-1].lower() in DURATION_SECONDS:
            text, suffix = text[:-1], text[-1].lower()
        return Quantity(Decimal(text), suffix)

    def expect_end(self) -> None:
        if self.current.kind != "END":
            raise self._fail(f"unexpected {self.current.text!r} after the threshold")

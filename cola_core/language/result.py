"""``CheckResult``: what one rule measured and what it concluded."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from cola_core.common.formatting import cut_text, json_type, one_line
from cola_core.errors import ColaError

__all__ = [
    "DETAILS_CHARS", "MESSAGE_CHARS", "RESULT_KEYS", "RULE_SEVERITIES", "SEVERITIES", "CheckResult", "ResultKey",
    "RuleSeverity", "Severity", "worst_severity",
]

# What a result concludes, best first: the order in which the worst of a run is chosen.
Severity = Literal["pass", "warn", "fail"]
SEVERITIES: tuple[Severity, ...] = ("pass", "warn", "fail")
# What a rule may declare as its ``severity``: how much its failure counts.
RuleSeverity = Literal["fail", "warn"]
RULE_SEVERITIES: tuple[RuleSeverity, ...] = ("fail", "warn")
# When CheckResult.to_dict() writes a field (its metadata says; always, by default): the one
# statement of the results' JSON form, which RESULT_KEYS and the Airflow provider read.
_WRITTEN = "written"
_WHEN_SET = {_WRITTEN: "when set"}  # left out when None
_WHEN_TRUE = {_WRITTEN: "when true"}  # left out when False
_NEVER = {_WRITTEN: "never"}
_FILLED = {_WRITTEN: "always", "filled": True}  # Optional as an argument only: __post_init__ sets it
# The characters of a result's message: a longer one (a sql rule echoing a value of the data, a
# custom check's text) is cut, ending with "… [cut: N characters]", so that no rule can make a
# result, the results file or an XCom as large as the data it read.
MESSAGE_CHARS = 2_000
# The characters of a result's details as JSON: larger details (a not_null rule over thousands of
# columns) are left out, as the message that lists the same counts is cut, so that no rule can
# make a result, the results file or an XCom grow without bound.
DETAILS_CHARS = 10_000


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one rule.

    The positional order matches the custom-check examples: ``CheckResult("no_future_date",
    False, "3 future dates", 3)``.

    Attributes:
        rule_type: the rule's type (a metric rule names its metric, never ``check``).
        passed: ``True`` for pass and warn, ``False`` for fail.
        message: human-readable detail, at most :data:`MESSAGE_CHARS` characters (a longer
            one is cut, and says how much was cut).
        failed_count: offending rows or problems (0 when the check passed cleanly).
        metric_value: the number a metric rule measured (``None`` for other rules).
        severity: ``pass``, ``warn`` or ``fail``; derived from ``passed`` when not given.
        check_name: the ``name`` the rule was given, if any.
        failed_rows: for a ``sql`` rule in ``failed_rows`` mode, the DataFrame of bad rows.
            Never part of :meth:`to_dict`.
        code: the rule's code, declared or rendered (``range(age,1,99)``, ``row_count``).
        dimension: the rule's optional quality dimension (``Completeness``, ``Validity``, ...).
        samples: with ``run(..., samples=N)``, up to N offending rows of a failed row-level
            rule, as JSON-safe dicts.
        rule_id: the rule's stable identity (declared with ``id``, or derived from what it
            measures): the key of its history. Like ``samples``, it is not compared by ``==``,
            which says whether two results measured and concluded the same.
        rows_checked: the rows the rule saw (inside its ``where``), for a rule measured in
            the block's scan; None for one that runs alone (``sql``, ``schema``). Not compared.
        baseline: for a change rule, the value from the history it was compared with.
        thresholds: the rule's judging parameters as it wrote them, by name (``must_be``,
            ``warn``, ``tolerance``, a ``row_count``'s ``min`` and ``max``), each as text:
            what a reader needs to see why a rule passed, which its message may not say.
            None when the rule has none. Not compared.
        details: facts the rule measured beyond its counts, as a JSON-safe mapping (text keys;
            text, numbers, booleans, null, lists and mappings as values), for a program to
            read rather than the message: ``{"columns": {"customer_id": 1, "email": 1}}``,
            the NULLs per column of ``not_null(customer_id,email)``. Details whose JSON is
            longer than :data:`DETAILS_CHARS` characters are left out (None). Not compared.
        evaluation_failed: True when Spark failed on the data's values while measuring the
            rule (an invalid cast, a division by zero, ``raise_error``), so it measured
            nothing and failed; its message says why. Not compared.
    """

    rule_type: str
    passed: bool
    message: str = ""
    failed_count: int = 0
    metric_value: float | None = None
    severity: Severity | None = field(default=None, metadata=_FILLED)
    check_name: str | None = None
    failed_rows: Any = field(default=None, compare=False, repr=False, metadata=_NEVER)
    code: str | None = None
    dimension: str | None = field(default=None, metadata=_WHEN_SET)
    samples: list[dict[str, Any]] | None = field(default=None, compare=False, metadata=_WHEN_SET)
    rule_id: str | None = field(default=None, compare=False, metadata=_WHEN_SET)
    rows_checked: int | None = field(default=None, compare=False, metadata=_WHEN_SET)
    baseline: float | None = field(default=None, metadata=_WHEN_SET)
    thresholds: dict[str, str] | None = field(default=None, compare=False, metadata=_WHEN_SET)
    details: dict[str, Any] | None = field(default=None, compare=False, metadata=_WHEN_SET)
    evaluation_failed: bool = field(default=False, compare=False, metadata=_WHEN_TRUE)

    def __post_init__(self) -> None:
        if isinstance(self.message, str) and len(self.message) > MESSAGE_CHARS:
            object.__setattr__(self, "message", cut_text(self.message, MESSAGE_CHARS))
        if self.details is not None:
            object.__setattr__(self, "details", _bounded_details(self.details))
        if not isinstance(self.evaluation_failed, bool):
            raise ColaError(f"evaluation_failed must be true or false, got {self.evaluation_failed!r}")
        if self.severity is None:
            object.__setattr__(self, "severity", "pass" if self.passed else "fail")
        elif self.severity not in SEVERITIES:
            raise ColaError(f"severity must be one of {', '.join(SEVERITIES)}, got {self.severity!r}")

    @property
    def label(self) -> str:
        return self.check_name or "check"

    def __str__(self) -> str:
        # Optional only as an argument: __post_init__ always sets it, so it is never None here.
        assert self.severity is not None
        # One line whatever the name and message hold: a printed result never forges another.
        return f"[{self.severity.upper()}] {one_line(self.label)}: {one_line(self.message)}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON-safe form used in XCom and results files.

        ``failed_rows`` is never in it; ``dimension``, ``samples``, ``rule_id``,
        ``rows_checked``, ``baseline``, ``thresholds`` and ``details`` only when they are set
        (a result the engine returns always has a ``rule_id``), ``evaluation_failed`` only
        when it is true.
        """
        data = {}
        for key in dataclasses.fields(self):
            value, written = getattr(self, key.name), key.metadata.get(_WRITTEN, "always")
            if written == "always" or (written == "when set" and value is not None) or (
                written == "when true" and value is True
            ):
                data[key.name] = value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """Rebuild a result from :meth:`to_dict`; unknown keys are an error."""
        known = list(RESULT_KEYS)
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ColaError(f"unknown CheckResult keys {unknown}; valid keys are {known}")
        return cls(**data)


@dataclass(frozen=True)
class ResultKey:
    """One key of :meth:`CheckResult.to_dict`, read off the dataclass: what a reader of a
    results file checks it against, so that the form is written once.

    Attributes:
        name: the field's name.
        types: the JSON values it may hold, as Python types (``float`` also takes ``int``; null is
            ``NoneType``, only for a key that is always written).
        items: for a list or an object, the type of its items (its values), when it has one.
        optional: whether the key is left out when unset (None, or false for a flag).
    """

    name: str
    types: tuple[type, ...]
    items: type | None
    optional: bool

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` as this key's (``must be a string, got a list``), or None."""
        if not isinstance(value, self.types) or (isinstance(value, bool) and bool not in self.types):
            return f"must be {self._what()}, got {json_type(value)}"
        if self.items is not None and isinstance(value, (list, dict)):
            items = value.values() if isinstance(value, dict) else value
            if not all(isinstance(item, self.items) for item in items):
                return f"must be {_A[list if isinstance(value, list) else dict]} of {_PLURAL[self.items]}"
        return None

    def _what(self) -> str:
        words = [_A[kind] for kind in self.types if kind is not int or float not in self.types]
        return " or ".join(dict.fromkeys(words))


_A: dict[type, str] = {
    str: "a string", bool: "a boolean", int: "a whole number", float: "a number", list: "a list", dict: "an object",
    type(None): "null",
}
_PLURAL: dict[type, str] = {str: "strings", dict: "objects"}


def _result_keys() -> dict[str, ResultKey]:
    """Each key :meth:`CheckResult.to_dict` writes, from the dataclass's fields and their types."""
    hints = typing.get_type_hints(CheckResult)
    keys: dict[str, ResultKey] = {}
    for key in dataclasses.fields(CheckResult):
        written = key.metadata.get(_WRITTEN, "always")
        if written == "never":
            continue
        kinds: list[type] = []
        items = None
        for hint in _union(hints[key.name]):
            origin = typing.get_origin(hint) or hint
            if origin is Literal:  # Severity: its words are text
                origin = type(typing.get_args(hint)[0])
            elif origin in (list, dict):
                item = typing.get_args(hint)[-1] if typing.get_args(hint) else Any
                item = typing.get_origin(item) or item
                items = None if item is Any else item
            if origin is type(None) and (written != "always" or key.metadata.get("filled")):
                continue  # left out rather than written as null, or never null
            kinds += [int, float] if origin is float else [origin]
        keys[key.name] = ResultKey(key.name, tuple(kinds), items, optional=written != "always")
    return keys


def _union(hint: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(hint)
    return typing.get_args(hint) if origin in (typing.Union, types.UnionType) else (hint,)


def _bounded_details(details: Any) -> dict[str, Any] | None:
    """``details`` as a plain JSON-safe dict, or None when its JSON is over :data:`DETAILS_CHARS`.

    Raises:
        ColaError: ``details`` is no mapping, or holds a value JSON cannot carry.
    """
    if not isinstance(details, Mapping):
        raise ColaError(f"details must be a mapping of names to values, got {type(details).__name__}")
    plain = _json_value(details, "details")
    return plain if len(json.dumps(plain, allow_nan=False)) <= DETAILS_CHARS else None


def _json_value(value: Any, where: str) -> Any:
    """``value`` made of plain dicts, lists and JSON scalars, or a ColaError naming where it is not."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ColaError(f"{where} is {value!r}, which JSON cannot carry")
        return value
    if isinstance(value, Mapping):
        plain: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ColaError(f"{where} has the key {key!r}: the keys of details must be text")
            plain[key] = _json_value(item, f"{where}[{key!r}]")
        return plain
    if isinstance(value, (list, tuple)):
        return [_json_value(item, f"{where}[{index}]") for index, item in enumerate(value)]
    raise ColaError(f"{where} is a {type(value).__name__}, which JSON cannot carry (details must be JSON-safe)")


def worst_severity(results: Sequence[CheckResult]) -> Severity:
    """``fail`` beats ``warn`` beats ``pass``; an empty list is a pass."""
    severities: list[Severity] = [r.severity for r in results if r.severity is not None]
    return max(severities, key=SEVERITIES.index, default="pass")


# The JSON form of a result, key by key, in to_dict()'s order.
RESULT_KEYS: Mapping[str, ResultKey] = _result_keys()

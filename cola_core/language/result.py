"""``CheckResult``: what one rule measured and what it concluded."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from cola_core.common.formatting import cut_text, one_line
from cola_core.errors import ColaError

__all__ = [
    "DETAILS_CHARS", "MESSAGE_CHARS", "RULE_SEVERITIES", "SEVERITIES", "CheckResult", "RuleSeverity", "Severity",
    "worst_severity",
]

# What a result concludes, best first: the order in which the worst of a run is chosen.
Severity = Literal["pass", "warn", "fail"]
SEVERITIES: tuple[Severity, ...] = ("pass", "warn", "fail")
# What a rule may declare as its ``severity``: how much its failure counts.
RuleSeverity = Literal["fail", "warn"]
RULE_SEVERITIES: tuple[RuleSeverity, ...] = ("fail", "warn")
_OPTIONAL_KEYS = ("dimension", "samples", "rule_id", "rows_checked", "baseline", "thresholds", "details")
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
    severity: Severity | None = None
    check_name: str | None = None
    failed_rows: Any = field(default=None, compare=False, repr=False)
    code: str | None = None
    dimension: str | None = None
    samples: list[dict[str, Any]] | None = field(default=None, compare=False)
    rule_id: str | None = field(default=None, compare=False)
    rows_checked: int | None = field(default=None, compare=False)
    baseline: float | None = None
    thresholds: dict[str, str] | None = field(default=None, compare=False)
    details: dict[str, Any] | None = field(default=None, compare=False)
    evaluation_failed: bool = field(default=False, compare=False)

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
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "failed_rows"}
        for optional in _OPTIONAL_KEYS:
            if data[optional] is None:
                del data[optional]
        if not data["evaluation_failed"]:
            del data["evaluation_failed"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """Rebuild a result from :meth:`to_dict`; unknown keys are an error."""
        known = [f.name for f in dataclasses.fields(cls) if f.name != "failed_rows"]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ColaError(f"unknown CheckResult keys {unknown}; valid keys are {known}")
        return cls(**data)


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

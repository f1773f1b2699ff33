"""Judging a measured number by a rule's ``must_be`` and ``warn`` thresholds.

Pure Python: a metric rule measures a number in the block's scan, and this turns it into a
result. Shared by every rule with ``must_be`` (metrics, ``row_count``, ``reconcile``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

from cola_core._format import format_number
from cola_core.result import CheckResult
from cola_core.thresholds import threshold_of

__all__ = ["Judged", "judge_metric"]


class Judged(Protocol):
    """What judging reads from a rule: its type, and ``must_be`` and ``warn`` in its params."""

    @property
    def rule_type(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...


def judge_metric(
    check: Judged,
    label: str,
    value: float | None,
    failed_count: int = 1,
    *,
    unmeasured: str = "no non-NULL values",
) -> CheckResult:
    """Compare a measured value with ``must_be`` and ``warn``.

    ``failed_count`` is 0 whenever the rule passes, warn included (a warn keeps
    ``passed=True``); the measured number is always in ``metric_value``.

    Args:
        value: the measurement; ``None`` (or NaN) means nothing was measured, and the rule fails.
        failed_count: what to report as failed_count when the rule fails (the offending rows
            for a row-level metric, 1 for a table-level one).
        unmeasured: why nothing was measured, for the message.
    """
    must_be = check.params["must_be"]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        why = unmeasured if value is None else "the column holds NaN, so the result is NaN"
        message = f"{label}: nothing was measured ({why}), so must_be ({must_be}) is not met"
        return CheckResult(check.rule_type, False, message, 1, None)
    shown = format_number(value)
    if not threshold_of(must_be).accepts(value):
        message = f"{label} = {shown} violates must_be ({must_be})"
        return CheckResult(check.rule_type, False, message, failed_count, value)
    warn = check.params.get("warn")
    if warn is not None and not threshold_of(warn).accepts(value):
        return CheckResult(check.rule_type, True, f"{label} = {shown} violates warn ({warn})", 0, value, "warn")
    return CheckResult(check.rule_type, True, f"{label} = {shown} meets must_be ({must_be})", 0, value)

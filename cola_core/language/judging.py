"""Judging a measured number by a rule's ``must_be`` and ``warn`` thresholds.

Pure Python: a metric rule measures a number in the block's scan, and this turns it into a
result. Shared by every rule with ``must_be`` (metrics, ``row_count``, ``reconcile``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

from cola_core.common.formatting import format_number
from cola_core.errors import ColaRuleError
from cola_core.language.result import CheckResult
from cola_core.language.thresholds import Threshold, threshold_of

__all__ = [
    "ANOMALY_RUNS",
    "ANOMALY_WARM_UP",
    "BASELINE_AGGREGATES",
    "Judged",
    "check_baseline",
    "history_runs",
    "judge_metric",
]


# An anomaly score needs this many earlier runs; until then the rule passes, and says so.
ANOMALY_WARM_UP = 5
# The earlier runs an anomaly is scored against, unless the rule's baseline says otherwise.
ANOMALY_RUNS = 20
BASELINE_AGGREGATES = ("avg", "median")
# 1.4826 * MAD estimates the standard deviation of normal data, so the score reads like a z-score.
_MAD_SCALE = 1.4826


class Judged(Protocol):
    """What judging reads from a rule: its type, ``must_be``, ``warn`` and ``baseline`` in its
    params, and the metric's earlier values (newest first) for a change or anomaly threshold."""

    @property
    def rule_type(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...

    @property
    def history_values(self) -> tuple[float, ...] | None: ...


def check_baseline(params: Mapping[str, Any]) -> None:
    """Refuse a malformed ``baseline`` (``{"runs": 7, "aggregate": "avg" | "median"}``), or
    one on a rule whose thresholds do not compare with earlier runs.

    Raises:
        ColaRuleError: naming the problem.
    """
    thresholds = [threshold_of(params[key]) for key in ("must_be", "warn") if key in params]
    if "baseline" not in params:
        return
    if not any(threshold.compares_with_history for threshold in thresholds):
        raise ColaRuleError(
            "'baseline' says which earlier runs a change or anomaly threshold compares with, but neither "
            "'must_be' nor 'warn' is one (such as \"change between -10% and 10%\")"
        )
    baseline = params["baseline"]
    unknown = sorted(set(baseline) - {"runs", "aggregate"})
    if unknown:
        raise ColaRuleError(f"'baseline' has unknown keys {', '.join(unknown)}; it takes 'runs' and 'aggregate'")
    runs = baseline.get("runs", 1)
    if isinstance(runs, bool) or not isinstance(runs, int) or not 1 <= runs <= 1000:
        raise ColaRuleError(f"'baseline.runs' must be a whole number from 1 to 1000, got {runs!r}")
    if any(threshold.kind == "anomaly" for threshold in thresholds) and runs < ANOMALY_WARM_UP and "runs" in baseline:
        raise ColaRuleError(
            f"'baseline.runs' is {runs}, but an anomaly is scored against at least {ANOMALY_WARM_UP} earlier runs"
        )
    aggregate = baseline.get("aggregate", "avg")
    if aggregate not in BASELINE_AGGREGATES:
        raise ColaRuleError(f"'baseline.aggregate' must be 'avg' or 'median', got {aggregate!r}")


def history_runs(params: Mapping[str, Any]) -> int:
    """How many earlier values of the metric judging needs (0 when it needs none)."""
    thresholds = [threshold_of(params[key]) for key in ("must_be", "warn") if key in params]
    kinds = {threshold.kind for threshold in thresholds}
    baseline = params.get("baseline", {})
    needed = [baseline.get("runs", 1)] if "change" in kinds else []
    if "anomaly" in kinds:
        needed.append(baseline.get("runs", ANOMALY_RUNS))
    return max(needed, default=0)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


class _Verdict:
    """One threshold's judgement of a value: accepted, and the words that say what was compared."""

    def __init__(self, accepted: bool, compared: str = "", baseline: float | None = None, pending: str = "") -> None:
        self.accepted = accepted
        self.compared = compared
        self.baseline = baseline
        self.pending = pending


def _judge(check: Judged, threshold: Threshold, value: float) -> _Verdict:
    if threshold.kind == "value":
        return _Verdict(threshold.accepts(value))
    earlier = list(check.history_values or ())
    baseline = check.params.get("baseline", {})
    if threshold.kind == "anomaly":
        runs = earlier[: baseline.get("runs", ANOMALY_RUNS)]
        if len(runs) < ANOMALY_WARM_UP:
            return _Verdict(True, pending=f"warming up ({len(runs)} of {ANOMALY_WARM_UP} earlier runs)")
        median = _median(runs)
        spread = _MAD_SCALE * _median([abs(run - median) for run in runs])
        score = 0.0 if value == median else (abs(value - median) / spread if spread else math.inf)
        shown = "infinite" if math.isinf(score) else format_number(score)
        words = f"anomaly score {shown} against the last {len(runs)} runs (median {format_number(median)})"
        return _Verdict(threshold.accepts(score), words, median)
    runs = earlier[: baseline.get("runs", 1)]
    if not runs:
        return _Verdict(True, pending="no baseline yet")
    reference = _median(runs) if baseline.get("aggregate") == "median" else sum(runs) / len(runs)
    of = f"from baseline {format_number(reference)}"
    if not threshold.is_relative:
        change = value - reference
        return _Verdict(threshold.accepts(change), f"change {_signed(change)} {of}", reference)
    if reference == 0:
        if value == 0:
            return _Verdict(threshold.accepts(0.0), f"change 0% {of}", reference)
        return _Verdict(False, f"{of}, which is 0, so there is no relative change", reference)
    change = 100.0 * (value - reference) / abs(reference)
    return _Verdict(threshold.accepts(change), f"change {_signed(change)}% {of}", reference)


def _signed(number: float) -> str:
    return ("+" if number > 0 else "") + format_number(number)


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
    measured = f"{label} = {format_number(value)}"
    verdict = _judge(check, threshold_of(must_be), value)
    said = f"{measured}, {verdict.compared}" if verdict.compared else measured
    baseline = verdict.baseline
    if not verdict.accepted:
        return CheckResult(check.rule_type, False, f"{said} violates must_be ({must_be})", failed_count, value,
                           baseline=baseline)
    warn = check.params.get("warn")
    if warn is not None:
        warned = _judge(check, threshold_of(warn), value)
        baseline = baseline if baseline is not None else warned.baseline
        if not warned.accepted:
            words = f"{measured}, {warned.compared}" if warned.compared else measured
            return CheckResult(check.rule_type, True, f"{words} violates warn ({warn})", 0, value, "warn",
                               baseline=baseline)
    if verdict.pending:
        return CheckResult(check.rule_type, True, f"{measured}: {verdict.pending}, so must_be ({must_be}) passes",
                           0, value, baseline=baseline)
    return CheckResult(check.rule_type, True, f"{said} meets must_be ({must_be})", 0, value, baseline=baseline)

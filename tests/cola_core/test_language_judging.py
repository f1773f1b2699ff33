"""``judge_metric`` (``language/judging.py``): a measured number against ``must_be`` and ``warn``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from cola_core import CheckResult
from cola_core.language.judging import judge_metric


@dataclass
class Rule:
    """The two things judging reads from a rule."""

    params: dict[str, Any] = field(default_factory=dict)
    rule_type: str = "avg"


@pytest.mark.parametrize(
    ("params", "value", "failed_count", "expected"),
    [
        ({"must_be": "> 0"}, 2.5, 1, CheckResult("avg", True, "avg(x) = 2.5 meets must_be (> 0)", 0, 2.5)),
        ({"must_be": "> 0"}, -1, 7, CheckResult("avg", False, "avg(x) = -1 violates must_be (> 0)", 7, -1)),
        ({"must_be": "> 0", "warn": "> 10"}, 1 / 3,
         1, CheckResult("avg", True, "avg(x) = 0.3333 violates warn (> 10)", 0, 1 / 3, "warn")),
        ({"must_be": "> 0", "warn": "> 10"}, 11.0, 1, CheckResult("avg", True, "avg(x) = 11 meets must_be (> 0)", 0, 11.0)),
        ({"must_be": 3}, 3, 1, CheckResult("avg", True, "avg(x) = 3 meets must_be (3)", 0, 3)),
    ],
)
def test_a_measured_value_meets_warns_or_violates(params, value, failed_count, expected):
    assert judge_metric(Rule(params), "avg(x)", value, failed_count) == expected


def test_nothing_measured_fails_and_says_why():
    assert judge_metric(Rule({"must_be": "> 0"}), "avg(x)", None) == CheckResult(
        "avg", False, "avg(x): nothing was measured (no non-NULL values), so must_be (> 0) is not met", 1, None
    )
    assert judge_metric(Rule({"must_be": "> 0"}), "avg(x)", float("nan")) == CheckResult(
        "avg", False,
        "avg(x): nothing was measured (the column holds NaN, so the result is NaN), so must_be (> 0) is not met", 1, None,
    )
    assert judge_metric(Rule({"must_be": "= 0"}, "reconcile"), "reconcile", None, unmeasured="an empty reference") == (
        CheckResult("reconcile", False, "reconcile: nothing was measured (an empty reference), so must_be (= 0) is not met",
                    1, None)
    )

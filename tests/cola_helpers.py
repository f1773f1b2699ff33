"""Helpers shared by the engine's tests (importable because tests/ holds the conftest)."""

from __future__ import annotations

import pytest

from cola_core import BaseCheck, CheckResult, Cola, ColaRuleError


def run_one(df, rule, **cola_options) -> CheckResult:
    """The result of one rule run on its own."""
    [result] = Cola(**cola_options).run(df, [rule])
    return result


def refused(rule) -> str:
    """The message of the ColaRuleError a malformed rule raises."""
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    return str(raised.value)


class NoFutureDateCheck(BaseCheck):
    """Seed 001's custom check: it implements ``aggregations``, so it joins the single scan."""

    def aggregations(self, df):
        from pyspark.sql import functions as F

        return [F.count(F.when(F.col(self.params["column"]) > F.current_date(), F.lit(1)))]

    def from_aggregations(self, values):
        failed = int(values[0])
        if failed:
            return CheckResult("no_future_date", False, f"{failed} future dates", failed)
        return CheckResult("no_future_date", True)

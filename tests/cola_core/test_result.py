"""CheckResult: positional order, derived severity, text form, and the JSON form."""

from __future__ import annotations

import json

import pytest

from cola_core import CheckResult, ColaError
from cola_core.result import worst_severity


def test_positional_order_matches_the_custom_check_examples():
    result = CheckResult("no_future_date", False, "3 future dates", 3)
    assert (result.rule_type, result.passed, result.message, result.failed_count) == (
        "no_future_date",
        False,
        "3 future dates",
        3,
    )
    assert (result.metric_value, result.check_name, result.failed_rows, result.code) == (None, None, None, None)


def test_severity_is_derived_from_passed_unless_given():
    assert CheckResult("x", True).severity == "pass"
    assert CheckResult("x", False).severity == "fail"
    assert CheckResult("x", True, severity="warn").severity == "warn"
    with pytest.raises(ColaError, match=r"severity must be one of pass, warn, fail, got 'bad'"):
        CheckResult("x", True, severity="bad")


def test_text_form_uses_the_name_or_check():
    failed = CheckResult("missing_percent", False, "missing_percent(cpf) = 8 violates must_be (< 5%)", 8, 8.0)
    assert str(failed) == "[FAIL] check: missing_percent(cpf) = 8 violates must_be (< 5%)"
    named = CheckResult("avg", True, "avg(amount) = 3 violates warn (= 0)", severity="warn", check_name="amounts")
    assert str(named) == "[WARN] amounts: avg(amount) = 3 violates warn (= 0)"


def test_json_form_round_trips_without_failed_rows():
    result = CheckResult(
        "sql", False, "Negative amounts found (2 failed rows)", 2, None, None, "neg", object(), "sql"
    )
    data = result.to_dict()
    assert data == {
        "rule_type": "sql",
        "passed": False,
        "message": "Negative amounts found (2 failed rows)",
        "failed_count": 2,
        "metric_value": None,
        "severity": "fail",
        "check_name": "neg",
        "code": "sql",
    }
    assert CheckResult.from_dict(json.loads(json.dumps(data))) == result


def test_dimension_and_samples_appear_only_when_set():
    result = CheckResult("not_null", False, "m", 1, dimension="Completeness", samples=[{"id": None}])
    data = result.to_dict()
    assert (data["dimension"], data["samples"]) == ("Completeness", [{"id": None}])
    assert CheckResult.from_dict(data) == result
    assert "dimension" not in CheckResult("x", True).to_dict()
    assert "samples" not in CheckResult("x", True).to_dict()


def test_thresholds_appear_only_when_set_and_are_not_compared():
    result = CheckResult("row_count", True, "m", thresholds={"must_be": "> 5", "warn": "> 10"})
    data = result.to_dict()
    assert data["thresholds"] == {"must_be": "> 5", "warn": "> 10"}
    back = CheckResult.from_dict(json.loads(json.dumps(data)))
    assert back.thresholds == {"must_be": "> 5", "warn": "> 10"}
    assert back == result == CheckResult("row_count", True, "m")  # like rule_id: not what was measured
    assert "thresholds" not in CheckResult("x", True).to_dict()


def test_from_dict_refuses_unknown_keys_and_lists_the_valid_ones():
    with pytest.raises(ColaError) as raised:
        CheckResult.from_dict({"rule_type": "x", "passed": True, "failed_rows": [], "colour": "red"})
    assert str(raised.value) == (
        "unknown CheckResult keys ['colour', 'failed_rows']; valid keys are ['rule_type', 'passed', 'message', "
        "'failed_count', 'metric_value', 'severity', 'check_name', 'code', 'dimension', 'samples', 'rule_id', "
        "'rows_checked', 'baseline', 'thresholds']"
    )


def test_results_are_frozen():
    with pytest.raises(AttributeError):
        CheckResult("x", True).passed = False  # type: ignore[misc]


def test_worst_severity():
    assert worst_severity([]) == "pass"
    assert worst_severity([CheckResult("a", True), CheckResult("b", True, severity="warn")]) == "warn"
    assert worst_severity([CheckResult("a", False), CheckResult("b", True, severity="warn")]) == "fail"


def test_a_message_is_cut_at_its_bound_and_says_how_much_was_cut():
    from cola_core.result import MESSAGE_CHARS

    long = "x" * 30_000
    result = CheckResult("sql", False, long)
    assert MESSAGE_CHARS == 2_000
    assert result.message == "x" * 2_000 + "… [cut: 28,000 characters]"
    assert CheckResult("sql", True, "x" * 2_000).message == "x" * 2_000

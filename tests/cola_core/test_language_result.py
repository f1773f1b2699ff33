"""CheckResult: positional order, derived severity, text form, and the JSON form."""

from __future__ import annotations

import dataclasses
import json

import pytest

from cola_core import CheckResult, ColaError
from cola_core.language.result import RESULT_KEYS, worst_severity


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
        "'rows_checked', 'baseline', 'thresholds', 'details', 'evaluation_failed']"
    )


def test_results_are_frozen():
    with pytest.raises(AttributeError):
        CheckResult("x", True).passed = False  # type: ignore[misc]


def test_worst_severity():
    assert worst_severity([]) == "pass"
    assert worst_severity([CheckResult("a", True), CheckResult("b", True, severity="warn")]) == "warn"
    assert worst_severity([CheckResult("a", False), CheckResult("b", True, severity="warn")]) == "fail"


def test_a_message_is_cut_at_its_bound_and_says_how_much_was_cut():
    from cola_core.language.result import MESSAGE_CHARS

    long = "x" * 30_000
    result = CheckResult("sql", False, long)
    assert MESSAGE_CHARS == 2_000
    assert result.message == "x" * 2_000 + "… [cut: 28,000 characters]"
    assert CheckResult("sql", True, "x" * 2_000).message == "x" * 2_000


def test_details_appear_only_when_set_round_trip_and_are_not_compared():
    result = CheckResult("not_null", False, "m", 2, details={"columns": {"customer_id": 1, "email": 1}})
    data = result.to_dict()
    assert data["details"] == {"columns": {"customer_id": 1, "email": 1}}
    back = CheckResult.from_dict(json.loads(json.dumps(data)))
    assert back.details == {"columns": {"customer_id": 1, "email": 1}}
    assert back == result == CheckResult("not_null", False, "m", 2)
    assert "details" not in CheckResult("x", True).to_dict()


def test_details_are_made_plain_json_and_refused_when_json_cannot_carry_them():
    made = CheckResult("x", True, details={"parts": ("a", 1), "nested": {"ok": None, "share": 0.5, "flag": True}})
    assert made.details == {"parts": ["a", 1], "nested": {"ok": None, "share": 0.5, "flag": True}}
    with pytest.raises(ColaError) as raised:
        CheckResult("x", True, details=[1])  # type: ignore[arg-type]
    assert str(raised.value) == "details must be a mapping of names to values, got list"
    with pytest.raises(ColaError) as raised:
        CheckResult("x", True, details={"columns": {1: 2}})
    assert str(raised.value) == "details['columns'] has the key 1: the keys of details must be text"
    with pytest.raises(ColaError) as raised:
        CheckResult("x", True, details={"share": float("nan")})
    assert str(raised.value) == "details['share'] is nan, which JSON cannot carry"
    with pytest.raises(ColaError) as raised:
        CheckResult("x", True, details={"when": {1, 2}})
    assert str(raised.value) == "details['when'] is a set, which JSON cannot carry (details must be JSON-safe)"


def test_details_over_their_bound_are_left_out():
    from cola_core.language.result import DETAILS_CHARS

    assert DETAILS_CHARS == 10_000
    columns = {f"c{n:04}": n for n in range(1_000)}  # over 13,000 characters of JSON
    assert CheckResult("not_null", False, "m", details={"columns": columns}).details is None
    fits = {f"c{n:03}": n for n in range(500)}
    assert CheckResult("not_null", False, "m", details={"columns": fits}).details == {"columns": fits}


def test_evaluation_failed_appears_only_when_true_and_is_not_compared():
    failed = CheckResult("expression", False, "could not be measured", evaluation_failed=True)
    assert failed.to_dict()["evaluation_failed"] is True
    assert CheckResult.from_dict(failed.to_dict()).evaluation_failed is True
    assert failed == CheckResult("expression", False, "could not be measured")
    assert "evaluation_failed" not in CheckResult("x", False).to_dict()
    with pytest.raises(ColaError) as raised:
        CheckResult("x", False, evaluation_failed="yes")  # type: ignore[arg-type]
    assert str(raised.value) == "evaluation_failed must be true or false, got 'yes'"


# Every field set, as the engine would give it.
FULL = CheckResult(
    "not_null", False, "m", 2, 1.5, "fail", "ids", None, "not_null(id)", "Completeness", [{"id": None}],
    "ids", 10, 2.0, {"must_be": "= 0"}, {"columns": {"id": 2}}, True,
)


def test_the_json_form_is_read_off_the_dataclass_once():
    # RESULT_KEYS is what a reader of a results file checks (the Airflow provider): the fields, in order.
    written = [f.name for f in dataclasses.fields(CheckResult) if f.name != "failed_rows"]
    assert list(RESULT_KEYS) == list(FULL.to_dict()) == written
    assert [name for name, key in RESULT_KEYS.items() if key.optional] == [
        "dimension", "samples", "rule_id", "rows_checked", "baseline", "thresholds", "details", "evaluation_failed",
    ]
    assert all(RESULT_KEYS[name].problem(value) is None for name, value in FULL.to_dict().items())
    assert {name: RESULT_KEYS[name].problem(value) for name, value in {
        "failed_count": True, "metric_value": "6", "severity": None, "check_name": 1, "samples": [1],
        "thresholds": {"must_be": 5}, "details": [1], "baseline": None, "evaluation_failed": "yes",
    }.items()} == {
        "failed_count": "must be a whole number, got a boolean",
        "metric_value": "must be a number or null, got a string",
        "severity": "must be a string, got null",  # __post_init__ fills it: never written as null
        "check_name": "must be a string or null, got a number",
        "samples": "must be a list of objects",
        "thresholds": "must be an object of strings",
        "details": "must be an object, got a list",
        "baseline": "must be a number, got null",  # left out when unset, never null
        "evaluation_failed": "must be a boolean, got a string",
    }

"""Rule identity: every rule has a stable ``rule_id``, declared or derived from what it
measures, never from its thresholds, name, code, severity or position."""

from __future__ import annotations

import re

import pytest

from cola_core import CheckResult, Cola, ColaRuleError
from cola_core.checks import NotNullCheck

ID = re.compile(r"^[a-z_]+:[0-9a-f]{12}$")


def ids(*rules) -> list[str]:
    return [check.rule_id for check in Cola().parse(list(rules))]


def one_id(rule) -> str:
    (rule_id,) = ids(rule)
    return rule_id


# -- derived ids -------------------------------------------------------------------------------


def test_a_derived_id_names_the_type_and_a_hash_of_what_is_measured():
    rule_id = one_id({"type": "not_null", "columns": ["email"]})
    assert ID.match(rule_id)
    assert rule_id.startswith("not_null:")
    # Stable across processes and releases: the hash of a canonical JSON text.
    assert rule_id == "not_null:" + __import__("hashlib").sha256(
        b'{"params":{"columns":["email"]},"type":"not_null","where":null}'
    ).hexdigest()[:12]


@pytest.mark.parametrize(
    ("base", "edited"),
    [
        ({"type": "missing_percent", "column": "email", "must_be": "< 5%"},
         {"type": "missing_percent", "column": "email", "must_be": "< 1%", "warn": "= 0"}),
        ({"type": "row_count", "min": 1}, {"type": "row_count", "min": 100, "max": 5000}),
        ({"type": "row_count", "min": 1}, {"type": "row_count", "must_be": "> 10"}),
        ({"type": "not_null", "columns": ["email"]},
         {"type": "not_null", "columns": ["email"], "name": "emails", "code": "E1", "severity": "warn",
          "dimension": "Completeness"}),
        ({"type": "regex", "column": "cpf", "pattern": "^[0-9]+$"},
         {"type": "regex", "column": "cpf", "pattern": "^[0-9]+$", "tolerance": "< 1%"}),
        ({"type": "check", "metric": "missing_count", "column": "cpf", "must_be": 0},
         {"type": "missing_count", "column": "cpf", "must_be": "<= 3"}),
        ({"type": "avg", "column": "amount", "must_be": 10}, {"type": "avg", "column": "amount", "must_be": "> 10.0"}),
    ],
    ids=["metric thresholds", "row_count bounds", "row_count forms", "name code severity dimension", "tolerance",
         "legacy wrapper", "threshold number or text"],
)
def test_editing_what_judges_a_measurement_keeps_the_id(base, edited):
    assert one_id(base) == one_id(edited)


@pytest.mark.parametrize(
    ("base", "other"),
    [
        ({"type": "not_null", "columns": ["email"]}, {"type": "not_null", "columns": ["phone"]}),
        ({"type": "not_null", "columns": ["email"]}, {"type": "not_null", "columns": ["email"], "where": "live"}),
        ({"type": "not_null", "columns": ["email"], "where": "live"},
         {"type": "not_null", "columns": ["email"], "where": "NOT live"}),
        ({"type": "range", "column": "age", "min": 0}, {"type": "range", "column": "age", "min": 18}),
        ({"type": "missing_count", "column": "cpf", "must_be": 0},
         {"type": "missing_count", "column": "cpf", "missing_values": ["N/A"], "must_be": 0}),
        ({"type": "missing_count", "column": "cpf", "must_be": 0}, {"type": "missing_percent", "column": "cpf",
                                                                    "must_be": 0}),
        ({"type": "foreign_key", "column": "c", "reference": {"table": "a"}},
         {"type": "foreign_key", "column": "c", "reference": {"table": "b"}}),
    ],
    ids=["columns", "where added", "where changed", "range bounds", "missing_values", "type", "reference"],
)
def test_what_is_measured_changes_the_id(base, other):
    assert one_id(base) != one_id(other)


def test_a_whole_float_and_an_int_measure_the_same():
    assert one_id({"type": "range", "column": "age", "min": 0}) == one_id({"type": "range", "column": "age", "min": 0.0})


def test_the_position_in_the_block_does_not_change_an_id():
    a, b = {"type": "not_null", "columns": ["a"]}, {"type": "unique", "columns": ["b"]}
    assert ids(a, b) == list(reversed(ids(b, a)))


def test_expanded_targets_each_derive_their_own_id():
    first, second = ids({"type": "regex", "targets": [{"column": "cpf", "pattern": "x"},
                                                      {"column": "cnpj", "pattern": "x"}]})
    assert first != second
    assert first == one_id({"type": "regex", "column": "cpf", "pattern": "x"})


def test_later_rules_deriving_the_same_id_get_a_suffix_in_order():
    bounds = {"type": "row_count", "min": 1}
    metric = {"type": "row_count", "must_be": "> 10"}
    other = {"type": "not_null", "columns": ["a"]}
    base = one_id(bounds)
    assert ids(bounds, other, metric, {"type": "row_count", "max": 9}) == [
        base, one_id(other), f"{base}#2", f"{base}#3",
    ]


# -- declared ids ------------------------------------------------------------------------------


def test_a_declared_id_is_used_as_it_is_and_takes_no_part_in_the_suffixes():
    bounds = {"type": "row_count", "min": 1}
    assert ids({**bounds, "id": "orders.volume"}, bounds) == ["orders.volume", one_id(bounds)]


def test_a_declared_id_may_sit_in_each_target():
    assert ids({"type": "regex", "targets": [{"column": "cpf", "pattern": "x", "id": "cpf_format"},
                                             {"column": "cnpj", "pattern": "x", "id": "cnpj_format"}]}) == [
        "cpf_format", "cnpj_format",
    ]


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([{"type": "not_null", "columns": ["a"], "id": "key"}, {"type": "unique", "columns": ["a"], "id": "key"}],
         "rules[1] (unique): 'id' 'key' is already the id of rules[0]; give each rule its own id"),
        ([{"type": "regex", "targets": [{"column": "a", "pattern": "x", "id": "k"},
                                        {"column": "b", "pattern": "x", "id": "k"}]}],
         "rules[0].targets[1] (regex): 'id' 'k' is already the id of rules[0].targets[0]; give each rule its own id"),
        ([{"type": "regex", "id": "k", "targets": [{"column": "a", "pattern": "x"}]}],
         "rules[0] (regex): 'id' sits next to 'targets', so every expanded rule would share it; move it inside "
         "each target"),
        ([{"type": "not_null", "columns": ["a"], "id": 7}], "rules[0] (not_null): 'id' must be a non-empty string, got 7"),
        ([{"type": "not_null", "columns": ["a"], "id": "  "}],
         "rules[0] (not_null): 'id' must be a non-empty string, got '  '"),
    ],
    ids=["two rules", "two targets", "next to targets", "not text", "blank"],
)
def test_bad_declared_ids_are_refused(rules, message):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse(rules)
    assert str(raised.value) == message


# -- on results --------------------------------------------------------------------------------


@pytest.mark.spark
def test_every_result_carries_its_rule_id_into_the_summary(spark):
    df = spark.createDataFrame([(1, None), (2, "b")], "id int, email string")
    rules = [{"type": "not_null", "columns": ["email"], "id": "emails"}, {"type": "row_count", "min": 1},
             {"type": "row_count", "must_be": "> 0"}]
    results = Cola().run(df, rules)
    base = one_id({"type": "row_count", "min": 1})
    assert [r.rule_id for r in results] == ["emails", base, f"{base}#2"]
    assert [r.to_dict()["rule_id"] for r in results] == ["emails", base, f"{base}#2"]
    assert CheckResult.from_dict(results[0].to_dict()).rule_id == "emails"


def test_a_check_built_by_hand_derives_its_id():
    check = NotNullCheck({"columns": ["a"]}, rule_type="not_null")
    assert check.rule_id == one_id({"type": "not_null", "columns": ["a"]})


def test_rule_id_is_left_out_of_equality_and_out_of_to_dict_when_unset():
    assert CheckResult("x", True, rule_id="a") == CheckResult("x", True, rule_id="b")
    assert "rule_id" not in CheckResult("x", True).to_dict()

"""ODCS v3 contracts as rule blocks (work in progress: the mapping; not yet wired into files,
the command line or the operators)."""

from __future__ import annotations

import pytest

from cola_core import Cola
from cola_core.errors import ColaError
from cola_core.ruleset.contracts import ContractWarning, rules_from_contract

pytest.importorskip("open_data_contract_standard")

CONTRACT = {
    "apiVersion": "v3.0.2", "kind": "DataContract", "id": "orders-contract", "version": "1.0.0", "status": "active",
    "schema": [{
        "name": "orders",
        "properties": [
            {"name": "order_id", "logicalType": "integer", "required": True, "primaryKey": True, "primaryKeyPosition": 1},
            {"name": "email", "logicalType": "string", "logicalTypeOptions": {"format": "email", "maxLength": 80},
             "quality": [{"id": "email-nulls", "metric": "nullValues", "mustBeLessThan": 5, "unit": "percent",
                          "severity": "warning", "name": "few missing emails", "dimension": "completeness"}]},
            {"name": "status", "unique": False, "logicalTypeOptions": {"pattern": "^[a-z]+$"},
             "quality": [{"metric": "invalidValues", "arguments": {"validValues": ["paid", "refunded"]}, "mustBe": 0}]},
            {"name": "amount", "logicalType": "number",
             "logicalTypeOptions": {"minimum": 0, "exclusiveMaximum": 10000, "multipleOf": 0.01}},
        ],
        "quality": [
            {"id": "orders-rows", "metric": "rowCount", "mustBeBetween": [1, 1000000]},
            {"type": "sql", "id": "no-negative", "query": "SELECT COUNT(*) FROM {object} WHERE amount < 0",
             "mustBe": 0},
            {"type": "text", "description": "Orders are loaded daily."},
        ],
    }],
}

EXPECTED = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "invalid_count", "column": "email", "valid_max_length": 80, "must_be": 0},
    {"type": "invalid_count", "column": "email", "valid_format": "email", "must_be": 0},
    {"type": "missing_percent", "column": "email", "must_be": "< 5%", "name": "few missing emails",
     "dimension": "completeness", "id": "email-nulls", "severity": "warn"},
    {"type": "regex", "column": "status", "pattern": "^[a-z]+$", "null_is_valid": True},
    {"type": "invalid_count", "column": "status", "must_be": "= 0", "valid_values": ["paid", "refunded"]},
    {"type": "range", "column": "amount", "min": 0},
    {"type": "expression", "expression": "`amount` IS NULL OR `amount` < 10000", "name": "amount < 10000"},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "row_count", "must_be": "between 1 and 1000000", "id": "orders-rows"},
    {"type": "sql", "query": "SELECT (SELECT COUNT(*) FROM _validation_df WHERE amount < 0) = 0", "id": "no-negative"},
]


def test_a_contract_becomes_the_rule_block_it_states_and_lists_what_it_cannot_map():
    with pytest.warns(ContractWarning) as warned:
        rules = rules_from_contract(CONTRACT)
    assert rules == EXPECTED
    assert str(warned[0].message) == (
        "no rule checks these parts of the contract: schema[0].properties[3].logicalTypeOptions.multipleOf; "
        "schema[0].quality[2] (text, no single mustBe* operator)"
    )
    Cola().parse(rules)


def test_strict_refuses_what_it_cannot_map():
    with pytest.raises(ColaError, match=r"^no rule checks these parts of the contract: schema\[0\]\.properties\[3\]"):
        rules_from_contract(CONTRACT, strict=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"apiVersion": "v2.2.0"}, "not an ODCS v3 contract: needs kind: DataContract and apiVersion v3.x.y, got kind "
                                   "'DataContract' and apiVersion 'v2.2.0'"),
        ({"bogus": 1}, "the contract is malformed at bogus: Extra inputs are not permitted"),
    ],
)
def test_a_malformed_contract_is_refused_naming_where(change, message):
    with pytest.raises(ColaError) as raised:
        rules_from_contract({**CONTRACT, **change})
    assert str(raised.value) == message


def test_an_unknown_operator_is_refused_naming_its_path():
    contract = {**CONTRACT, "schema": [{**CONTRACT["schema"][0], "quality": [{"metric": "rowCount", "mustBeAbove": 1}]}]}
    with pytest.raises(ColaError) as raised:
        rules_from_contract(contract)
    assert str(raised.value).startswith("schema[0].quality[0]: unknown operator 'mustBeAbove'; ODCS has mustBe, ")

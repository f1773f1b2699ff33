"""ODCS v3 contracts as rule blocks (``language/contracts.py``): the exact block a contract states,
what is refused and where, a contract read as a rules file, and a run with each rule's verdict."""

from __future__ import annotations

import copy
import datetime as dt
import json
import sys
from decimal import Decimal

import pytest

from cola_core import Cola
from cola_core.contracts import ContractRules, ContractWarning, rules_from_contract
from cola_core.errors import ColaError, ColaRuleError
from cola_core.language.files import read_rules_file

pytest.importorskip("open_data_contract_standard")

# Every mapping: property flags and types, logicalTypeOptions, an enum, a two-part primary key,
# library metrics at property and schema level with every operator and unit, sql with both
# placeholders, a custom Cola rule, and parts no rule checks.
CONTRACT = {
    "apiVersion": "v3.0.2", "kind": "DataContract", "id": "orders-contract", "version": "1.0.0", "status": "active",
    "schema": [{
        "name": "orders",
        "properties": [
            {"name": "order_id", "logicalType": "integer", "physicalType": "bigint", "required": True,
             "primaryKey": True, "primaryKeyPosition": 1},
            {"name": "email", "logicalType": "string",
             "logicalTypeOptions": {"format": "email", "minLength": 3, "maxLength": 80},
             "quality": [{"id": "email-nulls", "metric": "nullValues", "mustBeLessThan": 25, "unit": "percent",
                          "severity": "warning", "name": "few missing emails", "dimension": "completeness",
                          "description": "Emails may be missing for phone orders."}]},
            {"name": "status", "logicalType": "string", "enum": [{"value": "paid"}, {"value": "refunded"}, {"value": "open"}],
             "logicalTypeOptions": {"pattern": "^[a-z]+$"},
             "quality": [
                 {"id": "status-valid", "metric": "invalidValues", "arguments": {"validValues": ["paid", "refunded"]},
                  "mustBeLessOrEqualTo": 1},
                 {"metric": "missingValues", "arguments": {"missingValues": [None, ""]}, "mustBe": 0},
             ]},
            {"name": "amount", "logicalType": "number", "physicalType": "NUMBER(10,2)",
             "logicalTypeOptions": {"minimum": 0, "exclusiveMaximum": 10000, "multipleOf": 0.01},
             "quality": [{"type": "sql", "id": "amount-negative",
                          "query": "SELECT COUNT(*) FROM {object} WHERE {property} < 0", "mustBe": 0}]},
            {"name": "line_no", "physicalName": "line", "logicalType": "integer", "primaryKey": True,
             "primaryKeyPosition": 2, "unique": True,
             "logicalTypeOptions": {"exclusiveMinimum": 0}},
        ],
        "quality": [
            {"id": "orders-rows", "metric": "rowCount", "mustBeBetween": [1, 1000000]},
            {"id": "orders-not-tiny", "metric": "rowCount", "mustNotBeBetween": [1, 2], "severity": "error"},
            {"metric": "duplicateValues", "arguments": {"properties": ["order_id", "line"]}, "mustBe": 0,
             "unit": "rows"},
            {"metric": "rowCount", "mustBeGreaterThan": 3},
            {"metric": "rowCount", "mustBeGreaterOrEqualTo": 5},
            {"metric": "rowCount", "mustNotBe": 0},
            {"type": "sql", "id": "no-huge-orders", "query": "SELECT MAX(amount) FROM {object};\n",
             "mustBeLessThan": 10000},
            {"type": "custom", "engine": "cola", "id": "paid-has-email", "name": "paid orders have an email",
             "implementation": {"type": "not_null", "columns": ["email"], "where": "status = 'paid'"}},
            {"type": "custom", "engine": "soda", "implementation": "missing_count(email) = 0"},
            {"type": "text", "description": "Orders are loaded daily."},
        ],
    }],
}

EXPECTED = [
    {"type": "schema", "logical_types": {"order_id": "integer"}, "column_types": {"order_id": "bigint"},
     "name": "order_id is integer (bigint)"},
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "schema", "logical_types": {"email": "string"}, "name": "email is string"},
    {"type": "invalid_count", "column": "email", "valid_min_length": 3, "valid_max_length": 80, "must_be": 0},
    {"type": "invalid_count", "column": "email", "valid_format": "email", "must_be": 0},
    {"type": "missing_percent", "must_be": "< 25%", "column": "email", "id": "email-nulls",
     "name": "few missing emails", "description": "Emails may be missing for phone orders.",
     "dimension": "completeness", "severity": "warn"},
    {"type": "schema", "logical_types": {"status": "string"}, "name": "status is string"},
    {"type": "invalid_count", "column": "status", "valid_values": ["paid", "refunded", "open"], "must_be": 0},
    {"type": "regex", "column": "status", "pattern": "^[a-z]+$", "null_is_valid": True},
    {"type": "invalid_count", "must_be": "<= 1", "column": "status", "valid_values": ["paid", "refunded"],
     "id": "status-valid", "name": "status-valid"},
    {"type": "missing_count", "must_be": "= 0", "column": "status", "missing_values": [""]},
    {"type": "schema", "logical_types": {"amount": "number"}, "name": "amount is number"},
    {"type": "range", "column": "amount", "min": 0},
    {"type": "expression", "expression": "`amount` IS NULL OR `amount` < 10000", "name": "amount < 10000"},
    {"type": "sql", "query": "SELECT (SELECT COUNT(*) FROM _validation_df WHERE `amount` < 0) = 0",
     "id": "amount-negative", "name": "amount-negative"},
    {"type": "schema", "logical_types": {"line": "integer"}, "name": "line is integer"},
    {"type": "unique", "columns": ["line"]},
    {"type": "expression", "expression": "`line` IS NULL OR `line` > 0", "name": "line > 0"},
    {"type": "unique", "columns": ["order_id", "line"], "name": "primary key"},
    {"type": "row_count", "must_be": "between 1 and 1000000", "id": "orders-rows", "name": "orders-rows"},
    {"type": "row_count", "must_be": "not between 1 and 2", "id": "orders-not-tiny", "name": "orders-not-tiny",
     "severity": "fail"},
    {"type": "duplicate_count", "must_be": "= 0", "columns": ["order_id", "line"]},
    {"type": "row_count", "must_be": "> 3"},
    {"type": "row_count", "must_be": ">= 5"},
    {"type": "row_count", "must_be": "!= 0"},
    {"type": "sql", "query": "SELECT (SELECT MAX(amount) FROM _validation_df) < 10000", "id": "no-huge-orders",
     "name": "no-huge-orders"},
    {"type": "not_null", "columns": ["email"], "where": "status = 'paid'", "id": "paid-has-email",
     "name": "paid orders have an email"},
]

ORIGINS = (
    ["schema[0].properties[0]"] * 2 + ["schema[0].properties[1]"] * 3 + ["schema[0].properties[1].quality[0]"]
    + ["schema[0].properties[2]"] * 3 + ["schema[0].properties[2].quality[0]", "schema[0].properties[2].quality[1]"]
    + ["schema[0].properties[3]"] * 3 + ["schema[0].properties[3].quality[0]"]
    + ["schema[0].properties[4]"] * 3 + ["schema[0]"]
    + [f"schema[0].quality[{n}]" for n in range(8)]
)

UNMAPPED = (
    "no rule checks these parts of the contract: "
    "schema[0].properties[3].physicalType ('NUMBER(10,2)' is no Spark type); "
    "schema[0].properties[3].logicalTypeOptions.multipleOf; "
    "schema[0].quality[8] (custom, engine 'soda'); "
    "schema[0].quality[9] (text, no single mustBe* operator)"
)


def _read(contract=CONTRACT, **kwargs):
    with pytest.warns(ContractWarning) as warned:
        rules = rules_from_contract(contract, **kwargs)
    assert [str(warning.message) for warning in warned] == [UNMAPPED]
    return rules


def test_a_contract_becomes_the_rule_block_it_states_and_lists_what_it_cannot_map():
    rules = _read()
    assert isinstance(rules, ContractRules)
    assert list(rules) == EXPECTED
    assert list(rules.origins) == ORIGINS
    assert rules.contract_id == "orders-contract"
    checks = Cola().parse(rules)
    assert [check.description for check in checks][5] == "Emails may be missing for phone orders."


def test_strict_refuses_what_it_cannot_map():
    with pytest.raises(ColaError) as raised:
        rules_from_contract(CONTRACT, strict=True)
    assert str(raised.value) == UNMAPPED


def _changed(path, value):
    """CONTRACT with one value replaced; path is a list of keys and indexes."""
    contract = copy.deepcopy(CONTRACT)
    place = contract
    for step in path[:-1]:
        place = place[step]
    place[path[-1]] = value
    return contract


@pytest.mark.parametrize(
    ("contract", "message"),
    [
        (_changed(["apiVersion"], "v2.2.0"),
         "not an ODCS v3 contract: needs kind: DataContract and apiVersion v3.x.y, got kind 'DataContract' and "
         "apiVersion 'v2.2.0'"),
        (_changed(["bogus"], 1), "the contract is malformed at bogus: Extra inputs are not permitted"),
        (_changed(["schema", 0, "properties", 3, "quality", 0, "mustBeAbove"], 1),
         "schema[0].properties[3].quality[0]: unknown operator 'mustBeAbove'; ODCS has mustBe, mustNotBe, "
         "mustBeGreaterThan, mustBeGreaterOrEqualTo, mustBeLessThan, mustBeLessOrEqualTo, mustBeBetween, "
         "mustNotBeBetween"),
        (_changed(["schema", 0, "quality", 0, "mustBeBetween"], [1]),
         "the contract is malformed at schema[0].quality[0].mustBeBetween: List should have at least 2 items after "
         "validation, not 1"),
        (_changed(["schema", 0, "quality", 3, "mustBeGreaterThan"], "3; DROP TABLE x"),
         "the contract is malformed at schema[0].quality[3].mustBeGreaterThan: Input should be a valid number, got "
         "'3; DROP TABLE x'; write a number, unquoted"),
        (_changed(["schema", 0, "properties", 1, "required"], "maybe"),
         "the contract is malformed at schema[0].properties[1].required: Input should be a valid boolean, got "
         "'maybe'; write true or false, unquoted"),
        (_changed(["schema", 0, "quality", 7, "implementation"], "not_null(email)"),
         "schema[0].quality[7].implementation: a custom entry for Cola holds one rule object with a 'type'"),
    ],
)
def test_a_malformed_contract_is_refused_naming_where(contract, message):
    with pytest.raises(ColaError) as raised:
        rules_from_contract(contract)
    assert str(raised.value) == message


def test_a_contract_of_several_schema_objects_is_read_by_name():
    second = {"name": "customers", "properties": [{"name": "customer_id", "required": True}]}
    contract = {**CONTRACT, "schema": [*CONTRACT["schema"], second]}
    with pytest.raises(ColaError) as raised:
        rules_from_contract(contract)
    assert str(raised.value) == (
        "the contract has 2 schema objects ('orders', 'customers'); choose one with schema_name (or, for a rules "
        "file path, write it after '#': contract.yaml#orders)"
    )
    rules = rules_from_contract(contract, "customers")
    assert (list(rules), rules.origins) == ([{"type": "not_null", "columns": ["customer_id"]}], ("schema[1].properties[0]",))
    with pytest.raises(ColaError, match=r"^the contract has no schema object named 'x'; it has 'orders', 'customers'$"):
        rules_from_contract(contract, "x")


def test_a_contract_file_is_read_wherever_a_rules_file_is(tmp_path):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "orders.odcs.yaml"
    path.write_text(yaml.safe_dump(CONTRACT, sort_keys=False))
    with pytest.warns(ContractWarning):
        from_path = rules_from_contract(path)
    with pytest.warns(ContractWarning):
        from_rules_file = read_rules_file(str(path))
    assert list(from_path) == list(from_rules_file) == EXPECTED
    assert from_rules_file.origins == tuple(ORIGINS)
    # A contract of several objects names one after '#'; JSON is read as well.
    several = {**CONTRACT, "schema": [*CONTRACT["schema"], {"name": "customers", "properties": [{"name": "c"}]}]}
    (tmp_path / "both.json").write_text(json.dumps(several))
    assert list(read_rules_file(str(tmp_path / "both.json#customers"))) == []
    with pytest.raises(ColaError, match=r"^cannot read rules file '.*/orders.json#x': \[Errno 2\] No such file"):
        read_rules_file(str(tmp_path / "orders.json#x"))
    (tmp_path / "rules.json").write_text('[{"type": "row_count", "min": 1}]')
    with pytest.raises(ColaError, match=r"^rules file '.*/rules.json' is no contract: '#x' names a schema object "
                                        r"of a contract$"):
        read_rules_file(str(tmp_path / "rules.json#x"))
    (tmp_path / "old.json").write_text(json.dumps({**CONTRACT, "apiVersion": "v2.2.2"}))
    with pytest.raises(ColaError, match=r"^not an ODCS v3 contract: .* apiVersion 'v2.2.2'$"):
        read_rules_file(str(tmp_path / "old.json"))


ROWS = [
    # order_id, line, email, status, amount
    (1, 1, "ann@example.com", "paid", Decimal("10.00")),
    (1, 2, "bob@example.com", "refunded", Decimal("20.00")),
    (2, 1, None, "open", Decimal("10000.00")),
    (3, 1, "bad", "PAID", Decimal("-5.00")),
    (3, 1, "cy@example.com", "paid", Decimal("1.00")),
]
SCHEMA = "order_id bigint, line int, email string, status string, amount decimal(10,2)"


def test_a_run_over_the_contract_gives_each_rule_its_verdict(spark):
    df = spark.createDataFrame(ROWS, SCHEMA)
    results = Cola().run(df, _read())
    verdicts = [(result.code, result.severity, result.failed_count) for result in results]
    assert verdicts == [
        ("schema", "pass", 0),  # bigint: an integer, and the physical type
        ("not_null(order_id)", "pass", 0),
        ("schema", "pass", 0),
        ("invalid_count(email)", "pass", 0),  # "bad" has 3 characters
        ("invalid_count(email)", "fail", 1),  # "bad" is no email
        ("missing_percent(email)", "pass", 0),  # 1 of 5 missing: 20% < 25%
        ("schema", "pass", 0),
        ("invalid_count(status)", "fail", 1),  # PAID is not in the enum
        ("regex(status,^[a-z]+$)", "fail", 1),
        ("invalid_count(status)", "fail", 2),  # open and PAID: 2 > 1
        ("missing_count(status)", "pass", 0),
        ("schema", "pass", 0),
        ("range(amount,0,)", "fail", 1),  # -5.00
        ("expression(`amount` IS NULL OR `amount` < 10000)", "fail", 1),  # 10000.00 is not below
        ("sql", "fail", 1),  # one negative amount
        ("schema", "pass", 0),
        ("unique(line)", "fail", 3),  # 5 rows, 2 distinct
        ("expression(`line` IS NULL OR `line` > 0)", "pass", 0),
        ("unique(order_id,line)", "fail", 1),  # (3, 1) twice
        ("row_count", "pass", 0),
        ("row_count#2", "pass", 0),
        ("duplicate_count(order_id,line)", "fail", 1),
        ("row_count#3", "pass", 0),
        ("row_count#4", "pass", 0),
        ("row_count#5", "pass", 0),
        ("sql", "fail", 1),  # MAX(amount) is 10000.00
        ("not_null(email)", "pass", 0),
    ]
    assert [result.rule_id for result in results if ":" not in result.rule_id] == [
        "email-nulls", "status-valid", "amount-negative", "orders-rows", "orders-not-tiny", "no-huge-orders",
        "paid-has-email",
    ]
    assert [result.check_name for result in results if result.check_name] == [
        "order_id is integer (bigint)", "email is string", "few missing emails", "status is string", "status-valid",
        "amount is number", "amount < 10000", "amount-negative", "line is integer", "line > 0", "primary key",
        "orders-rows", "orders-not-tiny", "no-huge-orders", "paid orders have an email",
    ]


def test_a_property_missing_from_the_data_is_a_rule_error_naming_its_place_in_the_contract(spark):
    df = spark.createDataFrame([(r[0], r[2], r[3], r[4]) for r in ROWS], "order_id bigint, email string, "
                               "status string, amount decimal(10,2)")
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(df, _read())
    assert str(raised.value) == (
        "rules[15] (schema) from schema[0].properties[4]: column 'line' does not exist; the DataFrame has "
        "order_id, email, status, amount"
    )


def test_a_rule_error_in_a_contract_names_its_place_in_the_contract():
    contract = _changed(["schema", 0, "properties", 2, "logicalTypeOptions", "pattern"], "(unclosed")
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse(_read(contract))
    assert str(raised.value).startswith("rules[8] (regex) from schema[0].properties[2]: ")


def test_results_and_history_keep_the_contracts_quality_ids(spark, tmp_path):
    from cola_core.history.store import read_history

    df = spark.createDataFrame(ROWS, SCHEMA)
    history = str(tmp_path / "history")
    results = Cola().run(df, _read(), history=history, dataset="orders", data_date=dt.date(2026, 12, 1))
    shown = results[5].to_dict()
    assert (shown["rule_id"], shown["check_name"], shown["severity"]) == ("email-nulls", "few missing emails", "pass")
    stored = {row["rule_id"]: row["severity"] for row in read_history(spark, history).collect()}
    contract_ids = {"email-nulls", "status-valid", "amount-negative", "orders-rows", "orders-not-tiny",
                    "no-huge-orders", "paid-has-email"}
    assert {rule_id: stored[rule_id] for rule_id in contract_ids} == {
        "email-nulls": "pass", "status-valid": "fail", "amount-negative": "fail", "orders-rows": "pass",
        "orders-not-tiny": "pass", "no-huge-orders": "fail", "paid-has-email": "pass"}
    assert len(stored) == len(EXPECTED)


def test_without_the_contracts_extra_the_error_says_what_to_install(monkeypatch):
    # The package is installed here; a None entry in sys.modules makes its import fail as if it
    # were not (the one failure this test cannot cause for real).
    monkeypatch.setitem(sys.modules, "open_data_contract_standard.model", None)
    with pytest.raises(ColaError) as raised:
        rules_from_contract(CONTRACT)
    assert str(raised.value) == (
        "reading an ODCS contract needs the open-data-contract-standard package: "
        "pip install 'airflow-provider-cola[contracts]'"
    )

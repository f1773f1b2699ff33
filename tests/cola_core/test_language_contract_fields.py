"""Contracts read as strictly as ODCS defines them (``language/contract_fields.py``): booleans are
booleans, arguments have ODCS's types, unknown keys and values are refused or listed with the
fix, bounds are finite, and a contract gets the alias and size bounds of a rules file."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
import warnings

import pytest

from cola_core import Cola
from cola_core.cli.main import main
from cola_core.contracts import ContractError, ContractWarning, rules_from_contract
from cola_core.errors import ColaRuleError

pytest.importorskip("open_data_contract_standard")
yaml = pytest.importorskip("yaml")

BASE = {
    "apiVersion": "v3.1.0", "kind": "DataContract", "id": "c", "version": "1", "status": "active",
    "schema": [{"name": "t", "properties": [
        {"name": "id", "logicalType": "integer", "required": True},
        {"name": "unit", "logicalType": "string",
         "quality": [{"metric": "invalidValues", "arguments": {"validValues": ["kg", "lb"]}, "mustBe": 0}]},
    ]}],
}


def _with(path, value, contract=BASE):
    """BASE with one value set (or a key removed, for value ...); path is keys and indexes."""
    contract = copy.deepcopy(contract)
    place = contract
    for step in path[:-1]:
        place = place[step]
    if value is ...:
        del place[path[-1]]
    else:
        place[path[-1]] = value
    return contract


def _refused(contract):
    with pytest.raises(ContractError) as raised:
        rules_from_contract(contract)
    assert isinstance(raised.value, ColaRuleError)
    return str(raised.value)


def _yaml_file(tmp_path, properties):
    """A contract file of one schema object ``t``, whose ``properties`` are the YAML given."""
    path = tmp_path / "contract.odcs.yaml"
    header = 'apiVersion: v3.1.0\nkind: DataContract\nid: c\nversion: "1"\nstatus: active\nschema:\n  - name: t\n'
    path.write_text(header + textwrap.indent(textwrap.dedent(properties), "    "))
    return path


PROPERTY_0 = "schema[0].properties[0]"
QUALITY = "schema[0].properties[1].quality[0]"


@pytest.mark.parametrize("written", ["no", "false", "off", "yes", "0"])
def test_a_boolean_written_as_text_is_refused_not_read_as_true(written):
    # The lax model read "no" as false and the mapper the text as true: a not_null rule.
    assert _refused(_with(["schema", 0, "properties", 0, "required"], written)) == (
        f"the contract is malformed at {PROPERTY_0}.required: Input should be a valid boolean, got {written!r}; "
        "write true or false, unquoted"
    )


def test_a_yaml_no_is_text_to_a_contract_and_refused(tmp_path):
    path = _yaml_file(tmp_path, """\
        properties:
          - name: id
            required: no
    """)
    with pytest.raises(ContractError, match=r"^the contract is malformed at schema\[0\]\.properties\[0\]\.required: "
                                            r"Input should be a valid boolean, got 'no'; write true or false, "
                                            r"unquoted$"):
        rules_from_contract(path)
    assert list(rules_from_contract(_with(["schema", 0, "properties", 0, "required"], False))) == [
        {"type": "schema", "logical_types": {"id": "integer"}, "name": "id is integer"},
        {"type": "schema", "logical_types": {"unit": "string"}, "name": "unit is string"},
        {"type": "invalid_count", "must_be": "= 0", "column": "unit", "valid_values": ["kg", "lb"]},
    ]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["arguments", "validValues"], "abc", f"{QUALITY}.arguments.validValues: must be a list, got 'abc'"),
        (["arguments"], {"missingValues": "NA"}, f"{QUALITY}.arguments.missingValues: must be a list, got 'NA'"),
        (["arguments"], {"pattern": ["^a"]}, f"{QUALITY}.arguments.pattern: must be a text, got ['^a']"),
        (["arguments"], {"properties": ["id", 3]}, f"{QUALITY}.arguments.properties[1]: must be a text, got 3"),
    ],
)
def test_arguments_have_the_types_odcs_gives_them(path, value, message):
    # validValues: abc was iterated character by character: ['a', 'b', 'c'].
    assert _refused(_with(["schema", 0, "properties", 1, "quality", 0, *path], value)) == message


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"minLength": "3"}, "logicalTypeOptions.minLength: must be a whole number, got '3'"),
        ({"maxLength": -1}, "logicalTypeOptions.maxLength: must be 0 or more, got -1"),
        ({"pattern": 5}, "logicalTypeOptions.pattern: must be a text, got 5"),
        ({"minimum": 0}, "logicalTypeOptions: 'minimum' is no option of logicalType 'string'; it has minLength, "
                         "maxLength, pattern, format"),
        ({"minLenght": 3}, "logicalTypeOptions: 'minLenght' is no option of logicalType 'string' (did you mean "
                           "'minLength'?); it has minLength, maxLength, pattern, format"),
    ],
)
def test_logical_type_options_have_the_types_and_names_odcs_gives_them(options, message):
    contract = _with(["schema", 0, "properties", 1, "logicalTypeOptions"], options)
    assert _refused(contract) == f"schema[0].properties[1].{message}"


def test_a_property_without_a_name_and_a_key_position_as_text_are_refused_naming_the_place():
    # Were a raw KeyError and a raw TypeError while sorting the key.
    assert _refused(_with(["schema", 0, "properties", 1, "name"], ...)) == (
        "schema[0].properties[1]: a property needs a name (ODCS requires it); write name: <its name>"
    )
    keyed = _with(["schema", 0, "properties", 0, "primaryKey"], True)
    keyed["schema"][0]["properties"][0]["primaryKeyPosition"] = 1
    keyed["schema"][0]["properties"][1].update(primaryKey=True, primaryKeyPosition="2")
    assert _refused(keyed) == (
        "the contract is malformed at schema[0].properties[1].primaryKeyPosition: Input should be a valid integer, "
        "got '2'; write a whole number, unquoted"
    )
    keyed["schema"][0]["properties"][1]["primaryKeyPosition"] = 2
    assert list(rules_from_contract(keyed))[-1] == {"type": "unique", "columns": ["id", "unit"], "name": "primary key"}


@pytest.mark.parametrize(
    ("yaml_value", "place"),
    [
        ("{exclusiveMinimum: .inf}", "logicalTypeOptions.exclusiveMinimum"),
        ("{exclusiveMaximum: -.inf}", "logicalTypeOptions.exclusiveMaximum"),
        ("{minimum: .nan}", "logicalTypeOptions.minimum"),
    ],
)
def test_a_bound_that_is_not_finite_is_refused_not_written_into_sql(tmp_path, yaml_value, place):
    # `x > inf` compared x with a column named inf.
    path = _yaml_file(tmp_path, f"""\
        properties:
          - name: x
            logicalType: number
            logicalTypeOptions: {yaml_value}
    """)
    value = yaml.safe_load(yaml_value)[place.rsplit(".", 1)[1]]
    with pytest.raises(ContractError) as raised:
        rules_from_contract(path)
    assert str(raised.value) == (
        f"the contract is malformed: 'schema[0].properties[0].{place}' is {value}; a number in a rule must be finite"
    )
    with pytest.raises(ContractError, match=r"'schema\[0\]\.quality\[0\]\.mustBeLessThan' is inf; a number"):
        rules_from_contract({**BASE, "schema": [{"name": "t", "quality": [
            {"metric": "rowCount", "mustBeLessThan": float("inf")}]}]})


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["schema", 0, "properties", 0, "requird"], True,
         f"{PROPERTY_0}: unknown key 'requird' (did you mean 'required'?); a property in ODCS v3 has no such key"),
        (["schema", 0, "properties", 0, "Unique"], True,
         f"{PROPERTY_0}: unknown key 'Unique' (did you mean 'unique'?); a property in ODCS v3 has no such key"),
        (["schema", 0, "qualty"], [],
         "schema[0]: unknown key 'qualty' (did you mean 'quality'?); a schema object in ODCS v3 has no such key"),
        (["schema", 0, "properties", 1, "quality", 0, "argument"], {},
         f"{QUALITY}: unknown key 'argument' (did you mean 'arguments'?); a quality entry in ODCS v3 has no such key"),
        (["schema", 0, "properties", 1, "enum"], [{"value": "kg", "lable": "kilogram"}],
         "schema[0].properties[1].enum[0]: unknown key 'lable' (did you mean 'label'?); an enum value in ODCS v3 has "
         "no such key"),
        (["schema", 0, "properties", 0, "logicalType"], "Integer",
         f"{PROPERTY_0}.logicalType: 'Integer' is no ODCS logical type (did you mean 'integer'?); it is one of string, "
         "date, timestamp, time, integer, number, object, array, vector, boolean, map"),
        (["schema", 0, "properties", 1, "quality", 0, "metric"], "invalidValue",
         f"{QUALITY}.metric: 'invalidValue' is no ODCS metric (did you mean 'invalidValues'?); it is one of "
         "nullValues, missingValues, invalidValues, duplicateValues, rowCount"),
        (["schema", 0, "properties", 1, "quality", 0, "type"], "Library",
         f"{QUALITY}.type: 'Library' is no ODCS type (did you mean 'library'?); it is one of library, sql, custom, "
         "text"),
        (["schema", 0, "properties", 1, "quality", 0, "dimension"], "validity",
         f"{QUALITY}.dimension: 'validity' is no ODCS dimension; it is one of accuracy, completeness, conformity, "
         "consistency, coverage, timeliness, uniqueness"),
        (["schema", 0, "properties", 0, "properties"], [{"name": "n", "requird": True}],
         f"{PROPERTY_0}.properties[0]: unknown key 'requird' (did you mean 'required'?); a property in ODCS v3 has "
         "no such key"),
        (["tenent"], "x", "the contract is malformed at tenent: Extra inputs are not permitted (did you mean 'tenant'?)"),
    ],
)
def test_an_unknown_key_or_value_odcs_refuses_is_refused_with_the_fix(path, value, message):
    # `requird: true` was dropped without a word: no rule, no warning.
    assert _refused(_with(path, value)) == message


def test_what_odcs_leaves_open_is_listed_in_the_warning_with_the_fix():
    contract = _with(["schema", 0, "properties", 1, "quality", 0, "unit"], "Percent")
    entries = contract["schema"][0]["properties"][1]["quality"]
    entries.append({"metric": "nullValues", "arguments": {"validValues": ["x"], "missingValue": ["NA"]}, "mustBe": 0})
    entries.append({"metric": "missingValues", "arguments": {"missingValue": ["NA"]}, "mustBe": 0, "unit": "rows"})
    contract["schema"][0]["properties"].append(
        {"name": "flag", "logicalType": "boolean", "logicalTypeOptions": {"minLenght": 1}})
    with pytest.warns(ContractWarning) as warned:
        rules = rules_from_contract(contract)
    assert [str(warning.message) for warning in warned] == [
        "no rule checks these parts of the contract: "
        # Was read as rows: a count where the contract means a share.
        f"{QUALITY}.unit ('Percent' is no unit Cola reads: rows or percent (did you mean 'percent'?)); "
        "schema[0].properties[1].quality[1].arguments.validValues (nullValues reads no arguments); "
        "schema[0].properties[1].quality[1].arguments.missingValue (nullValues reads no arguments (did you mean "
        "'missingValues'?)); "
        "schema[0].properties[1].quality[2].arguments.missingValue (missingValues reads missingValues (did you mean "
        "'missingValues'?)); "
        "schema[0].properties[2].logicalTypeOptions.minLenght (no ODCS option (did you mean 'minLength'?))"
    ]
    # The entry of unit 'Percent' gives no rule; the others do.
    assert [rule["type"] for rule in rules] == ["schema", "not_null", "schema", "missing_count", "missing_count",
                                                "schema"]
    # A v3.0 quality entry may hold keys of its own: listed, not refused.
    old = _with(["schema", 0, "properties", 1, "quality", 0, "severty"], "high", {**BASE, "apiVersion": "v3.0.2"})
    with pytest.warns(ContractWarning, match=r": schema\[0\]\.properties\[1\]\.quality\[0\]\.severty \(no ODCS "
                                             r"quality key \(did you mean 'severity'\?\)\)$"):
        rules_from_contract(old)


# Every key ODCS v3.0.0 to v3.2.0 gives each level the reader looks at, with a value of its type.
EVERY_FIELD = {
    "apiVersion": "v3.2.0", "kind": "DataContract", "id": "all", "version": "1.0.0", "status": "active",
    "name": "all", "tenant": "t", "domain": "d", "dataProduct": "p", "tags": ["a"], "slaDefaultElement": "x",
    "contractCreatedTs": "2026-01-01T00:00:00Z", "description": {"purpose": "p"},
    "schema": [{
        "id": "orders_obj", "name": "orders", "physicalName": "orders_v1", "physicalType": "table",
        "logicalType": "object", "businessName": "Orders", "description": "d", "dataGranularityDescription": "g",
        "deprecated": False, "tags": ["t"], "synonyms": [{"synonym": "purchases"}], "authoritativeDefinitions": [],
        "customProperties": [{"property": "p", "value": 1}], "relationships": [], "context": "c",
        "properties": [
            {"id": "a_id", "name": "a", "physicalName": "a", "physicalType": "bigint", "logicalType": "integer",
             "logicalTypeOptions": {"minimum": 0, "maximum": 9, "exclusiveMinimum": -1, "exclusiveMaximum": 10,
                                    "multipleOf": 1, "format": "i64"},
             "required": True, "unique": True, "primaryKey": True, "primaryKeyPosition": 1, "partitioned": False,
             "partitionKeyPosition": -1, "classification": "public", "encryptedName": "a_enc",
             "criticalDataElement": False, "semanticType": "column", "transformSourceObjects": ["src"],
             "transformLogic": "x", "transformDescription": "x", "examples": [1], "businessName": "A",
             "description": "d", "deprecated": False, "tags": [], "synonyms": [], "authoritativeDefinitions": [],
             "customProperties": [], "relationships": [],
             "quality": [{"id": "q", "name": "n", "description": "d", "dimension": "accuracy", "severity": "error",
                          "type": "library", "metric": "nullValues", "unit": "rows", "mustBe": 0, "method": "m",
                          "schedule": "0 0 * * *", "scheduler": "cron", "businessImpact": "operational",
                          "tags": [], "authoritativeDefinitions": [], "customProperties": []}]},
            {"name": "s", "logicalType": "string", "logicalTypeOptions": {"minLength": 0, "maxLength": 3,
                                                                          "pattern": "^[a-z]*$", "format": "email"},
             "enum": [{"id": "e", "value": "abc", "label": "A", "description": "d", "tags": [],
                       "customProperties": [], "authoritativeDefinitions": []}]},
            {"name": "d", "logicalType": "date", "logicalTypeOptions": {"minimum": "2020-01-01", "format": "yyyy"}},
            {"name": "ts", "logicalType": "timestamp", "logicalTypeOptions": {"timezone": True,
                                                                             "defaultTimezone": "UTC"}},
            {"name": "v", "logicalType": "vector", "logicalTypeOptions": {"dimensions": 3, "elementType": "float",
                                                                          "normalized": True}},
            {"name": "m", "logicalType": "map", "map": {"key": {"logicalType": "string"}}},
            {"name": "arr", "logicalType": "array", "logicalTypeOptions": {"minItems": 1, "uniqueItems": True},
             "items": {"logicalType": "string"}},
            {"name": "obj", "logicalType": "object", "logicalTypeOptions": {"required": ["x"]},
             "properties": [{"name": "x", "logicalType": "string"}]},
        ],
        "quality": [
            {"type": "sql", "query": "SELECT COUNT(*) FROM {object}", "mustBeGreaterThan": 0},
            {"type": "custom", "engine": "soda", "implementation": "row_count > 0"},
            {"type": "text", "description": "free text"},
            {"metric": "duplicateValues", "arguments": {"properties": ["a", "s"]}, "mustBe": 0, "unit": "percent"},
            {"rule": "rowCount", "mustBeBetween": [1, 9]},
        ],
    }],
}


def test_a_contract_with_every_odcs_field_is_read():
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", ContractWarning)
        rules = rules_from_contract(EVERY_FIELD)
    # Every rule parses: a map or vector property, or a date's format, is listed, never a rule Cola refuses.
    assert len(Cola().parse(rules)) == len(rules) == 21
    assert [str(warning.message) for warning in warned] == [
        "no rule checks these parts of the contract: "
        "schema[0].properties[0].logicalTypeOptions.format ('i64' says how a value of type integer is written); "
        "schema[0].properties[0].logicalTypeOptions.multipleOf; "
        "schema[0].properties[2].logicalTypeOptions.format ('yyyy' says how a value of type date is written); "
        "schema[0].properties[3].logicalTypeOptions.timezone; "
        "schema[0].properties[3].logicalTypeOptions.defaultTimezone; "
        "schema[0].properties[4].logicalType ('vector': no rule checks it); "
        "schema[0].properties[4].logicalTypeOptions.dimensions; "
        "schema[0].properties[4].logicalTypeOptions.elementType; "
        "schema[0].properties[4].logicalTypeOptions.normalized; "
        "schema[0].properties[5].logicalType ('map': no rule checks it); "
        "schema[0].properties[6].logicalTypeOptions.minItems; "
        "schema[0].properties[6].logicalTypeOptions.uniqueItems; "
        "schema[0].properties[6].items (nested properties); "
        "schema[0].properties[7].logicalTypeOptions.required; "
        "schema[0].properties[7].properties (nested properties); "
        "schema[0].quality[1] (custom, engine 'soda'); "
        "schema[0].quality[2] (text, no single mustBe* operator)"
    ]


# 675 bytes: eight levels of nine aliases, 43 million properties once the model has copied each one.
BOMB = (
    'apiVersion: v3.1.0\nkind: DataContract\nid: x\nversion: "1"\nstatus: active\nschema:\n  - name: t\n'
    "    properties:\n      - &a {name: a, properties: [" + ",".join(["{name: l}"] * 9) + "]}\n"
    + "".join(f"      - &{level} {{name: {level}, properties: [{','.join([f'*{before}'] * 9)}]}}\n"
              for before, level in zip("abcdefg", "bcdefgh", strict=True))
)


def test_a_contract_of_yaml_aliases_is_bounded_before_the_model_reads_it(tmp_path):
    path = tmp_path / "bomb.odcs.yaml"
    path.write_text(BOMB)
    assert len(BOMB.encode()) == 675
    # In a child process, so that the reader of today, which expands the aliases for minutes, fails
    # the test instead of hanging it.
    script = (
        "import sys\nfrom cola_core.contracts import ContractError, rules_from_contract\n"
        f"try:\n    rules_from_contract({str(path)!r})\nexcept ContractError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout == (
        "the contract is malformed: the block holds more than 1000000 values (lists, objects and scalars, counted "
        "each time an alias repeats them); split it into smaller blocks\n"
    )


@pytest.mark.parametrize(
    "contract",
    [
        _with(["schema", 0, "properties", 0, "required"], "no"),
        _with(["schema", 0, "properties", 1, "name"], ...),
        _with(["schema", 0, "properties", 1, "quality", 0, "arguments", "validValues"], "abc"),
        _with(["schema", 0, "properties", 0, "requird"], True),
        _with(["schema", 0, "properties", 0, "logicalTypeOptions"], {"exclusiveMinimum": "10"}),
        _with(["schema", 0, "properties", 0, "primaryKeyPosition"], "2"),
    ],
)
def test_the_command_line_refuses_a_malformed_contract_with_exit_2_and_one_line(tmp_path, capsys, contract):
    path = tmp_path / "contract.odcs.json"
    path.write_text(json.dumps(contract))
    with pytest.raises(ContractError) as raised:
        rules_from_contract(contract)
    assert main(["check", "--rules", str(path), "--table", "never_read"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"cola: error: {raised.value}\n"
    assert "Traceback" not in captured.out + captured.err

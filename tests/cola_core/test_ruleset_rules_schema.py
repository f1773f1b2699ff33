"""The rules JSON Schema: generated from the registry, committed, and it agrees with the parser
on every rules example of the documentation."""

from __future__ import annotations

import ast
import contextlib
import json
import re
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest
import yaml

from cola_core import Cola
from cola_core.checks import BaseCheck
from cola_core.cli.main import main
from cola_core.errors import ColaRuleError
from cola_core.language.params import STRING, WHOLE, Param
from cola_core.language.text import LINE_PATTERN

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "schema" / "rules.schema.json"
_FENCE = re.compile(r"^ *```(json|yaml|python)\s*$(.*?)^ *```\s*$", re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = Cola().rules_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors_of(validator: jsonschema.Draft202012Validator, block: Any) -> list[tuple[list[Any], str]]:
    found = sorted(validator.iter_errors(block), key=lambda error: (list(error.absolute_path), error.message))
    return [(list(error.absolute_path), error.message) for error in found]


def test_the_committed_schema_is_the_generated_one():
    assert COMMITTED.read_text(encoding="utf-8") == json.dumps(Cola().rules_schema(), indent=2) + "\n", (
        "schema/rules.schema.json is stale: run `cola schema --out schema/rules.schema.json`"
    )


def test_cola_schema_prints_it_and_writes_it(tmp_path, capsys):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == Cola().rules_schema()
    out = tmp_path / "rules.schema.json"
    assert main(["schema", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"cola: wrote the rules schema to {out}\n"
    assert out.read_text(encoding="utf-8") == COMMITTED.read_text(encoding="utf-8")


def test_a_misspelt_parameter_a_wrong_type_and_an_unknown_type_are_refused(validator):
    assert errors_of(validator, [{"type": "not_null", "column": ["id"]}]) == [
        ([0], "'columns' is a required property"),
        ([0], "Additional properties are not allowed ('column' was unexpected)"),
    ]
    assert errors_of(validator, {"rules": [{"type": "not_null", "columns": "id"}]}) == [
        (["rules", 0, "columns"], "'id' is not of type 'array'"),
    ]
    (unknown,) = errors_of(validator, [{"type": "not_nul", "columns": ["id"]}])
    assert unknown[0] == [0, "type"] and unknown[1].startswith("'not_nul' is not one of ['avg', ")
    assert errors_of(validator, [{"type": "range", "column": "a", "min": 0, "severity": "error"}]) == [
        ([0, "severity"], "'error' is not one of ['fail', 'warn', None]"),
    ]
    assert errors_of(validator, {"rule": []}) == [
        ([], "'rules' is a required property"),
        ([], "Additional properties are not allowed ('rule' was unexpected)"),
    ]


def test_an_option_left_empty_is_not_given_for_both_the_parser_and_the_schema(validator):
    # YAML's ``code:`` with nothing after it reads as None: the parser takes it as not given.
    emptied = [{"type": "avg", "column": "id", "must_be": "> 0", "code": None, "name": None, "dimension": None,
                "severity": None}]
    assert [(check.code, check.severity_level) for check in Cola().parse(emptied)] == [("avg(id)", "fail")]
    assert errors_of(validator, emptied) == []
    # A condition is not optional text: an empty one is refused by both.
    with pytest.raises(ColaRuleError, match="'where' must be SQL text, got NoneType"):
        Cola().parse([{**emptied[0], "where": None}])
    assert errors_of(validator, [{**emptied[0], "where": None}]) == [([0, "where"], "None is not of type 'string'")]
    assert errors_of(validator, [{**emptied[0], "code": " "}]) == [([0, "code"], f"' ' does not match {LINE_PATTERN!r}")]


def test_targets_carry_the_parameters_and_an_id_belongs_in_each(validator):
    targeted = {"type": "missing_percent", "must_be": "< 1%", "targets": [{"column": "a"}, {"column": "b", "id": "b"}]}
    assert errors_of(validator, [targeted]) == []
    assert [path for path, _ in errors_of(validator, [{**targeted, "id": "x"}])] == [[0]]
    assert errors_of(validator, [{**targeted, "targets": [{"column": "a", "colum": "b"}]}]) == [
        ([0, "targets", 0], "Additional properties are not allowed ('colum' was unexpected)"),
    ]


class TopN(BaseCheck):
    """The column's N most frequent values are known."""

    params_spec: ClassVar = {
        "column": Param(STRING, required=True, description="The column"),
        "n": Param(WHOLE, description="How many values"),
    }


def test_a_custom_check_of_the_engine_is_in_its_schema():
    cola = Cola()
    cola.register("top_n", TopN)
    top_n = cola.rules_schema()["$defs"]["top_n"]
    assert top_n["description"] == "The column's N most frequent values are known."
    assert top_n["properties"]["n"] == {"type": "integer", "minimum": 0, "description": "How many values"}
    assert top_n["else"] == {"required": ["column"]}
    assert "top_n" not in Cola().rules_schema()["$defs"]


def _documented_blocks() -> list[tuple[str, Any]]:
    """Every example of the documentation that holds a rule or a rule block: JSON (which may
    show several values one after another), YAML, and the literals of Python examples."""
    blocks = []
    for page in sorted((REPO / "docs").rglob("*.md")):
        for number, match in enumerate(_FENCE.finditer(page.read_text(encoding="utf-8"))):
            for shown, loaded in enumerate(_values(match[1], match[2])):
                block = [loaded] if isinstance(loaded, dict) and "type" in loaded else loaded  # one rule alone
                rules = block.get("rules") if isinstance(block, dict) else block
                if isinstance(rules, list) and rules and all(isinstance(rule, dict) and "type" in rule for rule in rules):
                    blocks.append((f"{page.relative_to(REPO)}#{number}.{shown}", block))
    return blocks


def _values(kind: str, text: str) -> list[Any]:
    if kind == "python":  # the literal lists and dicts of the example
        try:
            nodes = ast.walk(ast.parse(textwrap.dedent(text)))
        except SyntaxError:
            return []
        found = []
        for node in nodes:
            if isinstance(node, (ast.List, ast.Dict)):
                with contextlib.suppress(ValueError, TypeError, SyntaxError):
                    found.append(ast.literal_eval(node))
        return found
    if kind == "yaml":
        try:
            return [yaml.safe_load(text)]
        except yaml.YAMLError:
            return []
    decoder, values, at = json.JSONDecoder(), [], 0
    while (at := len(text) - len(text[at:].lstrip())) < len(text):
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return values
        values.append(value)
    return values


DOCUMENTED = _documented_blocks()


def test_the_documentation_has_rules_examples_to_check():
    # 111 when written (37 JSON and YAML examples, the rest Python literals); the finder must keep finding them.
    assert len(DOCUMENTED) >= 100


@pytest.mark.parametrize(("where", "block"), DOCUMENTED, ids=[where for where, _ in DOCUMENTED])
def test_every_documented_block_the_parser_accepts_the_schema_accepts(validator, where, block):
    try:
        # External access on: the schema describes every parameter, 'output' included.
        Cola(allow_external_access=True).parse(block["rules"] if isinstance(block, dict) else block)
    except ColaRuleError:
        pytest.skip("a custom check's example, or one of a refused rule")
    assert errors_of(validator, block) == []


def _rule_with(rule_type: str, key: str, value: Any) -> dict[str, Any]:
    """A rule of ``rule_type`` the parser accepts, with ``key`` set to ``value``."""
    accepted = {
        "reconcile": {"type": "reconcile", "aggregate": "sum", "column": "c", "reference": {"table": "t"},
                      "must_be": "< 1"},
    }.get(rule_type, {"type": rule_type, "column": "c", "valid_format": "email"})
    spec = Cola()._registry[rule_type].params_spec or {}
    if "must_be" in spec and spec["must_be"].required:
        accepted.setdefault("must_be", "= 0")
    return {**accepted, key: value}


def test_every_declared_choice_is_an_enum_and_the_parser_refuses_any_other_value(validator):
    schema = Cola().rules_schema()
    declared = [
        (name, key, param.choices)
        for name, cls in sorted(Cola()._registry.items()) if cls.params_spec
        for key, param in cls.params_spec.items() if param.choices is not None
    ]
    assert {(key, choices[:2]) for _, key, choices in declared} == {
        ("valid_format", ("email", "uuid")), ("aggregate", ("count", "sum")), ("difference", ("relative", "absolute")),
    }
    for name, key, choices in declared:
        assert schema["$defs"][name]["properties"][key]["enum"] == list(choices)
        for choice in choices:
            Cola(allow_external_access=True).parse([_rule_with(name, key, choice)])
        with pytest.raises(ColaRuleError):
            Cola(allow_external_access=True).parse([_rule_with(name, key, "no-such-choice")])
        assert [path for path, _ in errors_of(validator, [_rule_with(name, key, "no-such-choice")])] == [[0, key]]

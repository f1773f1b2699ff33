"""The JSON Schema of the rule language, generated from a registry (``cola schema``).

Editors (VS Code's YAML extension) and CI tools (``check-jsonschema``) read it to point at a
misspelt parameter, a wrong type or an unknown rule type while the file is written, long
before a task runs. It is generated, never written by hand, so that it cannot drift from the
parser: each rule type's parameters come from its ``params_spec`` (:class:`Param`: kind,
required, description), and the options every rule takes from the parser's own lists.

The schema never refuses a block the parser accepts; it may accept a few the parser refuses
(cross-parameter conditions such as "at least one of min and max" live in each check's
``validate``, and a required parameter may come from ``targets``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cola_core.checks import METRIC_TYPES, BaseCheck
from cola_core.language import params as kinds
from cola_core.language.params import Kind, Param
from cola_core.language.result import RULE_SEVERITIES
from cola_core.language.text import LINE_PATTERN, TEXT_PATTERN

__all__ = ["SCHEMA_DIALECT", "rules_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Text and lines as the parser has them: the patterns are its definition (``language.text``),
# written so that Python's re and the ECMAScript engines of editors and check-jsonschema read
# them alike. Each is defined once (in $defs, under a name no rule type takes), and applies to text only.
_TEXT_DEFINITIONS = {
    "_text": {"description": "Text with a visible character: spaces, zero-width and control characters alone "
                            "are blank", "pattern": TEXT_PATTERN},
    "_line": {"description": "Text with a visible character, on one line: no line break, control character or "
                            "bidirectional override", "pattern": LINE_PATTERN},
}
_NON_EMPTY_TEXT = {"type": "string", "$ref": "#/$defs/_text"}
# An option left empty (YAML's ``name:`` with nothing after it) reads as null, which the parser
# takes as not given; text, when given, must hold a visible character.
_OPTIONAL_TEXT = {"type": ["string", "null"], "$ref": "#/$defs/_text"}
# The options that name a rule in its results, alerts and pages: visible, and on one line.
_OPTIONAL_LINE = {"type": ["string", "null"], "$ref": "#/$defs/_line"}
_SCALAR = {"type": ["string", "number", "boolean", "null"]}
# Each built-in kind of value as a schema; a custom kind is described in words only.
_KIND_SCHEMAS: dict[int, dict[str, Any]] = {
    id(kinds.STRING): dict(_NON_EMPTY_TEXT),
    id(kinds.STRING_LIST): {"type": "array", "minItems": 1, "items": dict(_NON_EMPTY_TEXT)},
    id(kinds.NUMBER): {"type": "number"},
    id(kinds.WHOLE): {"type": "integer", "minimum": 0},
    id(kinds.ORDERED): {"type": ["number", "string"], "$ref": "#/$defs/_text"},
    id(kinds.THRESHOLD): {"type": ["string", "number"]},
    id(kinds.BOOL): {"type": "boolean"},
    id(kinds.MAPPING): {"type": "object"},
    id(kinds.STRING_MAP): {"type": "object", "minProperties": 1, "propertyNames": dict(_NON_EMPTY_TEXT),
                           "additionalProperties": dict(_NON_EMPTY_TEXT)},
    id(kinds.SCALAR_LIST): {"type": "array", "minItems": 1, "maxItems": kinds.MAX_LIST_VALUES, "items": _SCALAR},
}
# The options every rule takes, and those only some do (``parsing._options_for``).
_OPTIONS: dict[str, dict[str, Any]] = {
    "id": {**_OPTIONAL_LINE, "description": "A stable identity for the rule's history, on one line (default: derived)"},
    "name": {**_OPTIONAL_LINE, "description": "A name for people, on one line, shown beside the result"},
    "description": {**_OPTIONAL_TEXT, "description": "What the rule is for, in words (kept with the rule)"},
    "code": {**_OPTIONAL_LINE, "description": "The code written beside each row the rule rejects, on one line"},
    "severity": {"enum": [*RULE_SEVERITIES, None], "description": "fail (default) or warn: a warn rule never fails"},
    "dimension": {**_OPTIONAL_LINE, "description": "A data-quality dimension, such as Completeness, on one line"},
}
_WHERE = {**_NON_EMPTY_TEXT, "description": "A SQL condition: the rule judges only the rows it holds"}
_TOLERANCE = {"type": ["string", "number"], "description": "The share of offending rows accepted, such as '< 1%'"}
_UNDECLARED = "(A custom check that declares no parameters: it takes any.)"
# Keys a target may not carry, and keys that only a target may (``parsing.expand_rule``).
_NOT_IN_TARGETS = ("type", "targets", "metric")
_PER_TARGET_ONLY = ("id", "code", "output")


def rules_schema(registry: Mapping[str, type[BaseCheck]]) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a rules file for the rule types of ``registry``:
    a list of rules, or an object whose only key is ``rules``."""
    types = sorted(registry)
    definitions: dict[str, Any] = {
        "rules": {"type": "array", "items": {"$ref": "#/$defs/rule"}},
        "rule": {
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"enum": [*types, "check"], "description": "The rule type"}},
            # One branch per type, so that a validator reports the type's own problem rather
            # than every type's.
            "allOf": [
                {"if": {"properties": {"type": {"const": name}}, "required": ["type"]},
                 "then": {"$ref": f"#/$defs/{name}"}}
                for name in [*types, "check"]
            ],
        },
        "check": _legacy_check(),
        **_TEXT_DEFINITIONS,
    }
    for name in types:
        definitions[name] = _rule_type(name, registry[name])
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "Cola rules",
        "description": "A Cola rules file: a list of rules, or an object whose only key is 'rules'.",
        "type": ["array", "object"],
        # if/then rather than anyOf, so that a validator names the rule at fault.
        "if": {"type": "array"},
        "then": {"$ref": "#/$defs/rules"},
        "else": {"required": ["rules"], "properties": {"rules": {"$ref": "#/$defs/rules"}},
                 "additionalProperties": False},
        "$defs": definitions,
    }


def _rule_type(name: str, cls: type[BaseCheck]) -> dict[str, Any]:
    """One rule type's object: its parameters, its options, and ``targets``."""
    summary = cls.summary(name)
    spec = cls.params_spec
    if spec is None:  # a custom check that declares nothing accepts any parameter
        return {"description": " ".join(filter(None, [summary, _UNDECLARED]))}
    parameters = {key: _parameter(param) for key, param in spec.items()}
    options = dict(_OPTIONS)
    if cls.supports_where:
        options["where"] = _WHERE
    if cls.takes_tolerance():
        options["tolerance"] = _TOLERANCE
    in_target = {key: value for key, value in {**parameters, **options}.items() if key not in _NOT_IN_TARGETS}
    properties = {
        "type": {"const": name},
        **parameters,
        **options,
        "targets": {
            "type": "array",
            "minItems": 1,
            "description": "One rule per entry, each entry's keys over the rule's",
            "items": {"type": "object", "properties": in_target, "additionalProperties": False},
        },
    }
    required = [key for key, param in spec.items() if param.required]
    schema: dict[str, Any] = {
        "description": summary,
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        # With targets, a required parameter may be in each target instead; and a key that
        # must differ per target may not sit beside them.
        "if": {"required": ["targets"]},
        "then": {"not": {"anyOf": [{"required": [key]} for key in _PER_TARGET_ONLY]}},
    }
    if required:
        schema["else"] = {"required": required}
    return schema


def _parameter(param: Param) -> dict[str, Any]:
    schema = dict(_KIND_SCHEMAS.get(id(param.kind), {}))
    if param.choices is not None:
        schema["enum"] = list(param.choices)
    description = param.description or _described(param.kind)
    if description:
        schema["description"] = description
    if param.default is not None:
        schema["default"] = param.default
    return schema


def _described(kind: Kind) -> str:
    return kind.describe[:1].upper() + kind.describe[1:]


def _legacy_check() -> dict[str, Any]:
    """``{"type": "check", "metric": m, ...}``, the older spelling of a metric rule: its
    parameters are the metric's, so only ``metric`` is checked here."""
    return {
        "description": "The older spelling of a metric rule; write the metric as the type instead",
        "required": ["metric"],
        "properties": {"metric": {"enum": sorted(METRIC_TYPES)}},
    }

"""Open Data Contract Standard (ODCS v3) contracts read as rule blocks.

A contract states what a table promises: per property, ``required``, ``unique``,
``primaryKey``, an ``enum``, a ``logicalType`` or ``physicalType`` with ``logicalTypeOptions``;
and ``quality`` entries at property and schema level. :func:`rules_from_contract` turns them
into Cola rules, each quality entry's ``id``, ``name``, ``description``, ``dimension`` and
``severity`` carried into its rule (the ``id`` becomes the result's ``rule_id``, so results,
XCom and history read against the contract). What no rule checks is listed in one
:class:`ContractWarning`, or refused with ``strict=True``.

The block remembers where in the contract each rule was written (:class:`ContractRules`), so
an error about a rule, such as a property that is not in the data, names its place in the
contract: ``rules[3] (not_null) from schema[0].properties[2]``.

The contract is read and validated by the ``open-data-contract-standard`` package (the
``contracts`` extra), imported only when a contract is read; the engine itself needs pyspark
alone. This module is pure Python: the mapping only writes rule dicts.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from cola_core.common.columns import quote
from cola_core.errors import ColaError
from cola_core.language.contract_fields import (
    ContractError,
    check_fields,
    close_to,
    model_error,
    quality_keys,
    unknown_arguments,
    unknown_options,
)
from cola_core.language.documents import read_document
from cola_core.language.structure import document_problem

__all__ = [
    "OPERATORS", "UNCHECKED", "ContractError", "ContractRules", "ContractWarning", "is_contract", "rules_from_contract",
    "unchecked_message",
]

# Each ODCS comparison as the threshold language writes it.
OPERATORS = {
    "mustBe": "= {}",
    "mustNotBe": "!= {}",
    "mustBeGreaterThan": "> {}",
    "mustBeGreaterOrEqualTo": ">= {}",
    "mustBeLessThan": "< {}",
    "mustBeLessOrEqualTo": "<= {}",
    "mustBeBetween": "between {} and {}",
    "mustNotBeBetween": "not between {} and {}",
}
# The same comparisons in SQL, for a ``sql`` quality entry's query.
_SQL_OPERATORS = {
    "mustBe": "=",
    "mustNotBe": "!=",
    "mustBeGreaterThan": ">",
    "mustBeGreaterOrEqualTo": ">=",
    "mustBeLessThan": "<",
    "mustBeLessOrEqualTo": "<=",
    "mustBeBetween": "BETWEEN",
    "mustNotBeBetween": "NOT BETWEEN",
}
# Library metrics: (rule type counted in rows, rule type in percent).
_METRICS = {
    "nullValues": ("missing_count", "missing_percent"),
    "missingValues": ("missing_count", "missing_percent"),
    "invalidValues": ("invalid_count", "invalid_percent"),
    "duplicateValues": ("duplicate_count", "duplicate_percent"),
}
_TYPE_OPTIONS = (
    "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "format",
)
# ODCS leaves severity free text; these words are read as Cola's two severities.
_SEVERITIES = {
    "error": "fail", "fail": "fail", "failure": "fail", "critical": "fail", "high": "fail",
    "warning": "warn", "warn": "warn", "info": "warn", "low": "warn", "medium": "warn",
}
# A physicalType that names a Spark type (its first word), checked exactly by the schema rule;
# other engines' names (NUMBER(10,2), INT64, VARCHAR2) are listed as unmapped, never guessed.
_SPARK_TYPE_WORDS = frozenset({
    "string", "varchar", "char", "int", "integer", "bigint", "long", "smallint", "short", "tinyint", "byte",
    "boolean", "double", "float", "real", "decimal", "numeric", "dec", "date", "timestamp", "timestamp_ntz",
    "timestamp_ltz", "binary", "array", "map", "struct", "time",
})
_API_VERSION = re.compile(r"^v3\.\d+\.\d+$")
_INSTALL = "pip install 'airflow-provider-cola[contracts]'"
_UNITS = ("rows", "percent")
# ODCS logical types the schema rule has no Spark types for (v3.2.0's map and vector).
_UNCHECKED_LOGICAL = ("map", "vector")
# How the one warning about the parts no rule checks opens (a task log says it once).
UNCHECKED = "no rule checks these parts of the contract: "


def unchecked_message(gaps: Iterable[str]) -> str:
    """The one warning that lists a contract's parts no rule checks (``ContractRules.gaps``)."""
    return UNCHECKED + "; ".join(gaps)


class ContractWarning(UserWarning):
    """Parts of a contract that no rule checks."""


class ContractRules(list[dict[str, Any]]):
    """A rule block read from a contract: a plain list of rule dicts that also knows where each
    was written.

    Attributes:
        origins: for each rule, its path in the contract (``schema[0].properties[2]``); parsing
            puts it in the rule's errors.
        contract_id: the contract's ``id``.
        gaps: the parts of the contract no rule checks, each as the warning lists it (what a
            run's results carry as ``contract_gaps``).
    """

    def __init__(
        self, rules: Iterable[dict[str, Any]], origins: Iterable[str], contract_id: str | None,
        gaps: Iterable[str] = (),
    ) -> None:
        super().__init__(rules)
        self.origins = tuple(origins)
        self.contract_id = contract_id
        self.gaps = tuple(gaps)


def is_contract(data: Any) -> bool:
    """Whether a loaded document says it is a data contract (``kind: DataContract``); its
    version is checked when it is read."""
    return isinstance(data, Mapping) and data.get("kind") == "DataContract"


def rules_from_contract(
    contract: Mapping[str, Any] | str | os.PathLike[str], schema_name: str | None = None, *, strict: bool = False
) -> ContractRules:
    """The rule block a contract states for one of its ``schema`` objects.

    Args:
        contract: the contract as loaded (a dict), or the path of a YAML or JSON file.
        schema_name: which ``schema`` object to read; needed only when there are several.
        strict: refuse a contract with parts no rule checks, instead of warning.

    Raises:
        ColaError: the file cannot be read; the document is no ODCS v3 contract or is malformed
            (the message names the path in it, such as ``schema[0].properties[3].quality[1]``);
            the package is missing; with ``strict=True``, anything unmapped.
    """
    if not isinstance(contract, Mapping):
        contract = _a_contract(read_document(os.fspath(contract)), os.fspath(contract))
    _validate(contract)
    at, table = _schema_object(contract, schema_name)
    block = _Block()
    key: list[tuple[int, str]] = []
    for number, prop in enumerate(table.get("properties") or []):
        path = f"{at}.properties[{number}]"
        column = prop.get("physicalName") or prop["name"]
        block.add(_property_rules(prop, column, path, block.unmapped), path)
        if prop.get("primaryKey"):
            key.append((prop.get("primaryKeyPosition") or len(key) + 1, column))
        for entry_number, entry in enumerate(prop.get("quality") or []):
            quality_path = f"{path}.quality[{entry_number}]"
            block.add(_quality(entry, column, quality_path, block.unmapped), quality_path)
    if key:
        block.add([{"type": "unique", "columns": [column for _, column in sorted(key)], "name": "primary key"}], at)
    for entry_number, entry in enumerate(table.get("quality") or []):
        quality_path = f"{at}.quality[{entry_number}]"
        block.add(_quality(entry, None, quality_path, block.unmapped), quality_path)
    if block.unmapped:
        message = unchecked_message(block.unmapped)
        if strict:
            raise ColaError(message)
        warnings.warn(message, ContractWarning, stacklevel=2)
    return ContractRules(block.rules, block.origins, contract.get("id"), block.unmapped)


def _a_contract(data: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ColaError(f"{name!r} holds no contract: an ODCS contract is an object with kind: DataContract")
    return data


class _Block:
    def __init__(self) -> None:
        self.rules: list[dict[str, Any]] = []
        self.origins: list[str] = []
        self.unmapped: list[str] = []

    def add(self, rules: list[dict[str, Any]], origin: str) -> None:
        self.rules += rules
        self.origins += [origin] * len(rules)


def _validate(contract: Mapping[str, Any]) -> None:
    if contract.get("kind") != "DataContract" or not _API_VERSION.match(str(contract.get("apiVersion", ""))):
        raise ColaError(
            f"not an ODCS v3 contract: needs kind: DataContract and apiVersion v3.x.y, got kind "
            f"{contract.get('kind')!r} and apiVersion {contract.get('apiVersion')!r}"
        )
    try:
        from open_data_contract_standard.model import OpenDataContractStandard
        from pydantic import ValidationError
    except ImportError as error:
        raise ColaError(
            f"reading an ODCS contract needs the open-data-contract-standard package: {_INSTALL}"
        ) from error
    # Before the model reads it: the model copies each alias it meets, so 557 bytes of YAML
    # aliases (a "billion laughs") would be expanded before any bound applied.
    problem = document_problem(contract)
    if problem is not None:
        raise ContractError(f"the contract is malformed: {problem}", "the contract")
    try:
        # Strict: the lax model reads required: "no" as false while the mapping sees the text,
        # and primaryKeyPosition: "2" as 2 beside the text; a boolean is true or false, unquoted.
        OpenDataContractStandard.model_validate(dict(contract), strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        raise model_error(contract, first) from None
    # The model accepts any key that starts with "must" inside a quality entry's extra fields
    # silently; an operator ODCS does not have would be a rule nobody checks.
    for at, table in _objects(contract):
        places = [(f"{at}.quality", table.get("quality"))]
        places += [(f"{at}.properties[{n}].quality", prop.get("quality"))
                   for n, prop in enumerate(table.get("properties") or [])]
        for where, entries in places:
            for number, entry in enumerate(entries or []):
                unknown = [word for word in entry if word.startswith("must") and word not in OPERATORS]
                if unknown:
                    raise ContractError(
                        f"{where}[{number}]: unknown operator {unknown[0]!r}; ODCS has {', '.join(OPERATORS)}",
                        f"{where}[{number}].{unknown[0]}",
                    )
    check_fields(contract)


def _objects(contract: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(f"schema[{number}]", item) for number, item in enumerate(contract.get("schema") or [])]


def _schema_object(contract: Mapping[str, Any], schema_name: str | None) -> tuple[str, Mapping[str, Any]]:
    objects = _objects(contract)
    names = ", ".join(repr(item.get("name")) for _, item in objects) or "none"
    if schema_name is None:
        if len(objects) != 1:
            raise ColaError(
                f"the contract has {len(objects)} schema objects ({names}); choose one with schema_name "
                "(or, for a rules file path, write it after '#': contract.yaml#orders)"
            )
        return objects[0]
    for at, item in objects:
        if item.get("name") == schema_name:
            return at, item
    raise ColaError(f"the contract has no schema object named {schema_name!r}; it has {names}")


def _property_rules(prop: Mapping[str, Any], column: str, path: str, unmapped: list[str]) -> list[dict[str, Any]]:
    """The rules a property's own fields state (not its quality entries)."""
    rules: list[dict[str, Any]] = []
    types: dict[str, Any] = {}
    logical = prop.get("logicalType")
    if logical in _UNCHECKED_LOGICAL:
        unmapped.append(f"{path}.logicalType ({logical!r}: no rule checks it)")
    elif logical:
        types["logical_types"] = {column: logical}
    physical = prop.get("physicalType")
    if physical:
        if re.split(r"[\s(<]", str(physical).strip().lower(), maxsplit=1)[0] in _SPARK_TYPE_WORDS:
            types["column_types"] = {column: physical}
        else:
            unmapped.append(f"{path}.physicalType ({physical!r} is no Spark type)")
    if types:
        # Named for the property, since a run lists one schema result per property.
        logical, physical = types.get("logical_types", {}).get(column), types.get("column_types", {}).get(column)
        stated = f"{logical} ({physical})" if logical and physical else logical or physical
        rules.append({"type": "schema", **types, "name": f"{column} is {stated}"})
    if prop.get("required"):
        rules.append({"type": "not_null", "columns": [column]})
    if prop.get("unique"):
        rules.append({"type": "unique", "columns": [column]})
    allowed = [item.get("value") for item in prop.get("enum") or [] if item.get("value") is not None]
    if allowed:
        rules.append({"type": "invalid_count", "column": column, "valid_values": allowed, "must_be": 0})
    options = prop.get("logicalTypeOptions") or {}
    rules += _type_options(column, options, path, unmapped, logical)
    unmapped += unknown_options(options, prop.get("logicalType"), f"{path}.logicalTypeOptions")
    for nested in ("properties", "items"):
        if prop.get(nested):
            unmapped.append(f"{path}.{nested} (nested properties)")
    return rules


def _type_options(
    column: str, options: Mapping[str, Any], path: str, unmapped: list[str], logical: str | None
) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    if "pattern" in options:
        rules.append({"type": "regex", "column": column, "pattern": options["pattern"], "null_is_valid": True})
    words = (("minLength", "valid_min_length"), ("maxLength", "valid_max_length"))
    lengths = {key: options[word] for word, key in words if word in options}
    if lengths:
        rules.append({"type": "invalid_count", "column": column, **lengths, "must_be": 0})
    bounds = {key: options[word] for word, key in (("minimum", "min"), ("maximum", "max")) if word in options}
    if bounds:
        rules.append({"type": "range", "column": column, **bounds})
    for word, sign in (("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
        bound = options.get(word)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            # Written into SQL text, so only a plain number is: a date bound is listed as unmapped.
            quoted = quote(column)
            rules.append({"type": "expression", "expression": f"{quoted} IS NULL OR {quoted} {sign} {bound!r}",
                          "name": f"{column} {sign} {bound!r}"})
        elif word in options:
            unmapped.append(f"{path}.logicalTypeOptions.{word} ({bound!r} is no number)")
    if "format" in options and logical not in (None, "string"):
        # A date's or a number's format says how it is written (yyyy-MM-dd), not which values are valid.
        written = f"{options['format']!r} says how a value of type {logical} is written"
        unmapped.append(f"{path}.logicalTypeOptions.format ({written})")
    elif "format" in options:
        rules.append({"type": "invalid_count", "column": column, "valid_format": options["format"], "must_be": 0})
    # An option of the standard that no rule checks (an unknown one is refused or listed apart).
    unmapped += [f"{path}.logicalTypeOptions.{word}" for word in options
                 if word not in _TYPE_OPTIONS and not unknown_options({word: None}, None, "")]
    return rules


def _quality(entry: Mapping[str, Any], column: str | None, path: str, unmapped: list[str]) -> list[dict[str, Any]]:
    kind = entry.get("type") or "library"
    unmapped += quality_keys(entry, path)  # only a v3.0 entry gets here with a key ODCS does not have
    carried = _carried(entry, path, unmapped)
    if kind == "custom":
        return _custom(entry, carried, path, unmapped)
    if "id" in carried and "name" not in carried:
        # The id names the result where an entry has no name: in the table, the log and the report.
        carried["name"] = carried["id"]
    operators = [word for word in entry if word in OPERATORS and entry[word] is not None]
    if kind not in ("library", "sql") or len(operators) != 1:
        why = kind if len(operators) == 1 else f"{kind}, no single mustBe* operator"
        unmapped.append(f"{path} ({why})")
        return []
    operator = operators[0]
    bounds = _bounds(entry[operator], operator, path)
    if kind == "sql":
        # Nested in a comparison, so a query written to run alone loses its closing semicolon.
        query = str(entry.get("query") or "").strip().rstrip(";").strip().replace("{object}", "_validation_df")
        if column is not None:
            query = query.replace("{property}", quote(column))
        compared = " AND ".join(map(repr, bounds))
        return [{"type": "sql", "query": f"SELECT ({query}) {_SQL_OPERATORS[operator]} {compared}", **carried}]
    threshold = OPERATORS[operator].format(*map(repr, bounds))
    metric = entry.get("metric") or entry.get("rule")
    if metric == "rowCount":
        return [{"type": "row_count", "must_be": threshold, **carried}]
    if metric not in _METRICS:
        unmapped.append(f"{path} (library metric {metric!r})")
        return []
    arguments = entry.get("arguments") or {}
    if column is None and metric != "duplicateValues":
        unmapped.append(f"{path} ({metric} needs a property)")
        return []
    unmapped += unknown_arguments(entry, metric, path)
    unit = entry.get("unit")
    if unit not in (None, "rows", "percent"):
        # ODCS allows any unit; Cola counts in rows or percent, and never guesses which one is meant.
        unmapped.append(f"{path}.unit ({unit!r} is no unit Cola reads: rows or percent{close_to(unit, _UNITS)})")
        return []
    percent = unit == "percent"
    rule: dict[str, Any] = {"type": _METRICS[metric][percent], "must_be": threshold + ("%" if percent else "")}
    if metric == "duplicateValues":
        rule["columns"] = [column] if column is not None else list(arguments.get("properties") or [])
    else:
        rule["column"] = column
    if metric == "missingValues" and arguments.get("missingValues"):
        rule["missing_values"] = [value for value in arguments["missingValues"] if value is not None]
    if metric == "invalidValues":
        if arguments.get("validValues"):
            rule["valid_values"] = list(arguments["validValues"])
        if arguments.get("pattern"):
            rule["valid_regex"] = arguments["pattern"]
    return [{**rule, **carried}]


def _bounds(value: Any, operator: str, path: str) -> list[int | float]:
    """The operator's numbers: two for the ``Between`` operators, one otherwise. They are
    written into threshold and SQL text, so only plain numbers pass."""
    bounds = value if operator.endswith("Between") else [value]
    count = 2 if operator.endswith("Between") else 1
    if (not isinstance(bounds, list) or len(bounds) != count
            or any(isinstance(bound, bool) or not isinstance(bound, (int, float)) for bound in bounds)):
        wanted = "a list of two numbers" if count == 2 else "a number"
        raise ColaError(f"{path}.{operator}: must be {wanted}, got {value!r}")
    return bounds


def _carried(entry: Mapping[str, Any], path: str, unmapped: list[str]) -> dict[str, Any]:
    carried = {key: entry[key] for key in ("id", "name", "description", "dimension") if entry.get(key)}
    severity = entry.get("severity")
    if severity:
        carried["severity"] = _SEVERITIES.get(str(severity).lower(), "fail")
        if str(severity).lower() not in _SEVERITIES:
            unmapped.append(f"{path}.severity ({severity!r} read as fail)")
    return carried


def _custom(entry: Mapping[str, Any], carried: dict[str, Any], path: str, unmapped: list[str]) -> list[dict[str, Any]]:
    """A ``custom`` entry for the Cola engine: its ``implementation`` is one Cola rule."""
    if str(entry.get("engine") or "").lower() != "cola":
        unmapped.append(f"{path} (custom, engine {entry.get('engine')!r})")
        return []
    rule = entry.get("implementation")
    if not isinstance(rule, Mapping) or not isinstance(rule.get("type"), str):
        raise ColaError(f"{path}.implementation: a custom entry for Cola holds one rule object with a 'type'")
    named = {"name": carried["id"]} if "id" in carried and "name" not in carried else {}
    return [{**named, **rule, **carried}]

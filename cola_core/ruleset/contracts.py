"""Open Data Contract Standard (ODCS v3) contracts read as rule blocks (WORK IN PROGRESS).

A contract states what a table promises: per property, ``required``, ``unique``,
``primaryKey``, a ``logicalType`` with ``logicalTypeOptions``; and ``quality`` entries at
property and schema level. :func:`rules_from_contract` turns those into Cola rules, keeping
each quality entry's ``id`` as the rule's ``id`` (so results, XCom and history read against
the contract), and lists what it cannot map in one warning (or refuses it with
``strict=True``). The contract is read and validated by the ``open-data-contract-standard``
package (the ``contracts`` extra), imported only here.

Done so far: property flags, ``logicalTypeOptions``, ``library`` quality metrics with every
``mustBe*`` operator and ``unit``, ``sql`` quality. Not yet: ``logicalType``/``physicalType``
to the ``schema`` rule, reading a contract wherever a rules file is accepted, the docs.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from typing import Any

from cola_core.common.columns import quote
from cola_core.errors import ColaError

__all__ = ["OPERATORS", "ContractWarning", "rules_from_contract"]

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
# Library metrics: (rule type in rows, rule type in percent).
_METRICS = {
    "nullValues": ("missing_count", "missing_percent"),
    "missingValues": ("missing_count", "missing_percent"),
    "invalidValues": ("invalid_count", "invalid_percent"),
    "duplicateValues": ("duplicate_count", "duplicate_percent"),
}
_CARRIED = ("name", "dimension")
_SEVERITIES = {"error": "fail", "fail": "fail", "warning": "warn", "warn": "warn"}
_API_VERSION = re.compile(r"^v3\.\d+\.\d+$")


class ContractWarning(UserWarning):
    """Parts of a contract that no rule checks."""


def rules_from_contract(
    contract: Mapping[str, Any], schema_name: str | None = None, *, strict: bool = False
) -> list[dict[str, Any]]:
    """The rule block a contract's ``schema`` object states (the only one, or ``schema_name``).

    Raises:
        ColaError: a malformed contract, naming the path in it
            (``schema[0].properties[3].quality[1]``); with ``strict=True``, anything unmapped.
    """
    from open_data_contract_standard.model import OpenDataContractStandard
    from pydantic import ValidationError

    if contract.get("kind") != "DataContract" or not _API_VERSION.match(str(contract.get("apiVersion", ""))):
        raise ColaError(
            f"not an ODCS v3 contract: needs kind: DataContract and apiVersion v3.x.y, got kind "
            f"{contract.get('kind')!r} and apiVersion {contract.get('apiVersion')!r}"
        )
    try:
        OpenDataContractStandard.model_validate(dict(contract))
    except ValidationError as error:
        first = error.errors()[0]
        where = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in first["loc"]).lstrip(".")
        raise ColaError(f"the contract is malformed at {where}: {first['msg']}") from None
    at, table = _schema_object(contract, schema_name)
    rules: list[dict[str, Any]] = []
    unmapped: list[str] = []
    key: list[tuple[int, str]] = []
    for number, prop in enumerate(table.get("properties") or []):
        path = f"{at}.properties[{number}]"
        name = prop["name"]
        if prop.get("required"):
            rules.append({"type": "not_null", "columns": [name]})
        if prop.get("unique"):
            rules.append({"type": "unique", "columns": [name]})
        if prop.get("primaryKey"):
            key.append((prop.get("primaryKeyPosition") or len(key) + 1, name))
        rules += _type_options(name, prop.get("logicalTypeOptions") or {}, path, unmapped)
        for entry_number, entry in enumerate(prop.get("quality") or []):
            rules += _quality(entry, name, f"{path}.quality[{entry_number}]", unmapped)
    if key:
        rules.append({"type": "unique", "columns": [name for _, name in sorted(key)]})
    for entry_number, entry in enumerate(table.get("quality") or []):
        rules += _quality(entry, None, f"{at}.quality[{entry_number}]", unmapped)
    if unmapped:
        message = "no rule checks these parts of the contract: " + "; ".join(unmapped)
        if strict:
            raise ColaError(message)
        warnings.warn(message, ContractWarning, stacklevel=2)
    return rules


def _schema_object(contract: Mapping[str, Any], schema_name: str | None) -> tuple[str, Mapping[str, Any]]:
    objects = contract.get("schema") or []
    if schema_name is None:
        if len(objects) != 1:
            names = ", ".join(repr(item.get("name")) for item in objects)
            raise ColaError(f"the contract has {len(objects)} schema objects ({names}); choose one with schema_name")
        return "schema[0]", objects[0]
    for number, item in enumerate(objects):
        if item.get("name") == schema_name:
            return f"schema[{number}]", item
    raise ColaError(f"the contract has no schema object named {schema_name!r}")


def _type_options(name: str, options: Mapping[str, Any], path: str, unmapped: list[str]) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    if "pattern" in options:
        rules.append({"type": "regex", "column": name, "pattern": options["pattern"], "null_is_valid": True})
    words = (("minLength", "valid_min_length"), ("maxLength", "valid_max_length"))
    lengths = {key: options[word] for word, key in words if word in options}
    if lengths:
        rules.append({"type": "invalid_count", "column": name, **lengths, "must_be": 0})
    bounds = {key: options[word] for word, key in (("minimum", "min"), ("maximum", "max")) if word in options}
    if bounds:
        rules.append({"type": "range", "column": name, **bounds})
    for word, sign in (("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
        if word in options:
            column = quote(name)
            rules.append({"type": "expression", "expression": f"{column} IS NULL OR {column} {sign} {options[word]}",
                          "name": f"{name} {sign} {options[word]}"})
    if "format" in options:
        rules.append({"type": "invalid_count", "column": name, "valid_format": options["format"], "must_be": 0})
    for word in options:
        if word not in ("pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
                        "exclusiveMaximum", "format"):
            unmapped.append(f"{path}.logicalTypeOptions.{word}")
    return rules


def _quality(entry: Mapping[str, Any], column: str | None, path: str, unmapped: list[str]) -> list[dict[str, Any]]:
    kind = entry.get("type", "library")
    operators = [word for word in entry if word.startswith("must")]
    unknown = [word for word in operators if word not in OPERATORS]
    if unknown:
        raise ColaError(f"{path}: unknown operator {unknown[0]!r}; ODCS has {', '.join(OPERATORS)}")
    if kind not in ("library", "sql") or len(operators) != 1:
        unmapped.append(f"{path} ({kind}{'' if len(operators) == 1 else ', no single mustBe* operator'})")
        return []
    operator = operators[0]
    value = entry[operator]
    bounds = value if operator.endswith("Between") else [value]
    carried = {key: entry[key] for key in _CARRIED if entry.get(key)}
    if entry.get("id"):
        carried["id"] = entry["id"]
    if entry.get("severity"):
        carried["severity"] = _SEVERITIES.get(str(entry["severity"]).lower(), "fail")
    if kind == "sql":
        query = str(entry.get("query", "")).replace("{object}", "_validation_df")
        if column is not None:
            query = query.replace("{property}", f"`{column}`")
        sql_bounds = " AND ".join(str(bound) for bound in bounds)
        return [{"type": "sql", "query": f"SELECT ({query}) {_sql_operator(operator)} {sql_bounds}", **carried}]
    threshold = OPERATORS[operator].format(*bounds)
    metric = entry.get("metric") or entry.get("rule")
    percent = entry.get("unit") == "percent"
    if metric == "rowCount":
        return [{"type": "row_count", "must_be": threshold, **carried}]
    if metric not in _METRICS:
        unmapped.append(f"{path} (library metric {metric!r})")
        return []
    if column is None and metric != "duplicateValues":
        unmapped.append(f"{path} ({metric} needs a property)")
        return []
    rule: dict[str, Any] = {"type": _METRICS[metric][percent], "must_be": threshold + ("%" if percent else "")}
    arguments = entry.get("arguments") or {}
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


def _sql_operator(operator: str) -> str:
    return {"mustBe": "=", "mustNotBe": "!=", "mustBeGreaterThan": ">", "mustBeGreaterOrEqualTo": ">=",
            "mustBeLessThan": "<", "mustBeLessOrEqualTo": "<=", "mustBeBetween": "BETWEEN",
            "mustNotBeBetween": "NOT BETWEEN"}[operator]

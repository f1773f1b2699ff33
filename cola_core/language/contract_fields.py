"""What ODCS v3 lets each part of a contract hold, checked before a contract is mapped to rules.

The ``open-data-contract-standard`` model checks the types of the fields it declares, but
ignores any key it does not know below the top level, and leaves ``logicalTypeOptions``,
``arguments`` and the enumerations free. The standard's JSON schema is stricter: it refuses
an unknown key in a schema object, a property, a quality entry (from v3.1.0) and an enum
value, an option a ``logicalType`` does not have, and a value outside an enumeration. This
module refuses the same, naming the place and the fix (``requird``: did you mean
'required'?), so that a misspelt part is never a rule nobody checks.

The names are those of ODCS v3.0.0 to v3.2.0 together (``bitol-io/open-data-contract-standard``,
``schema/odcs-json-schema-v3.*.json``), so a contract valid under any v3 version is read.
Where the standard allows any key or value (a v3.0 quality entry, ``arguments``, options
without a ``logicalType``, ``unit``), an unknown one is listed among the parts no rule
checks instead (:func:`cola_core.language.contracts.rules_from_contract`).
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from cola_core.errors import ColaRuleError

__all__ = [
    "TOP_LEVEL", "ContractError", "check_fields", "close_to", "model_error", "quality_keys", "unknown_arguments",
    "unknown_options",
]

# The model refuses any other key at the top; these are offered as the fix.
TOP_LEVEL = frozenset({
    "apiVersion", "authoritativeDefinitions", "context", "contractCreatedTs", "customProperties", "dataProduct",
    "description", "domain", "id", "kind", "name", "price", "roles", "schema", "servers", "slaDefaultElement",
    "slaProperties", "status", "support", "tags", "team", "tenant", "version",
})
_SCHEMA_OBJECT = frozenset({
    "authoritativeDefinitions", "businessName", "context", "customProperties", "dataGranularityDescription",
    "deprecated", "description", "id", "logicalType", "name", "physicalName", "physicalType", "properties",
    "quality", "relationships", "synonyms", "tags",
})
_PROPERTY = frozenset({
    "authoritativeDefinitions", "businessName", "classification", "criticalDataElement", "customProperties",
    "deprecated", "description", "encryptedName", "enum", "examples", "id", "items", "logicalType",
    "logicalTypeOptions", "map", "name", "partitionKeyPosition", "partitioned", "physicalName", "physicalType",
    "primaryKey", "primaryKeyPosition", "properties", "quality", "relationships", "required", "semanticType",
    "synonyms", "tags", "transformDescription", "transformLogic", "transformSourceObjects", "unique",
})
_QUALITY = frozenset({
    "arguments", "authoritativeDefinitions", "businessImpact", "customProperties", "description", "dimension",
    "engine", "id", "implementation", "method", "metric", "mustBe", "mustBeBetween", "mustBeGreaterOrEqualTo",
    "mustBeGreaterThan", "mustBeLessOrEqualTo", "mustBeLessThan", "mustNotBe", "mustNotBeBetween", "name", "query",
    "rule", "schedule", "scheduler", "severity", "tags", "type", "unit",
})
_ENUM_VALUE = frozenset({"authoritativeDefinitions", "customProperties", "description", "id", "label", "tags", "value"})
_QUALITY_TYPES = ("library", "sql", "custom", "text")
_METRICS = ("nullValues", "missingValues", "invalidValues", "duplicateValues", "rowCount")
_DIMENSIONS = ("accuracy", "completeness", "conformity", "consistency", "coverage", "timeliness", "uniqueness")

# The JSON types of the standard, each as the Python values that are one.
_NUMBER, _INTEGER, _TEXT, _BOOLEAN, _LIST, _WHEN = "a number", "a whole number", "a text", "true or false", \
    "a list", "a date or time"
_RANGE = {"minimum": (_NUMBER,), "maximum": (_NUMBER,), "exclusiveMinimum": (_NUMBER, _BOOLEAN),
          "exclusiveMaximum": (_NUMBER, _BOOLEAN), "multipleOf": (_NUMBER,), "format": (_TEXT,)}
# Written as text in JSON; an unquoted YAML date is read as a date, and means the same.
_TIME_RANGE = {"minimum": (_WHEN,), "maximum": (_WHEN,), "exclusiveMinimum": (_WHEN, _BOOLEAN),
               "exclusiveMaximum": (_WHEN, _BOOLEAN), "format": (_TEXT,)}
_CLOCK = {**_TIME_RANGE, "timezone": (_BOOLEAN,), "defaultTimezone": (_TEXT,)}
# Each logicalType's logicalTypeOptions (a closed set in the standard) and their types.
_OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "string": {"minLength": (_INTEGER,), "maxLength": (_INTEGER,), "pattern": (_TEXT,), "format": (_TEXT,)},
    "date": _TIME_RANGE,
    "timestamp": _CLOCK,
    "time": _CLOCK,
    "integer": _RANGE,
    "number": _RANGE,
    "object": {"maxProperties": (_INTEGER,), "minProperties": (_INTEGER,), "required": (_LIST,)},
    "array": {"maxItems": (_INTEGER,), "minItems": (_INTEGER,), "uniqueItems": (_BOOLEAN,)},
    "vector": {"dimensions": (_INTEGER,), "elementType": (_TEXT,), "distanceMetric": (_TEXT,),
               "embeddingModel": (_TEXT,), "embeddingModelVersion": (_TEXT,), "normalized": (_BOOLEAN,)},
}
# boolean and map have no options of their own: any is allowed.
_LOGICAL_TYPES = (*_OPTIONS, "boolean", "map")
_ALL_OPTIONS = frozenset(option for options in _OPTIONS.values() for option in options)
# The options the mapping reads whatever the logicalType, with the type it needs.
_READ_OPTIONS = {"pattern": (_TEXT,), "format": (_TEXT,), "minLength": (_INTEGER,), "maxLength": (_INTEGER,),
                 "minimum": (_NUMBER, _WHEN), "maximum": (_NUMBER, _WHEN)}
# The library metrics' arguments (ODCS's data-quality page), with the type each has.
_ARGUMENTS = {"missingValues": (_LIST,), "validValues": (_LIST,), "pattern": (_TEXT,), "properties": (_LIST,)}
_METRIC_ARGUMENTS = {"missingValues": ("missingValues",), "invalidValues": ("validValues", "pattern"),
                     "duplicateValues": ("properties",)}


class ContractError(ColaRuleError):
    """A contract is malformed. The message names the place in the contract and says how to fix it.

    Attributes:
        origin: the place, such as ``schema[0].properties[2].required``.
    """

    def __init__(self, message: str, place: str) -> None:
        super().__init__(message, origin=place)

    @property
    def location(self) -> str:
        return self.origin or "the contract"

    def _render(self) -> str:
        return self.reason


def close_to(word: Any, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choice ``word`` is closest to (any case), or ``''``."""
    if not isinstance(word, str):
        return ""
    choices = list(choices)
    same = [choice for choice in choices if choice.lower() == word.lower()]
    close = same or difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_fields(contract: Mapping[str, Any]) -> None:
    """Refuse what the standard's schema refuses in each schema object (see the module docstring).

    Raises:
        ContractError: naming the first place at fault.
    """
    # A v3.0 quality entry may hold keys of its own; from v3.1.0 the set is closed.
    open_quality = str(contract.get("apiVersion", "")).startswith("v3.0.")
    for number, table in enumerate(contract.get("schema") or []):
        at = f"schema[{number}]"
        _known_keys(table, _SCHEMA_OBJECT, at, "a schema object")
        _named(table, at, "schema object")
        _quality_entries(table.get("quality"), f"{at}.quality", open_quality)
        _properties(table.get("properties"), f"{at}.properties", open_quality)


def _properties(properties: Any, at: str, open_quality: bool) -> None:
    for number, prop in enumerate(properties or []):
        path = f"{at}[{number}]"
        _named(prop, path, "property")
        _property(prop, path, open_quality)


def _property(prop: Mapping[str, Any], path: str, open_quality: bool) -> None:
    """A property's own fields; also an array's ``items``, which has no name."""
    _known_keys(prop, _PROPERTY, path, "a property")
    logical = prop.get("logicalType")
    if logical is not None and logical not in _LOGICAL_TYPES:
        raise ContractError(
            f"{path}.logicalType: {logical!r} is no ODCS logical type{close_to(logical, _LOGICAL_TYPES)}; "
            f"it is one of {', '.join(_LOGICAL_TYPES)}", f"{path}.logicalType")
    _options(prop.get("logicalTypeOptions") or {}, logical, f"{path}.logicalTypeOptions")
    for item_number, item in enumerate(prop.get("enum") or []):
        _known_keys(item, _ENUM_VALUE, f"{path}.enum[{item_number}]", "an enum value")
    _quality_entries(prop.get("quality"), f"{path}.quality", open_quality)
    # Nested properties no rule checks (listed as such), but a misspelt key there is still refused.
    _properties(prop.get("properties"), f"{path}.properties", open_quality)
    if isinstance(prop.get("items"), Mapping):
        _property(prop["items"], f"{path}.items", open_quality)


def _options(options: Mapping[str, Any], logical: str | None, at: str) -> None:
    own = _OPTIONS.get(logical or "")
    if own is not None:
        for word in options:
            if word not in own:
                raise ContractError(
                    f"{at}: {word!r} is no option of logicalType {logical!r}{close_to(word, own)}; it has "
                    f"{', '.join(own)}", f"{at}.{word}")
    for word, value in options.items():
        wanted = own.get(word) if own is not None else _READ_OPTIONS.get(word)
        if wanted is not None:
            _typed(value, wanted, f"{at}.{word}")
        if word in ("minLength", "maxLength") and _is(value, _INTEGER) and value < 0:
            raise ContractError(f"{at}.{word}: must be 0 or more, got {value}", f"{at}.{word}")


def unknown_options(options: Mapping[str, Any], logical: str | None, at: str) -> list[str]:
    """Options no logicalType has, where the standard allows any (no logicalType, or one without
    options of its own): each listed with the option it is closest to."""
    if logical in _OPTIONS:
        return []  # refused by check_fields already
    return [f"{at}.{word} (no ODCS option{close_to(word, _ALL_OPTIONS)})" for word in options
            if word not in _ALL_OPTIONS]


def _quality_entries(entries: Any, at: str, open_quality: bool) -> None:
    for number, entry in enumerate(entries or []):
        path = f"{at}[{number}]"
        if not open_quality:
            _known_keys(entry, _QUALITY, path, "a quality entry")
        for word, choices in (("type", _QUALITY_TYPES), ("metric", _METRICS), ("dimension", _DIMENSIONS)):
            value = entry.get(word)
            if value is not None and value not in choices:
                raise ContractError(
                    f"{path}.{word}: {value!r} is no ODCS {word}{close_to(value, choices)}; it is one of "
                    f"{', '.join(choices)}", f"{path}.{word}")
        arguments = entry.get("arguments") or {}
        for word, value in arguments.items():
            if word in _ARGUMENTS:
                _typed(value, _ARGUMENTS[word], f"{path}.arguments.{word}")
        if isinstance(arguments.get("properties"), list):
            for item_number, item in enumerate(arguments["properties"]):
                _typed(item, (_TEXT,), f"{path}.arguments.properties[{item_number}]")


def unknown_arguments(entry: Mapping[str, Any], metric: str, path: str) -> list[str]:
    """The arguments a library metric does not read (the standard leaves ``arguments`` free):
    each listed, with the argument it is closest to."""
    read = _METRIC_ARGUMENTS.get(metric, ())
    listed = []
    for word in entry.get("arguments") or {}:
        if word not in read:
            hint = close_to(word, read or _ARGUMENTS) if word not in _ARGUMENTS else ""
            reads = f"{metric} reads {', '.join(read)}" if read else f"{metric} reads no arguments"
            listed.append(f"{path}.arguments.{word} ({reads}{hint})")
    return listed


def quality_keys(entry: Mapping[str, Any], path: str) -> list[str]:
    """A v3.0 quality entry's keys that no version of the standard has, listed with the fix."""
    return [f"{path}.{word} (no ODCS quality key{close_to(word, _QUALITY)})" for word in entry if word not in _QUALITY]


def model_error(contract: Mapping[str, Any], error: Mapping[str, Any]) -> ContractError:
    """The model's first error (a pydantic error dict) as a :class:`ContractError` with the fix."""
    where = _place(contract, error["loc"])
    return ContractError(f"the contract is malformed at {where}: {error['msg']}{_fix(error)}", where)


def _place(contract: Mapping[str, Any], loc: Iterable[int | str]) -> str:
    """The model's location of an error as a path in the contract, without the steps that name
    a branch of a union type (``mustBeGreaterThan.float``) rather than a key."""
    where, value = "", contract
    for step in loc:
        if isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value):
            where, value = f"{where}[{step}]", value[step]
        elif isinstance(step, str) and isinstance(value, Mapping) and step in value:
            where, value = f"{where}.{step}", value[step]
    return where.lstrip(".")


# What to write instead, for the errors of the model's strict types.
_FIXES = {
    "bool_type": "true or false, unquoted", "int_type": "a whole number, unquoted", "float_type": "a number, unquoted",
    "string_type": "a text", "list_type": "a list", "dict_type": "an object", "model_type": "an object",
}


def _fix(error: Mapping[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return close_to(error["loc"][-1], TOP_LEVEL)
    wanted = _FIXES.get(error["type"])
    if wanted is None:
        return ""
    shown = repr(error["input"])
    shown = shown if len(shown) <= 60 else shown[:60] + "..."
    return f", got {shown}; write {wanted}"


def _known_keys(item: Any, known: frozenset[str], at: str, what: str) -> None:
    for word in item:
        if word not in known:
            raise ContractError(
                f"{at}: unknown key {word!r}{close_to(word, known)}; {what} in ODCS v3 has no such key",
                f"{at}.{word}")


def _named(item: Mapping[str, Any], at: str, what: str) -> None:
    if not item.get("name"):
        raise ContractError(f"{at}: a {what} needs a name (ODCS requires it); write name: <its name>", f"{at}.name")


def _typed(value: Any, wanted: tuple[str, ...], at: str) -> None:
    if not any(_is(value, kind) for kind in wanted):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:60] + "..."
        raise ContractError(f"{at}: must be {' or '.join(wanted)}, got {shown}", at)


def _is(value: Any, kind: str) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {
        _NUMBER: number,
        _INTEGER: number and isinstance(value, int),
        _TEXT: isinstance(value, str),
        _BOOLEAN: isinstance(value, bool),
        _LIST: isinstance(value, list),
        _WHEN: isinstance(value, (str, dt.date, dt.time)),
    }[kind]

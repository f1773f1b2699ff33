"""Reading a rule block from a JSON or YAML file, or from a data contract.

The file is read within the bounds of :mod:`cola_core.language.documents` (size, encoding,
numbers, nesting, YAML aliases and dates, repeated keys; every error names the file, with the
line and column where there is one). It must then hold a list of rules, or an object whose
only key is ``rules``, or be an ODCS contract (:mod:`cola_core.language.contracts`). The
loaded block goes through the same structure pre-pass as ``Cola.parse`` (see
``cola_core.language.structure``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cola_core.errors import ColaError, ColaRuleError
from cola_core.language.contracts import is_contract, rules_from_contract
from cola_core.language.documents import MAX_RULES_FILE_BYTES, read_document
from cola_core.language.structure import check_structure

__all__ = ["MAX_RULES_FILE_BYTES", "read_rules_file"]

_LIST_HINT = "a list of rules, or an object whose only key is 'rules'"


def read_rules_file(path: str | os.PathLike[str]) -> Any:
    """Read a rule block from a JSON file, or a YAML file (``.yaml``/``.yml``, needs PyYAML).

    The file holds a list of rules, or an object whose only key is ``rules``, or is an Open
    Data Contract Standard contract (``kind: DataContract``, ``apiVersion: v3.x.y``), read as
    the rules it states (``cola_core.contracts``; a contract of several schema objects is
    named ``contract.yaml#orders``). The rules themselves are validated later, by
    ``Cola.parse``.

    Raises:
        ColaError: when the file cannot be read, is not UTF-8 text of at most
            :data:`MAX_RULES_FILE_BYTES`, is not valid JSON/YAML (the message gives the line and
            column, and shows the line with a caret under the problem), or does not hold a
            bounded list of plain values.
    """
    name = os.fspath(path)
    schema_name = None
    if "#" in name and not os.path.exists(name) and os.path.exists(name.rsplit("#", 1)[0]):
        name, schema_name = name.rsplit("#", 1)
    data = read_document(name)
    if is_contract(data):
        return rules_from_contract(data, schema_name)
    if schema_name is not None:
        raise ColaError(f"rules file {name!r} is no contract: '#{schema_name}' names a schema object of a contract")
    if isinstance(data, Mapping):
        extra = sorted(set(map(str, data)) - {"rules"})
        if "rules" not in data or extra:
            raise ColaError(
                f"rules file {name!r} holds an object; it must be {_LIST_HINT} "
                f"(found keys: {', '.join(map(str, data)) or 'none'})"
            )
        data = data["rules"]
    if not isinstance(data, list):
        held = "nothing" if data is None else _a(_type_word(data))
        raise ColaError(f"rules file {name!r} holds {held}; it must be {_LIST_HINT}")
    try:
        check_structure(data)
    except ColaRuleError as error:
        raise ColaError(f"rules file {name!r}: {error}") from error
    return data


def _type_word(value: Any) -> str:
    words = {str: "text", bool: "a boolean", int: "number", float: "number", dict: "object"}
    return words.get(type(value), type(value).__name__)


def _a(word: str) -> str:
    if word.startswith("a "):
        return word
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"

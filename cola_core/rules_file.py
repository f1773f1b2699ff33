"""Reading a rule block from a JSON or YAML file, with the line and column of any syntax error."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from cola_core.errors import ColaError

__all__ = ["read_rules_file"]


def read_rules_file(path: str | os.PathLike[str]) -> Any:
    """Read a rule block from a JSON file, or a YAML file (``.yaml``/``.yml``, needs PyYAML).

    The file holds a list of rules, or an object whose only key is ``rules``. The rules
    themselves are validated later, by ``Cola.parse``.

    Raises:
        ColaError: when the file cannot be read or is not valid JSON/YAML (the message gives
            the line and column, and shows the line with a caret under the problem).
    """
    name = os.fspath(path)
    try:
        text = Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ColaError(f"cannot read rules file {name!r}: {error}") from error
    if name.lower().endswith((".yaml", ".yml")):
        data = _load_yaml(text, name)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ColaError(
                f"rules file {name!r} is not valid JSON: {error.msg} "
                f"(line {error.lineno}, column {error.colno})\n{_caret(text, error.lineno, error.colno)}"
            ) from error
    if isinstance(data, Mapping):
        extra = sorted(set(data) - {"rules"})
        if "rules" not in data or extra:
            raise ColaError(
                f"rules file {name!r} holds an object; it must be a list of rules, or an object whose "
                f"only key is 'rules' (found keys: {', '.join(map(str, data)) or 'none'})"
            )
        data = data["rules"]
    return data


def _load_yaml(text: str, name: str) -> Any:
    try:
        import yaml  # only needed when a YAML file is actually read
    except ImportError as error:
        raise ColaError(
            f"rules file {name!r} is YAML, which needs PyYAML: pip install PyYAML "
            "(or airflow-provider-cola[yaml]), or write the rules as JSON"
        ) from error
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        if mark is None:
            raise ColaError(f"rules file {name!r} is not valid YAML: {problem}") from error
        line, column = mark.line + 1, mark.column + 1
        raise ColaError(
            f"rules file {name!r} is not valid YAML: {problem} (line {line}, column {column})\n"
            f"{_caret(text, line, column)}"
        ) from error


def _caret(text: str, line: int, column: int) -> str:
    lines = text.splitlines() or [""]
    shown = lines[min(line, len(lines)) - 1]
    return f"    {shown}\n    {' ' * (column - 1)}^"

"""``schema``: a basic data contract over column names and types. Reads ``df.schema`` only,
so it starts no Spark job."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from cola_core._params import STRING_LIST, STRING_MAP, Param
from cola_core.checks.base import BaseCheck
from cola_core.errors import ColaRuleError
from cola_core.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["SchemaCheck", "normalise_type"]

_ALIASES = {
    "long": "bigint",
    "integer": "int",
    "str": "string",
    "short": "smallint",
    "byte": "tinyint",
    "bool": "boolean",
    "real": "float",
    "float64": "double",
    "timestamp_ltz": "timestamp",
    "text": "string",
    "varchar": "string",
}

_DECIMAL = re.compile(r"^(decimal|numeric|dec)(\(\s*\d+\s*(,\s*\d+\s*)?\))?$")


def normalise_type(name: str) -> str:
    """Lower-case, resolve aliases, and reduce any ``decimal(p,s)`` to ``decimal``."""
    text = re.sub(r"\s+", "", name.strip().lower())
    if _DECIMAL.match(text):
        return "decimal"
    return _ALIASES.get(text, text)


class SchemaCheck(BaseCheck):
    """Required and forbidden columns, and expected types; every problem in one message."""

    params_spec = {
        "required_columns": Param(STRING_LIST),
        "forbidden_columns": Param(STRING_LIST),
        "column_types": Param(STRING_MAP),
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        if not any(key in params for key in cls.params_spec):
            raise ColaRuleError(
                "needs at least one of 'required_columns', 'forbidden_columns' or 'column_types', "
                'e.g. {"type": "schema", "required_columns": ["id"]}'
            )

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        return []  # a missing column is this check's finding, not a malformed rule

    def run(self, df: DataFrame) -> CheckResult:
        actual = {field.name: field.dataType.simpleString() for field in df.schema.fields}
        problems: list[str] = []
        missing = [c for c in self.params.get("required_columns", []) if c not in actual]
        if missing:
            problems.append(f"missing required column(s): {', '.join(missing)}")
        forbidden = [c for c in self.params.get("forbidden_columns", []) if c in actual]
        if forbidden:
            problems.append(f"forbidden column(s) present: {', '.join(forbidden)}")
        for column, expected in self.params.get("column_types", {}).items():
            if column not in actual:
                if column not in missing:
                    problems.append(f"column {column} (expected {expected}) does not exist")
            elif normalise_type(actual[column]) != normalise_type(expected):
                problems.append(f"column {column} is {actual[column]}, expected {expected}")
        if problems:
            return CheckResult(self.rule_type, False, f"schema: {'; '.join(problems)}", len(problems))
        return CheckResult(self.rule_type, True, f"schema: matches ({len(actual)} columns)")

"""``schema``: a basic data contract over column names and types. Reads ``df.schema`` only,
so it starts no Spark job."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.common.values import SPARK_TYPE_ALIASES
from cola_core.errors import ColaRuleError
from cola_core.language.params import STRING_LIST, STRING_MAP, Param
from cola_core.language.result import CheckResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["LOGICAL_TYPES", "SchemaCheck", "normalise_type"]

# The logical types of the Open Data Contract Standard, each as the Spark types that hold it
# (normalised names; complex types by their opening word).
LOGICAL_TYPES: dict[str, frozenset[str]] = {
    "string": frozenset({"string"}),
    "integer": frozenset({"tinyint", "smallint", "int", "bigint"}),
    "number": frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "decimal"}),
    "boolean": frozenset({"boolean"}),
    "date": frozenset({"date"}),
    "timestamp": frozenset({"timestamp", "timestamp_ntz"}),
    "time": frozenset({"time"}),
    "array": frozenset({"array"}),
    "object": frozenset({"struct", "map"}),
}

# decimal(p,s), and char(n)/varchar(n), which a DataFrame reads as plain strings.
_SIZED = re.compile(r"\b(decimal|numeric|dec|varchar|char)(\(\d+(,\d+)?\))?(?![a-z0-9_])")
_WORD = re.compile(r"[a-z_][a-z0-9_]*(?!\w*:)")


def normalise_type(name: str) -> str:
    """Lower-case, resolve aliases, and reduce any ``decimal(p,s)`` to ``decimal``, also inside
    complex types: ``array<long>`` is ``array<bigint>``, ``map<str,decimal(10,2)>`` is
    ``map<string,decimal>``. Struct field names are left alone."""
    text = re.sub(r"\s+", "", name.strip().lower())
    text = _SIZED.sub(lambda m: "decimal" if m.group(1) in ("decimal", "numeric", "dec") else "string", text)
    return _WORD.sub(lambda m: SPARK_TYPE_ALIASES.get(m.group(), m.group()), text)


class SchemaCheck(BaseCheck):
    """Required and forbidden columns, and expected types; every problem in one message.

    Column names match case-insensitively, as Spark resolves them by default. failed_count is
    the number of problems: each missing column, each forbidden column, each wrong type.
    """

    # Self-running without an action: it reads ``df.schema`` and starts no job.
    capabilities = frozenset({Capability.SELF_RUNNING})
    supports_where = False
    params_spec = {
        "required_columns": Param(
            STRING_LIST,
            description="Columns that must exist (names matched case-insensitively)",
        ),
        "forbidden_columns": Param(
            STRING_LIST,
            description="Columns that must not exist (names matched case-insensitively)",
        ),
        "column_types": Param(
            STRING_MAP,
            description="Expected type per column, such as bigint; aliases accepted, decimal(p,s) matches any decimal",
        ),
        "logical_types": Param(
            STRING_MAP,
            description="Expected logical type per column (integer, number, string, date...); each column must exist",
        ),
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        if not any(key in params for key in cls.params_spec):
            raise ColaRuleError(
                "needs at least one of 'required_columns', 'forbidden_columns', 'column_types' or 'logical_types', "
                'e.g. {"type": "schema", "required_columns": ["id"]}'
            )
        for column, kind in params.get("logical_types", {}).items():
            if kind not in LOGICAL_TYPES:
                raise ColaRuleError(
                    f"'logical_types' gives {column!r} the type {kind!r}; a logical type is one of "
                    f"{', '.join(LOGICAL_TYPES)}"
                )

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        # A missing required or typed column is this check's finding, not a malformed rule; a
        # column given a logical type (a contract's property) is one the rule must find.
        return list(self.params.get("logical_types", {}))

    def run(self, df: DataFrame) -> CheckResult:
        """Reads ``df.schema`` only; no Spark job."""
        actual = {field.name.lower(): field.dataType.simpleString() for field in df.schema.fields}
        problems: list[str] = []
        count = 0
        missing = [c for c in self.params.get("required_columns", []) if c.lower() not in actual]
        if missing:
            problems.append(f"missing required column(s): {', '.join(missing)}")
            count += len(missing)
        forbidden = [c for c in self.params.get("forbidden_columns", []) if c.lower() in actual]
        if forbidden:
            problems.append(f"forbidden column(s) present: {', '.join(forbidden)}")
            count += len(forbidden)
        for column, expected in self.params.get("column_types", {}).items():
            found = actual.get(column.lower())
            if found is None:
                if column not in missing:
                    problems.append(f"column {column} (expected {expected}) does not exist")
                    count += 1
            elif normalise_type(found) != normalise_type(expected):
                problems.append(f"column {column} is {found}, expected {expected}")
                count += 1
        for column, kind in self.params.get("logical_types", {}).items():
            found = actual[column.lower()]  # columns_used: the column exists
            if re.split(r"[<(]", normalise_type(found), maxsplit=1)[0] not in LOGICAL_TYPES[kind]:
                problems.append(f"column {column} is {found}, not of logical type {kind}")
                count += 1
        if problems:
            return CheckResult(self.rule_type, False, f"schema: {'; '.join(problems)}", count)
        return CheckResult(self.rule_type, True, f"schema: matches ({len(actual)} columns)")

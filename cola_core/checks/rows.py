"""Row rules written by the user: ``expression`` (a SQL condition every row must meet) and
``castable`` (string values that must convert to a Spark type)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.common.columns import column_of, not_true, quote, top_level_name
from cola_core.common.formatting import plural, render_code
from cola_core.common.spark_versions import is_pyspark_4
from cola_core.common.values import SPARK_TYPE_ALIASES
from cola_core.errors import ColaRuleError
from cola_core.guards.sqlguard import check_condition
from cola_core.language.params import BOOL, STRING, Param

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["CASTABLE_TYPES", "CastableCheck", "CountedRowCheck", "ExpressionCheck"]


class CountedRowCheck(BaseCheck):
    """A row rule whose result is the number of rows breaking its predicate; its messages
    open with the rule's code, declared or rendered."""

    capabilities = frozenset({Capability.ROW})

    def message_label(self) -> str:
        return self.code


class ExpressionCheck(CountedRowCheck):
    """Every row meets a SQL boolean ``expression``; NULL breaks it unless ``null_is_valid``."""

    params_spec = {
        "expression": Param(
            STRING, required=True,
            description="SQL boolean condition every row must meet; a row breaks the rule when it is not TRUE",
        ),
        "null_is_valid": Param(
            BOOL,
            description="When true, a row whose condition is NULL passes instead of breaking the rule",
        ),
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        check_condition(params["expression"], "expression")

    def render_code(self) -> str:
        return render_code(self.rule_type, self.params["expression"])

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        return []  # Spark resolves the expression's columns: see conditions()

    def conditions(self) -> list[str]:
        return [*super().conditions(), self.params["expression"]]

    def sql_text(self) -> str | None:
        return str(self.params["expression"])

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        holds = F.expr(self.params["expression"])
        if self.params.get("null_is_valid", False):
            return F.call_function("not", F.ifnull(holds, F.lit(True)))
        return not_true(holds)

    def describe_pass(self) -> str:
        return "every row meets the expression"

    def describe_failure(self, failed: int) -> str:
        nulls = "" if self.params.get("null_is_valid") else " (NULL counts as not met)"
        verb = "does" if failed == 1 else "do"
        return f"{plural(failed, 'row')} {verb} not meet the expression{nulls}"


CASTABLE_TYPES = ("boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "date", "timestamp")
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$")


def _spark_type(name: str) -> str:
    text = name.strip().lower()
    text = SPARK_TYPE_ALIASES.get(text, text)
    match = _DECIMAL.match(text)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2) or 0)
        if not 1 <= precision <= 38 or scale > precision:
            raise ColaRuleError(f"'to' is {name!r}; decimal precision must be 1..38 and scale at most the precision")
        return f"decimal({precision},{scale})"
    if text not in CASTABLE_TYPES:
        raise ColaRuleError(
            f"'to' is {name!r}; it must be one of {', '.join(CASTABLE_TYPES[:-3])}, decimal(p,s), date, timestamp"
        )
    return text


class CastableCheck(CountedRowCheck):
    """Present values of ``column`` convert to the Spark type ``to``."""

    params_spec = {
        "column": Param(
            STRING, required=True,
            description="Column whose present values must convert to the type; NULLs pass",
        ),
        "to": Param(
            STRING, required=True,
            description="Spark type the values must convert to, such as int, double, decimal(p,s), date or timestamp",
        ),
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        _spark_type(params["to"])

    @property
    def target_type(self) -> str:
        return _spark_type(self.params["to"])

    def render_code(self) -> str:
        return render_code(self.rule_type, self.params["column"], self.target_type)

    def violation(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        name = self.params["column"]
        column = column_of(df, name)
        # try_cast yields NULL where the conversion fails, never an error under ANSI mode.
        if is_pyspark_4():
            converted = column.try_cast(self.target_type)
        else:  # pyspark 3.5 has try_cast only in SQL text
            top_level = top_level_name(df.columns, name)
            converted = F.expr(f"try_cast({name if top_level is None else quote(top_level)} AS {self.target_type})")
        # Neither side can be NULL, so neither can the predicate.
        return F.isnotnull(column) & F.isnull(converted)

    def describe_pass(self) -> str:
        return f"every present value casts to {self.target_type}"

    def describe_failure(self, failed: int) -> str:
        return f"{plural(failed, 'value')} cannot be cast to {self.target_type}"

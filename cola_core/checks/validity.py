"""Validity config for ``invalid_*`` metrics, and the named ``valid_format`` patterns.

Soda's semantics: a value is valid when it satisfies every validity setting given, and
invalid when it is present (neither NULL nor one of ``missing_values``) and breaks at least
one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from cola_core._params import NUMBER, SCALAR_LIST, STRING, WHOLE, Param
from cola_core.errors import ColaRuleError

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["MISSING_PARAMS", "NAMED_FORMATS", "VALIDITY_PARAMS", "invalid_condition", "missing_condition"]

# Java regexes (Spark's rlike), anchored: a format describes the whole value.
NAMED_FORMATS: dict[str, str] = {
    "email": r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "phone": r"^\+?[0-9][0-9 ()./-]{5,}[0-9]$",
    "integer": r"^[-+]?[0-9]+$",
    "decimal": r"^[-+]?([0-9]+([.,][0-9]+)?|[.,][0-9]+)$",
    "number": r"^[-+]?([0-9]+([.,][0-9]+)?|[.,][0-9]+)([eE][-+]?[0-9]+)?$",
    "percentage": r"^[-+]?([0-9]+([.,][0-9]+)?|[.,][0-9]+) ?%$",
    "date": r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
    "timestamp": (
        r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[T ]([01][0-9]|2[0-3]):[0-5][0-9]"
        r"(:[0-5][0-9](\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$"
    ),
    "ip": (
        r"^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$"
        r"|^([0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}$"
    ),
    "ipv4": r"^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$",
    "url": r"^(https?|ftp)://[^\s/$.?#][^\s]*$",
    "boolean": r"^(?i)(true|false|yes|no|y|n|t|f|0|1)$",
    "alphanumeric": r"^[A-Za-z0-9]+$",
    "credit_card": r"^[0-9]{4}[ -]?[0-9]{4}[ -]?[0-9]{4}[ -]?[0-9]{1,7}$",
    "cpf": r"^[0-9]{3}\.?[0-9]{3}\.?[0-9]{3}-?[0-9]{2}$",
    "cnpj": r"^[0-9]{2}\.?[0-9]{3}\.?[0-9]{3}/?[0-9]{4}-?[0-9]{2}$",
}

MISSING_PARAMS = {"missing_values": Param(SCALAR_LIST)}

VALIDITY_PARAMS = {
    "valid_values": Param(SCALAR_LIST),
    "invalid_values": Param(SCALAR_LIST),
    "valid_format": Param(STRING),
    "valid_regex": Param(STRING),
    "valid_min": Param(NUMBER),
    "valid_max": Param(NUMBER),
    "valid_min_length": Param(WHOLE),
    "valid_max_length": Param(WHOLE),
    "valid_length": Param(WHOLE),
}


def validate_validity(params: Mapping[str, Any], rule_type: str) -> None:
    """At least one validity setting, a known format, a compilable regex."""
    from cola_core.checks.core import compile_pattern

    if not any(key in params for key in VALIDITY_PARAMS):
        raise ColaRuleError(
            f"{rule_type} needs at least one validity setting ({', '.join(VALIDITY_PARAMS)}), "
            'e.g. {"valid_format": "email"}'
        )
    fmt = params.get("valid_format")
    if fmt is not None and fmt not in NAMED_FORMATS:
        raise ColaRuleError(f"unknown valid_format {fmt!r}; known formats are {', '.join(sorted(NAMED_FORMATS))}")
    if "valid_regex" in params:
        compile_pattern(params["valid_regex"], "valid_regex")
    for low, high in (("valid_min", "valid_max"), ("valid_min_length", "valid_max_length")):
        if params.get(low) is not None and params.get(high) is not None and params[low] > params[high]:
            raise ColaRuleError(f"'{low}' ({params[low]}) is greater than '{high}' ({params[high]})")


def missing_condition(column: Column, params: Mapping[str, Any]) -> Column:
    """True when the value is NULL or one of ``missing_values``."""
    missing = column.isNull()
    if params.get("missing_values"):
        missing = missing | column.isin(list(params["missing_values"]))
    from pyspark.sql import functions as F

    return F.coalesce(missing, F.lit(False))


def invalid_condition(column: Column, params: Mapping[str, Any]) -> Column:
    """True when the value is present and breaks at least one validity setting."""
    from pyspark.sql import functions as F

    text = column.cast("string")
    valid: list[Column] = []
    if params.get("valid_values") is not None:
        valid.append(column.isin(list(params["valid_values"])))
    if params.get("invalid_values") is not None:
        valid.append(~column.isin(list(params["invalid_values"])))
    if params.get("valid_format") is not None:
        valid.append(text.rlike(NAMED_FORMATS[params["valid_format"]]))
    if params.get("valid_regex") is not None:
        valid.append(text.rlike(params["valid_regex"]))
    if params.get("valid_min") is not None:
        valid.append(column >= F.lit(params["valid_min"]))
    if params.get("valid_max") is not None:
        valid.append(column <= F.lit(params["valid_max"]))
    if params.get("valid_min_length") is not None:
        valid.append(F.length(text) >= params["valid_min_length"])
    if params.get("valid_max_length") is not None:
        valid.append(F.length(text) <= params["valid_max_length"])
    if params.get("valid_length") is not None:
        valid.append(F.length(text) == params["valid_length"])
    all_valid = valid[0]
    for condition in valid[1:]:
        all_valid = all_valid & condition
    # A comparison that yields NULL on a present value (e.g. a non-numeric string against
    # valid_min) cannot vouch for the value, so it counts as invalid.
    return ~missing_condition(column, params) & ~F.coalesce(all_valid, F.lit(False))

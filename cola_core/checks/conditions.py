"""Validity config for ``invalid_*`` metrics, the named ``valid_format`` patterns, and how rule
values are compared with a column of any type.

Soda's semantics: a value is valid when it satisfies every validity setting given, and
invalid when it is present (neither NULL nor one of ``missing_values``) and breaks at least
one of them.

Spark runs with ANSI mode on by default since 4.0, so comparing a string column with a number
(or an int column with ``'N/A'``) raises ``CAST_INVALID_INPUT`` in the middle of a job. Every
comparison here is therefore typed from the column's schema first: rule values that cannot be
of the column's type are dropped in Python (they can never be equal to a value of it), and
strings are only cast after a regex has shown that the text has the right shape, and then with
try-cast semantics: ``2022-02-30`` has the shape of a date but is none, and a plain cast of it
would still fail the job.

Every pattern here ends in ``\\z`` (the absolute end of the text), never ``$``: Java's ``$``
also matches just before a final line terminator (``\\n``, ``\\r\\n``, ``\\r``, ``\\u0085``,
``\\u2028``, ``\\u2029``), so ``"user@example.com\\n"`` would pass as an email. Python's ``re``
spells the absolute end ``\\Z``; ``python_pattern`` translates for the checks done in Python.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from cola_core.common.columns import is_in, is_true, matches, try_cast
from cola_core.common.formatting import format_value
from cola_core.common.spark_versions import is_pyspark_4
from cola_core.common.sqltext import string_text
from cola_core.common.values import DATE_TEXT, DATETIME_TEXT, is_datetime_text, is_number
from cola_core.errors import ColaRuleError
from cola_core.guards.regex import compile_pattern, end_anchored
from cola_core.language.params import NUMBER, SCALAR_LIST, STRING, WHOLE, Param

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = [
    "CALENDAR_FORMATS",
    "LARGEST_EXACT_NUMBER",
    "MISSING_PARAMS",
    "NAMED_FORMATS",
    "VALIDITY_PARAMS",
    "column_type",
    "comparable_values",
    "datetime_of_text",
    "format_match_text",
    "invalid_condition",
    "missing_condition",
    "number_literal",
    "numeric_text",
    "text_of",
    "type_family",
    "validate_validity",
]

_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"({_OCTET}\.){{3}}{_OCTET}"
_HEX = r"[0-9A-Fa-f]{1,4}"
# Every way RFC 4291 allows eight 16-bit groups to be written: in full, with one '::' standing
# for a run of zero groups, or with the last 32 bits as a dotted IPv4 address.
_IPV6 = "|".join(
    (
        rf"({_HEX}:){{7}}{_HEX}",
        rf"({_HEX}:){{1,7}}:",
        rf"({_HEX}:){{1,6}}:{_HEX}",
        rf"({_HEX}:){{1,5}}(:{_HEX}){{1,2}}",
        rf"({_HEX}:){{1,4}}(:{_HEX}){{1,3}}",
        rf"({_HEX}:){{1,3}}(:{_HEX}){{1,4}}",
        rf"({_HEX}:){{1,2}}(:{_HEX}){{1,5}}",
        rf"{_HEX}:(:{_HEX}){{1,6}}",
        rf":((:{_HEX}){{1,7}}|:)",
        rf"({_HEX}:){{6}}{_IPV4}",
        rf"::([Ff]{{4}}(:0{{1,4}})?:)?{_IPV4}",
        rf"({_HEX}:){{1,4}}:{_IPV4}",
    )
)
_IPV6_ZONED = rf"({_IPV6})(%[0-9A-Za-z._~-]+)?"
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_HOST = rf"({_LABEL}\.)*{_LABEL}"
_DATE = DATE_TEXT
_TIME = r"([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.,][0-9]{1,9})?)?"
_ZONE = r"([Zz]|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)"
_NUMBER = r"[-+]?([0-9]+([.,][0-9]+)?|[.,][0-9]+)"

# Java regexes (Spark's rlike), anchored at both ends (``\z``, see the module docstring): a
# format describes the whole value. Through ``python_pattern`` Python's ``re`` reads them too.
NAMED_FORMATS: dict[str, str] = {
    # RFC 5322 dot-atoms on the left; host names of letters, digits and inner hyphens, and a
    # top-level domain of letters (or an IDN 'xn--' label) on the right.
    "email": rf"^{_EMAIL_ATOM}(\.{_EMAIL_ATOM})*@({_LABEL}\.)+([A-Za-z]{{2,63}}|xn--[A-Za-z0-9-]{{1,59}})\z",
    "uuid": r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\z",
    # 7 to 15 digits (E.164's maximum), with an optional leading '+', and spaces, dots,
    # hyphens, slashes or parentheses between them: '+55 (11) 98765-4321', '555-2368'.
    "phone": r"^\+?\(?[0-9](\)?[ ./-]{0,2}\(?[0-9]){6,14}\z",
    "integer": r"^[-+]?[0-9]+\z",
    "decimal": rf"^{_NUMBER}\z",
    "number": rf"^{_NUMBER}([eE][-+]?[0-9]+)?\z",
    "percentage": rf"^{_NUMBER} ?%\z",
    "date": rf"^{_DATE}\z",
    "timestamp": rf"^{_DATE}[Tt ]{_TIME}{_ZONE}?\z",
    "ip": rf"^({_IPV4}|{_IPV6_ZONED})\z",
    "ipv4": rf"^{_IPV4}\z",
    # A scheme, an optional user, a host name, IPv4 or bracketed IPv6, an optional port, then
    # anything but whitespace (Java's \s is ASCII only, so the Unicode line terminators are
    # named too).
    "url": (
        rf"(?i)^(https?|ftps?|sftp)://([^\s\x85\u2028\u2029/?#@]+@)?({_HOST}|{_IPV4}|\[({_IPV6})\])"
        r"(:[0-9]{1,5})?([/?#][^\s\x85\u2028\u2029]*)?\z"
    ),
    "boolean": r"(?i)^(true|false|yes|no|y|n|t|f|0|1)\z",
    "alphanumeric": r"^[A-Za-z0-9]+\z",
    # 13 to 19 digits (every card scheme), optionally grouped by single spaces or hyphens, so
    # both Visa's 4-4-4-4 and American Express's 4-6-5 pass. No Luhn check.
    "credit_card": r"^[0-9]([ -]?[0-9]){12,18}\z",
    # Brazilian taxpayer numbers, fully punctuated or bare digits.
    "cpf": r"^([0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}|[0-9]{11})\z",
    # Since July 2026 new CNPJs may carry upper-case letters in their first 12 positions; the
    # two check digits stay numeric.
    "cnpj": r"^([0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}/[0-9A-Z]{4}-[0-9]{2}|[0-9A-Z]{12}[0-9]{2})\z",
}

MISSING_PARAMS = {
    "missing_values": Param(
        SCALAR_LIST,
        description="Values that count as missing besides NULL, such as [\"\", \"N/A\"]; never invalid",
    ),
}

VALIDITY_PARAMS = {
    "valid_values": Param(SCALAR_LIST, description="Values a valid value is one of"),
    "invalid_values": Param(SCALAR_LIST, description="Values a valid value is none of"),
    "valid_format": Param(
        STRING,
        description="Named format a valid value matches, such as email, uuid, phone, integer, date or cpf",
        choices=tuple(NAMED_FORMATS),
    ),
    "valid_regex": Param(
        STRING,
        description="Java regex a valid value matches somewhere (anchor it with ^...$ for the whole value)",
    ),
    "valid_min": Param(
        NUMBER,
        description="Smallest valid number (inclusive); a present value that is no number is invalid",
    ),
    "valid_max": Param(
        NUMBER,
        description="Largest valid number (inclusive); a present value that is no number is invalid",
    ),
    "valid_min_length": Param(
        WHOLE,
        description="Fewest characters a valid value has (inclusive), counted on its text",
    ),
    "valid_max_length": Param(WHOLE, description="Most characters a valid value has (inclusive), counted on its text"),
    "valid_length": Param(WHOLE, description="Exact number of characters a valid value has, counted on its text"),
}

# Text that Spark's string-to-double cast reads as a number: ASCII digits, with the ASCII
# whitespace Spark trims around them (Java's \s is ASCII only; Python's is read with re.ASCII
# to match). It ends in \z, never $, which would let "1\u2028" through to the cast.
_NUMERIC_TEXT = r"^\s*[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?\s*\z"
# The same test for rule values (see _rule_number).
_NUMERIC_PYTHON = re.compile(r"\A\s*[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?\s*\Z", re.ASCII)
# The named formats whose values name a calendar day; the regex checks the shape, and a
# try-cast of the leading yyyy-MM-dd refuses a day the calendar lacks (2023-02-29).
CALENDAR_FORMATS = ("date", "timestamp")


def validate_validity(params: Mapping[str, Any], rule_type: str) -> None:
    """At least one validity setting, a known format, a compilable regex."""
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


# -- column types ------------------------------------------------------------------------


def column_type(df: DataFrame, column: str) -> DataType:
    """The Spark type of ``column`` in ``df``, read from the schema (no Spark job)."""
    for field in df.schema.fields:
        if field.name == column:
            return field.dataType
    lowered = column.lower()
    for field in df.schema.fields:
        if field.name.lower() == lowered:
            return field.dataType
    # A nested field such as 'address.city': let Spark's analyzer resolve it.
    return df.select(column).schema.fields[0].dataType


def text_of(column: Column, data_type: DataType | None) -> Column:
    """``column`` as text; a string column is its own text (the cast would be a no-op that
    still costs the JVM round trips of a Column method)."""
    return column if type_family(data_type) == "string" else column.cast("string")


def type_family(data_type: DataType | None) -> str:
    """``numeric``, ``float`` (float/double, which can hold NaN), ``string``, ``date``,
    ``timestamp``, ``boolean``, or ``other``; ``unknown`` when no type is given."""
    from pyspark.sql import types as T

    if data_type is None:
        return "unknown"
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return "float"
    if isinstance(data_type, T.NumericType):
        return "numeric"
    if isinstance(data_type, (T.StringType, T.VarcharType, T.CharType)):
        return "string"
    if isinstance(data_type, T.DateType):
        return "date"
    if isinstance(data_type, (T.TimestampType, T.TimestampNTZType)):
        return "timestamp"
    if isinstance(data_type, T.BooleanType):
        return "boolean"
    return "other"


def numeric_text(text: Column) -> Column:
    """``text`` as a double when it holds a number, else NULL (never a cast error).

    The regex keeps out what Spark's cast would read too loosely (``'1d'``, ``'Infinity'``);
    the try-cast makes sure no text that slips past it can fail the job.
    """
    from pyspark.sql import functions as F

    shaped = F.when(matches(text, _NUMERIC_TEXT), text)
    if is_pyspark_4():
        return try_cast(shaped, "double")
    # pyspark 3.5 has no try-cast to double; the \z-anchored ASCII shape above is text that
    # Spark's cast reads without error.
    return shaped.cast("double")


def datetime_of_text(text: Column, type_name: str = "timestamp") -> Column:
    """``text`` as a ``type_name`` when it is ISO text naming a real instant, else NULL.

    The regex keeps Spark's looser readings out (``'2024'`` and ``'2024-1-5'`` cast to dates);
    the try-cast turns a day the calendar lacks (``'2022-02-30'``) into NULL instead of a
    ``CAST_INVALID_INPUT`` that would fail the whole job.
    """
    from pyspark.sql import functions as F

    return try_cast(F.when(matches(text, DATETIME_TEXT), text), type_name)


# Spark's widest exact number is decimal(38,0); a bigint literal stops at 2**63 - 1.
LARGEST_EXACT_NUMBER = 10**38 - 1
_LONG = range(-(2**63), 2**63)


def number_literal(value: Any) -> Column:
    """A rule number as a Spark literal: a whole number beyond bigint becomes decimal(38,0)
    (``F.lit`` of one raises a Py4J error). The rule parser refuses numbers of more than 38
    digits, so every whole number in a rule fits."""
    from pyspark.sql import functions as F

    if isinstance(value, int) and not isinstance(value, bool) and value not in _LONG:
        return F.lit(Decimal(value)).cast("decimal(38,0)")
    return F.lit(value)


def _rule_number(text: str, data_type: DataType) -> Any:
    """A rule's text as the number Spark would read it as, for a ``data_type`` column; None
    when it is no number, or none that a value of that type could equal.

    Whole numbers stay exact Python ints (a float would make ``9007199254740993`` equal to
    ``9007199254740992``); fractions are decimals on a decimal column, floats elsewhere.
    """
    from pyspark.sql import types as T

    if not _NUMERIC_PYTHON.match(text):
        return None
    number = Decimal(text.strip())
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return float(number)  # a double column compares in doubles anyway
    if number == number.to_integral_value():
        whole = int(number) if number.adjusted() < 39 else None  # no Spark number holds more
        return whole if whole is not None and abs(whole) <= LARGEST_EXACT_NUMBER else None
    if isinstance(data_type, T.DecimalType):
        # A fraction with more decimals than the column's scale equals none of its values.
        _, digits, exponent = number.as_tuple()
        # A finite number (the shape above has no NaN or infinity), so the exponent is an int.
        assert isinstance(exponent, int)
        while exponent < 0 and digits[-1:] == (0,):  # 0.10 has the scale of 0.1
            digits, exponent = digits[:-1], exponent + 1
        return number if -exponent <= data_type.scale and len(digits) <= 38 else None
    return None  # an integral column holds no fraction


def comparable_values(values: Sequence[Any], data_type: DataType | None) -> list[Any]:
    """The rule values that a value of ``data_type`` could equal, converted for a Spark literal.

    Values of another kind are dropped: ``'N/A'`` can never equal a value of an int column,
    and leaving it in would make ANSI Spark fail the whole job trying to cast it.
    """
    family = type_family(data_type)
    kept: list[Any] = []
    for value in values:
        if value is None:
            continue  # NULL never equals anything; missing-ness is tested with isNull.
        if family == "string":
            kept.append(value if isinstance(value, str) else format_value(value))
        elif family in ("numeric", "float"):
            number = _rule_number(value, data_type) if isinstance(value, str) and data_type is not None else value
            if is_number(number):
                kept.append(number)
        elif family == "boolean":
            if isinstance(value, bool):
                kept.append(value)
            elif isinstance(value, str) and value.strip().lower() in ("true", "false"):
                kept.append(value.strip().lower() == "true")
        elif family in ("date", "timestamp"):
            text = format_value(value) if isinstance(value, (dt.date, dt.datetime)) else value
            # ISO text is cast by Spark in the session time zone, like any SQL literal.
            if isinstance(text, str) and is_datetime_text(text):
                kept.append(text)
        else:
            kept.append(value)
    return kept


def _is_in(column: Column, values: Sequence[Any], data_type: DataType | None) -> Column:
    from pyspark.sql import functions as F

    if data_type is None:
        return is_in(column, list(values))
    kept = comparable_values(values, data_type)
    if not kept:
        return F.lit(False)
    family = type_family(data_type)
    if family in ("date", "timestamp"):
        # '2022-02-30' has the shape of a date and is none: try-cast makes it a NULL, where a
        # plain cast would fail the job. It equals nothing, so a value it does not match is
        # not in the list (false), never unknown (NULL), which would break invalid_values.
        target = data_type.simpleString()
        return F.coalesce(column.isin([try_cast(F.lit(text), target) for text in kept]), F.lit(False))
    if any(isinstance(value, int) and not isinstance(value, bool) and value not in _LONG for value in kept):
        return column.isin([number_literal(value) if is_number(value) else value for value in kept])
    return is_in(column, kept)


# -- conditions --------------------------------------------------------------------------


def missing_condition(column: Column, params: Mapping[str, Any], data_type: DataType | None = None) -> Column:
    """True when the value is NULL or one of ``missing_values``.

    Args:
        data_type: the column's Spark type; when given, ``missing_values`` that cannot be of
            that type are ignored instead of making Spark fail on the cast.
    """
    from pyspark.sql import functions as F

    missing = F.isnull(column)
    if not params.get("missing_values"):
        return missing  # never NULL
    return is_true(missing | _is_in(column, params["missing_values"], data_type))


def format_match_text(text_column: str, name: str) -> str:
    """SQL text true when the text column ``text_column`` (an identifier) holds a value the named
    format ``name`` accepts, as :func:`invalid_condition` judges it: a match, and for a calendar
    format a real date. NULL, or false, otherwise."""
    match = f"{text_column} RLIKE {string_text(NAMED_FORMATS[name])}"
    if name in CALENDAR_FORMATS:
        return f"{match} AND try_cast(substring({text_column}, 1, 10) AS DATE) IS NOT NULL"
    return match


def invalid_condition(column: Column, params: Mapping[str, Any], data_type: DataType | None = None) -> Column:
    """True when the value is present and breaks at least one validity setting.

    Args:
        data_type: the column's Spark type. ``valid_min`` / ``valid_max`` compare numbers: a
            numeric column directly, any other column through its text, where a value that is
            not a number is invalid.
    """
    from pyspark.sql import functions as F

    family = type_family(data_type)
    text = text_of(column, data_type)
    number = column
    if params.get("valid_min") is not None or params.get("valid_max") is not None:
        if family == "float":
            number = F.when(F.call_function("not", F.isnan(column)), column)  # NaN lies in no interval
        elif family != "numeric":
            number = numeric_text(text)
    valid: list[Column] = []
    if params.get("valid_values") is not None:
        valid.append(_is_in(column, params["valid_values"], data_type))
    if params.get("invalid_values") is not None:
        valid.append(F.call_function("not", _is_in(column, params["invalid_values"], data_type)))
    if params.get("valid_format") is not None:
        valid.append(matches(text, NAMED_FORMATS[params["valid_format"]]))
        if params["valid_format"] in CALENDAR_FORMATS:
            valid.append(F.isnotnull(try_cast(F.substring(text, 1, 10), "date")))
    if params.get("valid_regex") is not None:
        valid.append(matches(text, end_anchored(params["valid_regex"])))
    if params.get("valid_min") is not None:
        valid.append(number >= number_literal(params["valid_min"]))
    if params.get("valid_max") is not None:
        valid.append(number <= number_literal(params["valid_max"]))
    if params.get("valid_min_length") is not None:
        valid.append(F.length(text) >= params["valid_min_length"])
    if params.get("valid_max_length") is not None:
        valid.append(F.length(text) <= params["valid_max_length"])
    if params.get("valid_length") is not None:
        valid.append(F.length(text) == params["valid_length"])
    all_valid = valid[0]
    for condition in valid[1:]:
        all_valid = all_valid & condition
    # A setting that yields NULL on a present value (e.g. a non-numeric string against
    # valid_min) cannot vouch for the value, so it counts as invalid.
    return F.call_function("not", missing_condition(column, params, data_type) | is_true(all_valid))

"""What the size guard knows of a value, and what each call builds from its arguments.

:mod:`cola_core.guards.sqlsize` walks the expression; this module says, for one call, how
large a value it builds from what is known of its arguments (:class:`Size`), and reads
constants: numbers, constant arithmetic, casts of texts, dates, timestamps and intervals
(:mod:`cola_core.guards.sqltime`). A size is only ever needed to its order of magnitude, so
each is an estimate that errs large.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cola_core.guards import sqltime
from cola_core.guards.sqllex import Token
from cola_core.guards.sqltree import Item

__all__ = ["SIZE_BUILDERS", "Size", "arithmetic", "built", "content", "interval", "number", "time_of"]

# Functions that build a value of a size their arguments give, and how (see built).
SIZE_BUILDERS = {
    "repeat": "the length of its text times its count",
    "array_repeat": "the size of its element times its count",
    "lpad": "its length",
    "rpad": "its length",
    "space": "its count",
    "randstr": "its length",
    "sequence": "(stop - start) / step elements",
    "format_number": "its decimal places",
    "format_string": "the widths and precisions of its format",
    "printf": "the widths and precisions of its format",
    "concat_ws": "its arguments added, and its separator between each two elements",
    "array_join": "its array's elements, and its delimiter between each two",
    "replace": "its text times the length of its replacement",
    "regexp_replace": "its text times the length of its replacement",
}
# Calls whose value is one number, whatever their arguments hold.
_SCALAR = frozenset(
    "length char_length character_length octet_length bit_length len size cardinality array_size instr locate "
    "position ascii hash xxhash64 crc32 md5 sha sha1 sha2 count sum avg mean min_by max_by array_position "
    "find_in_set levenshtein".split()
)
# Calls of constant numbers: a size may be written with them.
_NUMERIC: dict[str, Callable[[list[float]], float]] = {
    "power": lambda a: a[0] ** a[1], "pow": lambda a: a[0] ** a[1], "abs": lambda a: abs(a[0]),
    "ceil": lambda a: math.ceil(a[0]), "ceiling": lambda a: math.ceil(a[0]), "floor": lambda a: math.floor(a[0]),
    "round": lambda a: round(a[0]), "bround": lambda a: round(a[0]), "greatest": max, "least": min,
    "shiftleft": lambda a: a[0] * 2.0 ** a[1], "exp": lambda a: math.exp(a[0]),
}
_CASTS = frozenset("int integer bigint long smallint tinyint short byte double float decimal string".split())
_TIMES = frozenset("to_timestamp try_to_timestamp to_timestamp_ntz to_timestamp_ltz to_date try_to_date".split())
_NOW = frozenset("current_timestamp current_date curdate now localtimestamp".split())
# A width or precision in a format string: %2000000000s, %.999999999f, %1$-5000000d.
_FORMAT_SIZES = re.compile(r"%(?:\d+\$)?[-#+ 0,(<]*(\d*)(?:\.(\d+))?[a-zA-Z%]")
# Constant arithmetic longer than this is not read (no size is written so).
_MAX_TERMS = 200


@dataclass(frozen=True)
class Size:
    """What is known of a value: how large it is, and what it is when it is a constant.

    ``chars`` is the characters of a text or the elements of an array (each weighed by its
    own size); ``count`` its elements (1 for a text); ``work`` what evaluating it builds in
    all, its own value included; ``value`` its number, or a date, timestamp or interval in
    seconds (``time`` says it is a date or timestamp); ``text`` the constant text it is."""

    chars: float = 1.0
    count: float = 1.0
    work: float = 0.0
    value: float | None = None
    text: str | None = None
    time: bool = False



def built(name: str, parts: list[Size]) -> Size:
    """The value a call builds from its arguments' sizes (lambdas aside)."""

    def value(at: int, otherwise: float | None = None) -> float | None:
        known = parts[at].value if at < len(parts) else None
        return otherwise if known is None else known

    first = parts[0] if parts else Size()
    if name in ("repeat", "array_repeat"):
        times = value(1)
        chars = first.chars * times if times is not None else first.chars
        return Size(chars=chars, count=times if name == "array_repeat" and times is not None else 1.0)
    if name in ("lpad", "rpad", "format_number"):
        return Size(chars=value(1, first.chars) or 0.0)
    if name in ("space", "randstr"):
        return Size(chars=value(0, 1.0) or 0.0)
    if name == "sequence":
        return _sequence(parts)
    if name in ("format_string", "printf"):
        widths = [int(width) for match in _FORMAT_SIZES.finditer(first.text or "") for width in match.groups()
                  if width]
        return Size(chars=max([float(w) for w in widths] + [sum(p.chars for p in parts[1:]), first.chars]))
    if name == "concat_ws":
        joined = parts[1:]
        return Size(chars=sum(p.chars for p in joined) + first.chars * max(sum(p.count for p in joined) - 1, 0))
    if name == "array_join":
        return Size(chars=first.chars + sum(p.chars for p in parts[1:]) * max(first.count - 1, 0))
    if name in ("replace", "regexp_replace"):
        return Size(chars=first.chars * max(parts[2].chars, 1.0) if len(parts) > 2 else first.chars)
    if name in _SCALAR:
        return Size(value=float(len(first.text)) if name in ("length", "char_length", "len") and first.text
                     is not None else None)
    return _constant_call(name, parts)


def _constant_call(name: str, parts: list[Size]) -> Size:
    """Casts, numbers and times of constants; any other call adds its arguments up."""
    values = [p.value for p in parts]
    known = [v for v in values if v is not None]
    first = parts[0] if parts else Size()
    if name in _CASTS and len(parts) == 1:
        return first
    if name in _NUMERIC and parts and len(known) == len(values):
        try:
            return Size(value=_finite(float(_NUMERIC[name](known))))
        except (OverflowError, ValueError, ZeroDivisionError, TypeError):
            return Size()
    if (name in _TIMES or name in sqltime.TIME_WORDS) and first.text is not None:
        return time_of(first.text)
    if name in _NOW:
        return Size(value=sqltime.now(), time=True)
    if name in ("date_add", "date_sub") and len(known) == len(values) == 2 and first.time:
        sign = 1 if name == "date_add" else -1
        return Size(value=known[0] + sign * known[1] * sqltime.INTERVAL_UNITS["day"], time=True)
    if name == "make_date" and len(known) == len(values) == 3:
        return time_of("-".join(str(int(v)) for v in known))
    if name in ("make_interval", "make_dt_interval", "make_ym_interval") and len(known) == len(values):
        units = {"make_interval": "year month week day hour minute second", "make_dt_interval":
                 "day hour minute second", "make_ym_interval": "year month"}[name].split()
        return Size(value=sum(v * sqltime.INTERVAL_UNITS[u] for v, u in zip(known, units, strict=False)))
    return Size(chars=sum(p.chars for p in parts) if parts else 1.0, count=max((p.count for p in parts),
                                                                               default=1.0))


def _sequence(parts: list[Size]) -> Size:
    start = parts[0].value if parts else None
    stop = parts[1].value if len(parts) > 1 else None
    times = any(p.time for p in parts[:2])
    step = parts[2].value if len(parts) > 2 else (sqltime.DEFAULT_STEP if times else 1.0)
    if start is None or stop is None or not step:
        return Size()
    elements = abs(stop - start) / abs(step) + 1
    return Size(chars=elements, count=elements) if math.isfinite(elements) else Size(chars=math.inf,
                                                                                       count=math.inf)


def interval(items: Sequence[Item], position: int) -> tuple[Size, int]:
    """``INTERVAL 1 DAY 2 HOURS``, ``INTERVAL '1' SECOND``, ``INTERVAL '1 second'``: its
    length in seconds, and the position past it."""
    words: list[str] = []
    while position < len(items):
        item = items[position]
        if not isinstance(item, Token):
            break
        if item.kind == "number":
            words.append(_number_text(item.text))
        elif item.kind == "string":
            words.append(content(item))
        elif item.kind == "word" and (item.text.lower().removesuffix("s") in sqltime.INTERVAL_UNITS
                                      or item.is_word("TO")):
            words.append(item.text)
        else:
            break
        position += 1
    return Size(value=sqltime.interval_seconds(words)), position


def time_of(text: str) -> Size:
    seconds = sqltime.seconds_of(text)
    return Size(value=seconds, time=seconds is not None)


def arithmetic(terms: list[str]) -> float | None:
    if len(terms) > _MAX_TERMS:
        return None
    try:
        return _finite(_evaluate(ast.parse(" ".join(terms), mode="eval").body))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError, TypeError):
        return None


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


def number(text: str) -> float | None:
    try:
        value = float(_number_text(text.strip()))
    except ValueError:
        return None
    return _finite(value)


def _number_text(text: str) -> str:
    # Spark's type suffixes (10L, 5S, 1Y, 2.5BD, 1e3D, 1.5F) name a type, not a value.
    return re.sub(r"(?i)(bd|[lsydf])$", "", text)


def content(token: Item) -> str:
    """A string literal's text, without its quotes (or a raw string's ``r``)."""
    assert isinstance(token, Token)
    text = token.text[1:] if token.text[:1] in "rR" else token.text
    return text[1:-1]


def _is_string(item: Item) -> bool:
    return isinstance(item, Token) and item.kind == "string"


def _symbol(item: Item, text: str) -> bool:
    return isinstance(item, Token) and item.kind == "symbol" and item.text == text


_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)


def _evaluate(node: ast.expr) -> float:
    """A constant arithmetic expression, as a float; anything else is a ValueError."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPERATORS):
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
        if isinstance(node.op, ast.FloorDiv):
            return float(math.trunc(left / right))
        return left % right
    raise ValueError("not a constant number")

"""Calls that build a value as large as their arguments say, bounded before Spark runs them.

``repeat('a', 2000000000)`` asks Spark for a string of two billion characters, and
``array_repeat(id, 2000000000)`` for an array of two billion elements: one such value
exhausts the JVM's memory, and a constant one is built on the driver while Spark folds the
plan. A rules author must not be able to do that, so the SQL guard (``cola_core.guards.sqlguard``)
refuses, in pure Python, every call of a size-building function whose size is a constant
above :data:`MAX_BUILT_SIZE`, nested calls multiplied (``repeat(repeat('a', 100000), 100000)``
builds ten billion characters from two small numbers). A size that depends on the data
(``repeat(name, id)``) cannot be known here; the engine survives it when it runs (see the
documentation's "Security model": an out-of-memory error while measuring a rule is that rule's
failure).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from cola_core.guards.sqllex import Token

__all__ = ["MAX_BUILT_SIZE", "SIZE_BUILDERS", "built_size_problem"]

# The largest value a rule may build with a constant size: characters of a string, elements
# of an array. A million characters is a megabyte or a few per value, far above what a check
# needs (a padded code, a repeated separator) and far below what costs a JVM its memory.
MAX_BUILT_SIZE = 1_000_000

# Size-building functions, and how each one's size follows from its arguments (see _size).
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
}
# A width or precision in a format string: %2000000000s, %.999999999f, %1$-5000000d.
_FORMAT_SIZES = re.compile(r"%(?:\d+\$)?[-#+ 0,(<]*(\d*)(?:\.(\d+))?[a-zA-Z%]")
# What a constant size may be written with: numbers, arithmetic, parentheses, and casts.
_ARITHMETIC = frozenset("+-*/%()")
_CAST_WORDS = frozenset("CAST AS INT INTEGER BIGINT LONG SMALLINT TINYINT SHORT BYTE DOUBLE FLOAT DECIMAL".split())


def built_size_problem(tokens: Sequence[Token], key: str) -> str | None:
    """Why ``tokens`` (the code of one piece of SQL) build a value over the bound, or None."""
    for index, token in enumerate(tokens):
        name = token.name
        if name in SIZE_BUILDERS and _opens_call(tokens, index):
            size = _size(tokens, index)
            if size is not None and size > MAX_BUILT_SIZE:
                return (
                    f"'{key}' calls {name}() to build a value of {_shown(size)} (for {name}(), "
                    f"{SIZE_BUILDERS[name]}); a rule may build at most {MAX_BUILT_SIZE:,} characters or elements, "
                    "so that it cannot exhaust Spark's memory"
                )
    return None


def _shown(size: float) -> str:
    return f"{int(size):,} characters or elements" if size < 1e30 else "more than 10^30 characters or elements"


def _opens_call(tokens: Sequence[Token], index: int) -> bool:
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    return following is not None and following.kind == "symbol" and following.text == "("


def _arguments(tokens: Sequence[Token], index: int) -> tuple[list[list[Token]], int]:
    """The argument token lists of the call whose name is at ``index``, and the index just
    past its closing parenthesis (unbalanced text: what there is)."""
    arguments: list[list[Token]] = [[]]
    depth = 0
    position = index + 2
    while position < len(tokens):
        token = tokens[position]
        if token.kind == "symbol" and token.text == "(":
            depth += 1
        elif token.kind == "symbol" and token.text == ")":
            if depth == 0:
                return ([] if arguments == [[]] else arguments), position + 1
            depth -= 1
        elif token.kind == "symbol" and token.text == "," and depth == 0:
            arguments.append([])
            position += 1
            continue
        arguments[-1].append(token)
        position += 1
    return arguments, position


def _size(tokens: Sequence[Token], index: int) -> float | None:
    """The size of the value the call at ``index`` builds, when its arguments say it; None
    when it depends on the data."""
    name = tokens[index].name
    arguments, _ = _arguments(tokens, index)

    def number(position: int) -> float | None:
        return _constant(arguments[position]) if position < len(arguments) else None

    if name in ("repeat", "array_repeat"):
        count = number(1)
        return None if count is None or not arguments else count * _value_size(arguments[0])
    if name in ("lpad", "rpad"):
        return number(1)
    if name in ("space", "randstr"):
        return number(0)
    if name == "format_number":
        return number(1)
    if name == "sequence":
        start, stop = number(0), number(1)
        step = number(2) if len(arguments) > 2 else 1.0
        if start is None or stop is None or not step:
            return None
        return abs(stop - start) / abs(step) + 1
    # format_string and printf: the widest width or precision their format text asks for.
    if arguments and len(arguments[0]) == 1 and arguments[0][0].kind == "string":
        widths = [int(part) for match in _FORMAT_SIZES.finditer(arguments[0][0].text) for part in match.groups()
                  if part]
        return float(max(widths, default=0))
    return None


def _value_size(argument: Sequence[Token]) -> float:
    """How large the value an argument gives is, at least: a string literal's length, or the
    largest value a size-building call in it builds; 1 otherwise."""
    largest = 1.0
    for position, token in enumerate(argument):
        if token.kind == "string":
            largest = max(largest, float(len(token.text) - 2))
        elif token.name in SIZE_BUILDERS and _opens_call(argument, position):
            largest = max(largest, _size(argument, position) or 1.0)
    return largest


def _constant(argument: Sequence[Token]) -> float | None:
    """The value of a constant numeric argument (``2000000000``, ``-5``, ``1000 * 1000``,
    ``CAST(2e9 AS INT)``), or None when it is not one (it names a column, calls a function)."""
    parts = []
    for token in argument:
        if token.kind == "number":
            parts.append(_number_text(token.text))
        elif token.kind == "symbol" and token.text in _ARITHMETIC:
            parts.append(token.text)
        elif token.kind == "word" and token.text.upper() in _CAST_WORDS:
            continue  # CAST(n AS INT) is n: the words go, the parentheses stay
        else:
            return None
    try:
        return _evaluate(ast.parse(" ".join(parts), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return None


def _number_text(text: str) -> str:
    # Spark's type suffixes (10L, 5S, 1Y, 2.5BD, 1e3D, 1.5F) name a type, not a value.
    return re.sub(r"(?i)(bd|[lsydf])$", "", text)


def _evaluate(node: ast.expr) -> float:
    """A constant arithmetic expression, as a float; anything else is a ValueError."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Mod)):
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
        return left % right
    raise ValueError("not a constant number")

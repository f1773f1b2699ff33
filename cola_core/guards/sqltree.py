"""The code tokens of a piece of SQL as a tree of calls, parentheses and lambdas.

The size guard (:mod:`cola_core.guards.sqlsize`) reads sizes through whole expressions, not
one call at a time: a ``concat`` adds its arguments up, a ``transform`` builds its lambda's
value once per element, and ``1e6 * 1e6`` is a number. This module gives it that shape: each
call with its arguments, each parenthesised group, and each ``x -> body`` lambda. Anything else
stays a token. The lexer has already removed comments and kept literals whole, and the guard
has checked that the parentheses pair up and nest at most ``MAX_NESTING`` deep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cola_core.guards.sqllex import Token

__all__ = ["Call", "Group", "Item", "Lambda", "arrow_at", "tree"]


@dataclass(frozen=True)
class Call:
    """``name(argument, ...)``: the name's token and each argument's items."""

    token: Token
    arguments: tuple[tuple[Item, ...], ...]

    @property
    def name(self) -> str:
        return self.token.name or ""


@dataclass(frozen=True)
class Group:
    """``(item, ...)``: a parenthesised expression, a list of them, or a subquery."""

    parts: tuple[tuple[Item, ...], ...]


@dataclass(frozen=True)
class Lambda:
    """``x -> body`` or ``(x, y) -> body``: the parameters' names and the body's items."""

    parameters: tuple[str, ...]
    body: tuple[Item, ...]


Item = Token | Call | Group | Lambda


def tree(tokens: Sequence[Token]) -> tuple[Item, ...]:
    """The items of ``tokens`` (parentheses already known to pair up)."""
    items, _ = _items(tokens, 0)
    return _lambdas(items)


def arrow_at(items: Sequence[Item], index: int) -> bool:
    """Whether ``->`` (two symbol tokens, side by side) starts at ``items[index]``."""
    if index + 1 >= len(items):
        return False
    first, second = items[index], items[index + 1]
    return (
        isinstance(first, Token) and isinstance(second, Token) and first.kind == second.kind == "symbol"
        and first.text == "-" and second.text == ">" and first.end == second.start
    )


def _items(tokens: Sequence[Token], position: int) -> tuple[list[Item], int]:
    """The items from ``position`` up to the ``)`` that closes the level (or the end), and the
    position just past that ``)``."""
    items: list[Item] = []
    while position < len(tokens):
        token = tokens[position]
        if _is(token, ")"):
            return items, position + 1
        if _is(token, "("):
            parts, position = _parts(tokens, position + 1)
            previous = items[-1] if items else None
            if isinstance(previous, Token) and previous.name is not None:
                items[-1] = Call(previous, parts)
            else:
                items.append(Group(parts))
            continue
        items.append(token)
        position += 1
    return items, position


def _parts(tokens: Sequence[Token], position: int) -> tuple[tuple[tuple[Item, ...], ...], int]:
    """The comma-separated parts inside one pair of parentheses."""
    items, position = _items(tokens, position)
    parts: list[list[Item]] = [[]]
    for item in items:
        if isinstance(item, Token) and _is(item, ","):
            parts.append([])
        else:
            parts[-1].append(item)
    if parts == [[]]:
        return (), position
    return tuple(_lambdas(part) for part in parts), position


def _lambdas(items: Sequence[Item]) -> tuple[Item, ...]:
    """``items`` with a leading ``x ->`` or ``(x, y) ->`` read as a lambda over the rest."""
    if arrow_at(items, 1):
        head = items[0]
        names: list[str] = []
        if isinstance(head, Token) and head.name is not None:
            names = [head.name]
        elif isinstance(head, Group):
            names = [part[0].name for part in head.parts
                     if len(part) == 1 and isinstance(part[0], Token) and part[0].name is not None]
        if names:
            return (Lambda(tuple(names), tuple(items[3:])),)
    return tuple(items)


def _is(token: Token, symbol: str) -> bool:
    return token.kind == "symbol" and token.text == symbol

"""A lexer for Spark SQL text: the code tokens, with literals kept and comments dropped.

It follows Spark's ``SqlBaseLexer``: single- and double-quoted strings with backslash escapes,
raw strings (``r'...'``, no escapes), backtick identifiers (```` `` ```` inside), ``--``
comments (a backslash right before the newline carries them on), nested ``/* */``
comments (a nested one never opens at ``/*+``) and hints (``/*+ ... */``, whose contents are
code). The guard in :mod:`cola_core.guards.sqlguard` reads code through it, so quotes and
comments can hide nothing from the guard that Spark would see as code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cola_core.errors import ColaRuleError

# Spark's numeric literals (INTEGER_VALUE, EXPONENT_VALUE, DECIMAL_VALUE and the typed ones):
# ASCII digits, an optional exponent with a sign, and a type suffix.
_NUMBERS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"[0-9]+[lsy]",
        r"[0-9]+(?:e[+-]?[0-9]+)?(?:bd|d|f)?",
        r"(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?(?:bd|d|f)?",
    )
)

__all__ = ["Token", "tokenize"]


@dataclass(frozen=True)
class Token:
    """One lexical unit of code (literals keep their kind; comments are dropped).

    Attributes:
        kind: ``word`` (keyword or plain identifier), ``quoted`` (backtick identifier),
            ``string`` (any string literal), ``number`` (a numeric literal), or ``symbol``
            (one punctuation character, or ``/*+`` and ``*/``).
        text: the word, the identifier without its backticks, the literal as written, or the
            symbol.
        start: offset of the token in the SQL text.
        end: offset just past it.
    """

    kind: str
    text: str
    start: int
    end: int

    @property
    def name(self) -> str | None:
        """The identifier this token spells, lower-cased, or None when it is not one."""
        return self.text.lower() if self.kind in ("word", "quoted") else None

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words


def tokenize(sql: str, key: str = "sql") -> list[Token]:
    """Split SQL text into code tokens the way Spark's lexer does.

    Raises:
        ColaRuleError: for an unclosed literal, identifier or comment, which Spark refuses too.
    """
    if not isinstance(sql, str):
        raise ColaRuleError(f"'{key}' must be SQL text, got {type(sql).__name__}")
    tokens: list[Token] = []
    i, size = 0, len(sql)
    while i < size:
        char = sql[i]
        if char.isspace():
            i += 1
        elif sql.startswith("--", i):
            i = _skip_line_comment(sql, i)
        elif sql.startswith("/*+", i):
            # A hint, not a comment: Spark lexes what follows as code (hint parameters are
            # expressions), up to its */.
            tokens.append(Token("symbol", "/*+", i, i + 3))
            i += 3
        elif sql.startswith("/*", i):
            i = _skip_block_comment(sql, i, key)
        elif sql.startswith("*/", i):
            # One token in Spark (a hint's end), so "*/*" is never "*" then a comment.
            tokens.append(Token("symbol", "*/", i, i + 2))
            i += 2
        elif char in "'\"":
            end = _string_end(sql, i + 1, char, escapes=True, key=key)
            tokens.append(Token("string", sql[i:end], i, end))
            i = end
        elif char in "rR" and i + 1 < size and sql[i + 1] in "'\"":
            end = _string_end(sql, i + 2, sql[i + 1], escapes=False, key=key)
            tokens.append(Token("string", sql[i:end], i, end))
            i = end
        elif char == "`":
            end, name = _quoted_identifier(sql, i, key)
            tokens.append(Token("quoted", name, i, end))
            i = end
        elif char.isalnum() or char == "_" or (char == "." and sql[i + 1 : i + 2].isdigit()):
            end, kind = _word_or_number(sql, i)
            if end == i:  # a '.' that starts no valid decimal (".5e3x"): a plain symbol
                end, kind = i + 1, "symbol"
            tokens.append(Token(kind, sql[i:end], i, end))
            i = end
        else:
            tokens.append(Token("symbol", char, i, i + 1))
            i += 1
    return tokens


def _word_or_number(sql: str, i: int) -> tuple[int, str]:
    """Where the word or number at ``i`` ends, and which it is, by Spark's longest match:
    ``1E+5INSERT`` is the number ``1E+5`` then the word ``INSERT``, while ``1E5INSERT`` is
    one word, and ``1.5e3x`` is no decimal (Spark wants no letter right after one)."""
    word = 0
    while i + word < len(sql) and (sql[i + word].isalnum() or sql[i + word] == "_"):
        word += 1
    number = 0
    for pattern in _NUMBERS:
        found = pattern.match(sql, i)
        if not found:
            continue
        follower = sql[found.end() : found.end() + 1]
        if "." in found.group(0) and (follower.isalnum() or follower == "_"):
            continue  # isValidDecimal(): a decimal literal is never followed by a name character
        number = max(number, found.end() - i)
    # On a tie Spark's number rules win: they come before IDENTIFIER in its grammar.
    return (i + number, "number") if number >= word else (i + word, "word")


def _skip_line_comment(sql: str, i: int) -> int:
    # Spark's SIMPLE_COMMENT: a backslash right before a newline carries the comment on.
    i += 2
    while i < len(sql):
        if sql.startswith("\\\n", i):
            i += 2
        elif sql[i] in "\r\n":
            return i
        else:
            i += 1
    return i


def _skip_block_comment(sql: str, i: int, key: str) -> int:
    # Spark's BRACKETED_COMMENT nests: /* a /* b */ c */ is one comment. But a nested comment
    # never opens at "/*+" (the rule is guarded by !isHint()), so in /* /*+ */ code the
    # first */ closes the comment and "code" is code.
    start, depth, i = i, 1, i + 2
    while i < len(sql):
        if sql.startswith("/*", i) and not sql.startswith("/*+", i):
            depth, i = depth + 1, i + 2
        elif sql.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    raise ColaRuleError(f"'{key}' has a /* comment that is never closed (it opens at offset {start})")


def _string_end(sql: str, i: int, quote: str, *, escapes: bool, key: str) -> int:
    start = i - 1
    while i < len(sql):
        if escapes and sql[i] == "\\":
            i += 2
        elif sql[i] == quote:
            return i + 1
        else:
            i += 1
    raise ColaRuleError(f"'{key}' has a string literal that is never closed (it opens at offset {start})")


def _quoted_identifier(sql: str, i: int, key: str) -> tuple[int, str]:
    start, parts, i = i, [], i + 1
    while i < len(sql):
        if sql.startswith("``", i):
            parts.append("`")
            i += 2
        elif sql[i] == "`":
            return i + 1, "".join(parts)
        else:
            parts.append(sql[i])
            i += 1
    raise ColaRuleError(f"'{key}' has a `quoted identifier` that is never closed (it opens at offset {start})")

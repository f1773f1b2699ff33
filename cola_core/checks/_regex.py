"""Checking a Spark (Java) regex in Python, before any Spark work.

Python's ``re`` is the only regex engine the standard library has, so Java-only constructs
are translated into something Python compiles with the same validity, and the rest of the
pattern is still checked. Python-only syntax is refused, since Spark could not run it.
"""

from __future__ import annotations

import re
import warnings

from cola_core.errors import ColaRuleError

__all__ = ["compile_pattern"]


# Java regex syntax that Python's re lacks, rewritten into something Python compiles with the
# same validity, so that the rest of the pattern is still checked before Spark sees it.
_JAVA_ESCAPE = re.compile(r"\\([pP](\{[^}]*\}|[A-Za-z])|x\{[0-9A-Fa-f]+\}|c.|[hHvVRXe])", re.DOTALL)
_JAVA_BACKREF = re.compile(r"\\k<([A-Za-z][A-Za-z0-9]*)>")
_JAVA_FLAGS = re.compile(r"\(\?[idmsuxU-]+\)")
_PYTHON_ONLY = {"(?P<": "(?<name>...)", "(?P=": "\\k<name>", "(?#": "no comment groups"}


def _pythonise(pattern: str) -> tuple[str, list[int]]:
    """Translate Java-only constructs; return the text and, for each character, its origin."""
    out: list[str] = []
    origin: list[int] = []

    def emit(text: str, at: int) -> None:
        out.append(text)
        origin.extend([at] * len(text))

    i = 0
    while i < len(pattern):
        rest = pattern[i:]
        if rest.startswith("\\Q"):
            end = pattern.find("\\E", i + 2)
            stop = len(pattern) if end < 0 else end
            emit(re.escape(pattern[i + 2 : stop]) or "(?:)", i)
            i = stop + (2 if end >= 0 else 0)
        elif match := _JAVA_ESCAPE.match(rest):
            emit("\\w", i)  # a character class: \p{L}, \h, \x{263A}, \cM, ...
            i += match.end()
        elif rest.startswith(("\\z", "\\G")):
            emit("\\Z" if rest[1] == "z" else "", i)
            i += 2
        elif match := _JAVA_BACKREF.match(rest):
            emit(f"(?P={match.group(1)})", i)
            i += match.end()
        elif rest[:1] == "\\":
            emit(rest[:2], i)
            i += 2
        elif re.match(r"\(\?<[A-Za-z]", rest):
            emit("(?P<", i)  # Java's named group
            i += 3
        elif rest.startswith("(?>"):
            emit("(?:", i)  # an atomic group (Python < 3.11 lacks them)
            i += 3
        elif match := _JAVA_FLAGS.match(rest):
            i += match.end()  # Java allows inline flags anywhere in a pattern
        elif rest[:1] == "+" and out and out[-1] in ("*", "+", "?", "}"):
            i += 1  # a possessive quantifier (Python < 3.11 lacks them)
        else:
            emit(rest[0], i)
            i += 1
    return "".join(out), origin


def compile_pattern(pattern: str, key: str = "pattern") -> None:
    """Refuse a regex that Spark's Java engine could not compile.

    Java-only syntax (``\\p{L}``, ``\\Q...\\E``, ``\\z``, possessive quantifiers, ...) is
    accepted; Python-only syntax (``(?P<name>...)``) is refused, because Spark would fail on it.
    """
    for construct, java in _PYTHON_ONLY.items():
        at = pattern.find(construct)
        if at >= 0:
            raise ColaRuleError(
                f"'{key}' uses {construct!r}, which is Python-only syntax; Spark's Java regex needs {java}\n"
                f"    {pattern}\n"
                f"    {' ' * at}^"
            )
    translated, origin = _pythonise(pattern)
    try:
        with warnings.catch_warnings():
            # Java's nested classes ([a-z&&[^aeiou]]) make Python warn, yet they compile.
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(translated)
    except (OverflowError, RecursionError) as error:
        raise ColaRuleError(f"'{key}' is not a valid regex ({error})") from error
    except re.error as error:
        at = error.pos if error.pos is not None else len(translated)
        position = origin[at] if at < len(origin) else len(pattern)
        raise ColaRuleError(
            f"'{key}' is not a valid regex ({error.msg} at position {position})\n"
            f"    {pattern}\n"
            f"    {' ' * position}^"
        ) from error

"""Checking a Spark (Java) regex before any Spark work.

Three lines of defence, in order, all before any Spark job:

1. **Python.** Python's ``re`` is the only regex engine the standard library has, so Java-only
   constructs are translated into something Python compiles with the same validity, and the
   rest of the pattern is still checked. Python-only syntax is refused, since Spark could not
   run it, and so are the shapes Python accepts but Java refuses: a brace that is no
   repetition (``a{,5}``), a group name with ``_`` (``(?<my_name>x)``), an unknown property
   (``\\p{NotAProperty}``), ``\\U0001F600``, a bare ``\\0``, the ``(?a)``/``(?L)`` flags.
2. **Java.** When a classic SparkSession is active, the JVM's own
   ``java.util.regex.Pattern.compile`` has the last word (a Py4J call, not a Spark job); its
   ``PatternSyntaxException`` becomes a ``ColaRuleError``. Under Spark Connect, or with no
   session, this step is skipped.
3. **Backtracking.** Java's engine backtracks, so some patterns take exponential or high
   polynomial time on a long value, and one such value stalls a whole job. The shapes that
   cause it are refused (see ``cola_core.guards.backtracking``); possessive quantifiers and
   atomic groups are the documented way around.
"""

from __future__ import annotations

import re
import sys
import warnings

from cola_core.errors import ColaRuleError
from cola_core.guards.backtracking import backtracking_problem

__all__ = ["compile_pattern", "end_anchored"]


# Java regex syntax that Python's re lacks, rewritten into something Python compiles with the
# same validity, so that the rest of the pattern is still checked before Spark sees it.
_JAVA_ESCAPE = re.compile(r"\\([pP](\{[^}]*\}|[A-Za-z])|x\{[0-9A-Fa-f]+\}|c.|[hHvVRXe])", re.DOTALL)
_JAVA_BACKREF = re.compile(r"\\k<([A-Za-z][A-Za-z0-9]*)>")
_JAVA_FLAGS = re.compile(r"\(\?[idmsuxU-]+\)")
_PYTHON_ONLY = {"(?P<": "(?<name>...)", "(?P=": "\\k<name>", "(?#": "no comment groups"}
_NAMED_ESCAPE = re.compile(r"\\(N\{[^}]*\}|b\{g\})")
_REPETITION = re.compile(r"\{[0-9]+(,[0-9]*)?\}")
_GROUP_NAME = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>")
_FLAG_GROUP = re.compile(r"\(\?([A-Za-z-]+)[:)]")
# Python >= 3.11 compiles possessive quantifiers and atomic groups, so they stay in the
# translation and the backtracking analysis sees them; older Pythons get plain equivalents.
_KEEPS_POSSESSIVE = sys.version_info >= (3, 11)

# The \p{...} names Java knows without a prefix: general categories, POSIX classes and the
# java.lang.Character predicates. Is..., In... and key=value forms name scripts, blocks and
# binary properties, which only the JVM can check (step 2).
_CATEGORIES = set(
    "Cn Lu Ll Lt Lm Lo Mn Me Mc Nd Nl No Zs Zl Zp Cc Cf Co Cs Pd Ps Pe Pc Po Sm Sc Sk So Pi Pf "
    "L M N Z C P S LC LD L1 all".split()
)
_POSIX = set("ASCII Lower Upper Alpha Digit Alnum Punct Graph Print Blank Cntrl XDigit Space".split())
_JAVA_PREDICATES = re.compile(r"java[A-Z][A-Za-z]*")
_PROPERTY_KEYS = {"sc", "script", "blk", "block", "gc", "general_category"}


class _Refusal(Exception):
    """A Java-incompatible construct at ``at``, found while translating."""

    def __init__(self, reason: str, at: int) -> None:
        super().__init__(reason)
        self.reason, self.at = reason, at


def _property_problem(escape: str) -> str | None:
    """Why Java would refuse the property escape ``\\p{name}`` / ``\\pL``, if it would."""
    name = escape[2:].strip("{}") if escape[2:3] == "{" else escape[2:]
    if escape[2:3] != "{":
        return None if name in "LMNZCPS" else f"Java has no one-letter property \\p{name}; use \\p{{L}}-style names"
    if "=" in name:
        key = name.split("=", 1)[0]
        return None if key.lower() in _PROPERTY_KEYS else f"Java knows no property key {key!r} in \\p{{{name}}}"
    if name in _CATEGORIES or name in _POSIX or _JAVA_PREDICATES.fullmatch(name):
        return None
    if re.fullmatch(r"(Is|In)[A-Za-z][A-Za-z0-9_ -]*", name):
        return None  # a script, block or binary property: the JVM checks the name
    return (
        f"Java knows no character property {{{name}}}; use a category (\\p{{Lu}}), a POSIX class "
        "(\\p{Alpha}), a script (\\p{IsLatin}) or a block (\\p{InGreek})"
    )


# One pass over the pattern, one branch per Java construct, each a few lines: split up, the
# scanner's state (position, class depth, output) would be passed between functions instead.
def _pythonise(pattern: str) -> tuple[str, list[int]]:  # noqa: C901
    """Translate Java-only constructs; return the text and, for each character, its origin.

    Raises:
        _Refusal: for a construct Python accepts but Java refuses.
    """
    out: list[str] = []
    origin: list[int] = []

    def emit(text: str, at: int) -> None:
        out.append(text)
        origin.extend([at] * len(text))

    in_class = 0  # depth of Java character classes ([a-z&&[^aeiou]] nests)
    i = 0
    while i < len(pattern):
        rest = pattern[i:]
        if rest.startswith("\\Q"):
            end = pattern.find("\\E", i + 2)
            stop = len(pattern) if end < 0 else end
            emit(re.escape(pattern[i + 2 : stop]) or "(?:)", i)
            i = stop + (2 if end >= 0 else 0)
        elif match := _JAVA_ESCAPE.match(rest):
            problem = _property_problem(match.group()) if rest[1] in "pP" else None
            if problem:
                raise _Refusal(problem, i)
            emit("\\w", i)  # a character class: \p{L}, \h, \x{263A}, \cM, ...
            i += match.end()
        elif rest.startswith(("\\z", "\\G")):
            emit("\\Z" if rest[1] == "z" else "", i)
            i += 2
        elif rest.startswith("\\U"):
            raise _Refusal("Java has no \\U escape; write a code point as \\x{1F600}", i)
        elif rest.startswith("\\0") and not rest[2:3].isdigit():
            raise _Refusal("Java's octal escape is \\0 followed by 1 to 3 octal digits, such as \\011", i)
        elif match := _NAMED_ESCAPE.match(rest):
            # \N{name} reads the same in both engines; \b{g} (a grapheme boundary) is Java's.
            emit(match.group() if rest[1] == "N" else "", i)
            i += match.end()
        elif match := _JAVA_BACKREF.match(rest):
            emit(f"(?P={match.group(1)})", i)
            i += match.end()
        elif rest[:1] == "\\":
            emit(rest[:2], i)
            i += 2
        elif in_class:
            if rest[0] == "[":
                in_class += 1
            elif rest[0] == "]":
                in_class -= 1
            emit(rest[0], i)
            i += 1
        elif rest[0] == "[":
            # A ']' straight after '[' or '[^' is a literal in both engines.
            opening = 2 if rest.startswith("[^") else 1
            literal = 1 if rest[opening : opening + 1] == "]" else 0
            emit(rest[: opening + literal], i)
            in_class = 1
            i += opening + literal
        elif rest[0] == "{":
            match = _REPETITION.match(rest)
            if match is None:
                raise _Refusal("Java reads '{' as a repetition {n}, {n,} or {n,m}; write a literal brace as \\{", i)
            emit(match.group(), i)
            i += match.end()
        elif rest.startswith("(?<") and rest[3:4] not in ("=", "!"):
            if not _GROUP_NAME.match(rest):
                raise _Refusal("Java group names are a letter followed by letters or digits, such as (?<city2>...)", i)
            emit("(?P<", i)  # Java's named group
            i += 3
        elif rest.startswith("(?>"):
            emit("(?>" if _KEEPS_POSSESSIVE else "(?:", i)  # an atomic group
            i += 3
        elif match := _JAVA_FLAGS.match(rest):
            i += match.end()  # Java allows inline flags anywhere in a pattern
        elif (match := _FLAG_GROUP.match(rest)) and set(match.group(1)) - set("idmsuxU-"):
            raise _Refusal("Java's inline flags are i, d, m, s, u, x and U", i)
        elif rest[:1] == "+" and out and (out[-1] in ("*", "+", "?") or _REPETITION.fullmatch(out[-1])):
            if _KEEPS_POSSESSIVE:
                emit("+", i)  # a possessive quantifier
            i += 1
        else:
            emit(rest[0], i)
            i += 1
    return "".join(out), origin


def _refusal(key: str, reason: str, pattern: str, position: int) -> ColaRuleError:
    return ColaRuleError(f"'{key}' is not a valid regex ({reason} at position {position})\n"
                         f"    {pattern}\n    {' ' * position}^")


def compile_pattern(pattern: str, key: str = "pattern") -> None:
    """Refuse a regex that Spark's Java engine could not compile, or could not finish on a
    long value (see the module docstring).

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
    try:
        translated, origin = _pythonise(pattern)
    except _Refusal as refusal:
        raise _refusal(key, refusal.reason, pattern, refusal.at) from None
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
        raise _refusal(key, error.msg, pattern, position) from error
    _compile_in_java(pattern, key)
    # Before Python 3.11 the translation loses possessive quantifiers and atomic groups, and
    # with them what keeps the pattern safe; such a pattern is left unanalysed there.
    sealed = "(?>" in pattern or re.search(r"[*+?}]\+", pattern) is not None
    problem = None if sealed and not _KEEPS_POSSESSIVE else backtracking_problem(translated)
    if problem is not None:
        raise ColaRuleError(f"'{key}' may backtrack catastrophically: {problem}\n    {pattern}")


# Patterns Java has compiled: the same pattern compiles the same way on every JVM, and a
# block (or a DAG parsed again and again) asks for the same ones. Bounded, so a stream of
# distinct patterns cannot grow it without end.
_ACCEPTED_IN_JAVA: set[str] = set()
_ACCEPTED_LIMIT = 10_000


def _compile_in_java(pattern: str, key: str) -> None:
    """Have the active session's JVM compile ``pattern``; skipped without a classic session.

    pyspark is only looked up, never imported: a process that has not imported it has no
    session, and the rule parser must run without a JVM.
    """
    session_module = sys.modules.get("pyspark.sql.session")
    if session_module is None:
        return
    try:
        session = session_module.SparkSession.getActiveSession()
        jvm = getattr(session, "_jvm", None) if session is not None else None
    except Exception:  # Spark Connect sessions have no JVM to ask
        return
    if jvm is None or pattern in _ACCEPTED_IN_JAVA:
        return
    try:
        jvm.java.util.regex.Pattern.compile(pattern)
        if len(_ACCEPTED_IN_JAVA) < _ACCEPTED_LIMIT:
            _ACCEPTED_IN_JAVA.add(pattern)
    except Exception as error:
        java = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
        try:
            if java is None or java.getClass().getName() != "java.util.regex.PatternSyntaxException":
                return  # the JVM could not be asked (a closed gateway, ...); Spark will tell
            description, index = java.getDescription(), int(java.getIndex())
        except Exception:
            return
        position = index if 0 <= index <= len(pattern) else len(pattern)
        raise _refusal(key, f"Java: {description}", pattern, position) from None


# Flags a Java regex turns on inline: (?m), (?im), (?m:...), (?i-s:...).
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-[a-zA-Z]*)?[:)]")


def end_anchored(java: str) -> str:
    """``java`` with each ``$`` that ends the pattern's text made ``\\z``, the end of the value.

    In Java, ``$`` also matches before a final line terminator, so ``^[0-9]{11}$`` accepts
    ``"12345678909\\n"``: a value a user writing ``^...$`` means to refuse. A ``$`` escaped,
    inside a character class or inside ``\\Q...\\E`` is a dollar sign and stays; a pattern
    that turns on multi-line mode (``(?m)``) is left as it is, since there ``$`` means the end
    of each line, as its author asked.
    """
    if "$" not in java or any("m" in flags for flags in _INLINE_FLAGS.findall(java)):
        return java
    out: list[str] = []
    position, depth = 0, 0  # depth: how deep inside [...] character classes (Java nests them)
    while position < len(java):
        character = java[position]
        if character == "\\":
            if java.startswith("\\Q", position):
                end = java.find("\\E", position + 2)
                end = len(java) if end < 0 else end + 2
                out.append(java[position:end])
                position = end
                continue
            out.append(java[position:position + 2])
            position += 2
            continue
        if character == "[":
            depth += 1
        elif character == "]" and depth:
            depth -= 1
        out.append("\\z" if character == "$" and depth == 0 else character)
        position += 1
    return "".join(out)

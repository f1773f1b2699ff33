"""Refusing regex shapes that make Java's backtracking engine take exponential or high
polynomial time.

Spark's ``rlike`` runs ``java.util.regex``, which backtracks: on a value that almost matches,
it tries every way the pattern could divide the text before it gives up. Most patterns have
one or a few ways; three shapes have exponentially or polynomially many, and a single
5,000-character value then keeps an executor busy for hours:

- **nested quantifiers**: a repeated group whose rounds vary in length and can end with a
  character they can also start with (``(a+)+``, ``(a*)*``, ``(\\w+\\s?)*``, ``(.*)*``,
  ``(a+|b)+``, ``(x+x+)+``), so one run of text divides into rounds in many ways; a round
  that ends with a separator of its own (``(\\d+-)+``, ``([a-z]+\\.)*``) is fine;
- **overlapping alternatives** in a repeated group (``(a|aa)+``, ``(\\w|\\d)+``): branches that
  can start with the same character. Python's parser merges such branches (``\\w|\\d`` into
  one class), Java's does not, so these are found in the pattern's text;
- **runs of 3 or more adjacent unbounded repeats** over overlapping characters (``.*.*.*``,
  ``\\d+\\d+\\d+``), which are polynomial: cubic and worse. Repeats stay adjacent across a
  fixed part that one of them can also match: in ``.*a.*a.*b`` each ``.*`` can take the
  ``a`` as well, so the run is 3 long. ``rlike`` looks for a match at
  every position, which adds one more degree to a run at the start of a pattern not anchored
  with ``^``: there ``a*a*b`` is already cubic (measured: minutes on 5,000 characters), while
  ``^a*a*b`` is quadratic and finishes at once. Repeats that end the whole pattern and may
  match nothing are left out of the run: nothing after them can fail, so they never give
  back (``.*foo.*`` and ``.*.*.*`` are fine; ``\\d+\\d+\\d+`` is not).

The check reads Python's parse tree of the pattern (``re._parser``, formerly ``sre_parse``)
after Java-only syntax was translated. Character sets are compared on a sample alphabet
(ASCII and a few non-ASCII letters, digits and spaces), which can only over-report overlap.
Possessive quantifiers (``a++``) and atomic groups (``(?>...)``) never give back what they
matched, so their contents are not analysed: they are the way to keep a refused shape.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

if sys.version_info >= (3, 11):
    from re import _constants as _c
    from re import _parser as _sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_constants as _c
    import sre_parse as _sre_parse

__all__ = ["ADJACENT", "ALTERNATION", "NESTED", "backtracking_problem"]

NESTED = (
    "a repeated group holds a repeat that can take over the next round's characters (nested quantifiers "
    "such as (a+)+ or (\\w+\\s?)*), so a long value that almost matches takes exponential time; rewrite it "
    "without the nesting, or make the inner repeat possessive (a++) or atomic ((?>a+))"
)
ALTERNATION = (
    "a repeated alternation has branches that can start with the same character (such as (a|aa)+), so a "
    "long value that almost matches takes exponential time; make the branches start differently, or make "
    "the group atomic ((?>a|aa)+)"
)
ADJACENT = (
    "3 or more adjacent repeats over overlapping characters (such as .*.*.* or \\d+\\d+\\d+) take polynomial "
    "time on a long value; merge them into one repeat, or make them possessive (.*+)"
)

_ALPHABET = frozenset([chr(code) for code in range(128)] + ["é", "Ж", "中", "٣", "\u00a0", "\u2028"])
_CATEGORY_PATTERNS = {
    _c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D", _c.CATEGORY_SPACE: r"\s",
    _c.CATEGORY_NOT_SPACE: r"\S", _c.CATEGORY_WORD: r"\w", _c.CATEGORY_NOT_WORD: r"\W",
}
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT)
# Opaque to the analysis: possessive repeats and atomic groups never backtrack into themselves.
_SEALED = tuple(getattr(_c, name) for name in ("POSSESSIVE_REPEAT", "ATOMIC_GROUP") if hasattr(_c, name))
_LARGE = 32  # a repeat allowing more than this many extra rounds counts as unbounded


def backtracking_problem(python_pattern: str) -> str | None:
    """Why ``python_pattern`` (Java syntax already translated for Python) may backtrack
    catastrophically, or None. A pattern Python cannot parse is left to the compile checks."""
    try:
        tree = _parse(python_pattern)
    except Exception:
        return None
    problem = _Analysis().sequence(list(tree), scanned=True)
    if problem is None and any(_overlap(alternatives) for alternatives in _repeated_alternations(python_pattern)):
        return ALTERNATION
    return problem


def _parse(pattern: str) -> Any:
    with warnings.catch_warnings():
        # Java's nested classes ([a-z&&[^aeiou]]) make Python warn, yet they parse.
        warnings.simplefilter("ignore", FutureWarning)
        return _sre_parse.parse(pattern)


class _Analysis:
    def sequence(self, items: Sequence[Any], scanned: bool = False) -> str | None:
        """Args:
            scanned: whether ``rlike`` tries this sequence at every position (the whole
                pattern, unless it starts with ``^`` or ``\\A``).
        """
        flat = _flatten(items)
        anchored = flat[:1] in ([(_c.AT, _c.AT_BEGINNING)], [(_c.AT, _c.AT_BEGINNING_STRING)])
        chained = flat
        if scanned:
            # Repeats that end the whole pattern and may match nothing never give back: once
            # reached, they complete the match, so nothing after them can fail and make
            # them try again. The last .* of an unanchored .*foo.* costs nothing.
            while chained and chained[-1][0] in _REPEATS and chained[-1][1][0] == 0:
                chained = chained[:-1]
        if _longest_chain(chained, unbounded_only=True, scan=scanned and not anchored) >= 3:
            return ADJACENT
        for op, av in flat:
            problem = self.node(op, av)
            if problem:
                return problem
        return None

    def node(self, op: Any, av: Any) -> str | None:
        if op in _SEALED:
            return None
        if op in _REPEATS:
            _low, high, body = av
            # Rounds of one length cannot be regrouped; nor can rounds that start and end
            # with different characters, such as (\d+-)+.
            lengths = body.getwidth()
            if high >= 3 and lengths[0] != lengths[1] and _holds_variable_repeat(list(body)):
                flat = _flatten(list(body))
                if _nullable(flat) or _first(flat) & _last(flat):
                    return NESTED
            return self.sequence(list(body))
        if op == _c.BRANCH:
            for alternative in av[1]:
                problem = self.sequence(list(alternative))
                if problem:
                    return problem
        elif op == _c.SUBPATTERN:
            return self.sequence(list(av[-1]))
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            return self.sequence(list(av[1]))
        return None


def _flatten(items: Sequence[Any]) -> list[tuple[Any, Any]]:
    """The sequence with plain groups spliced in: ``((a+)b?)`` reads as ``a+ b?``."""
    flat: list[tuple[Any, Any]] = []
    for op, av in items:
        if op == _c.SUBPATTERN:
            flat.extend(_flatten(list(av[-1])))
        else:
            flat.append((op, av))
    return flat


def _variable(op: Any, av: Any, unbounded_only: bool) -> bool:
    """A backtracking repeat that can take several lengths (unbounded ones only, if asked)."""
    if op not in _REPEATS:
        return False
    low: int  # a repeat's argument is (min, max, body), with the bounds as ints
    high: int
    low, high, _ = av
    if unbounded_only:
        return high == _c.MAXREPEAT or high - low > _LARGE
    return high > low and high >= 2


def _holds_variable_repeat(items: Sequence[Any]) -> bool:
    for op, av in items:
        if op in _SEALED:
            continue
        if _variable(op, av, unbounded_only=False):
            return True
        if op in _REPEATS and _holds_variable_repeat(list(av[2])):
            return True
        if op == _c.SUBPATTERN and _holds_variable_repeat(list(av[-1])):
            return True
        if op == _c.BRANCH and any(_holds_variable_repeat(list(alt)) for alt in av[1]):
            return True
    return False


def _longest_chain(flat: Sequence[Any], unbounded_only: bool, scan: bool = False) -> int:
    """The longest run of variable repeats whose neighbours share characters.

    Between two of them may stand optional parts (``\\s?``) and fixed parts that a repeat of
    the run can also match (the ``a`` of ``.*a.*``): such a part can be taken by the repeat
    as well as stand on its own, so the text still divides in many ways. A fixed part that no
    repeat of the run can match (the ``@`` of ``[a-z]+@[a-z]+``) ends the run. With ``scan``,
    the search for a start position counts as a repeat over every character before the first
    element; it takes no fixed part, as a start position must be followed by that part.
    """
    longest, chain, previous = (1, 1, _ALPHABET) if scan else (0, 0, None)
    taken: frozenset[str] = frozenset()  # what the run's own repeats can match
    for op, av in flat:
        if _variable(op, av, unbounded_only):
            chars = _chars(list(av[2]))
            if previous is not None and chars & previous:
                chain, taken = chain + 1, taken | chars
            else:
                chain, taken = 1, chars
            previous = chars
            longest = max(longest, chain)
        elif not _nullable([(op, av)]) and not _chars([(op, av)]) & taken:
            chain, previous, taken = 0, None, frozenset()
    return longest


def _nullable(items: Sequence[Any]) -> bool:
    return all(_node_nullable(op, av) for op, av in items)


def _node_nullable(op: Any, av: Any) -> bool:
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT, _c.GROUPREF):
        return True
    if op in _REPEATS or (op in _SEALED and isinstance(av, tuple) and len(av) == 3):
        return av[0] == 0 or _nullable(list(av[2]))
    if op == _c.SUBPATTERN:
        return _nullable(list(av[-1]))
    if op in _SEALED:
        return _nullable(list(av))
    if op == _c.BRANCH:
        return any(_nullable(list(alt)) for alt in av[1])
    return False


def _first(items: Sequence[Any]) -> frozenset[str]:
    """Characters a match of ``items`` can start with (on the sample alphabet)."""
    return _edge(items, from_end=False)


def _last(items: Sequence[Any]) -> frozenset[str]:
    """Characters a match of ``items`` can end with (on the sample alphabet)."""
    return _edge(items, from_end=True)


def _edge(items: Sequence[Any], *, from_end: bool) -> frozenset[str]:
    # Walk in from one end, through every node that may match nothing, to the first that must.
    found: set[str] = set()
    for op, av in (reversed(items) if from_end else items):
        found |= _node_edge(op, av, from_end)
        if not _node_nullable(op, av):
            break
    return frozenset(found)


def _node_edge(op: Any, av: Any, from_end: bool) -> frozenset[str]:
    if op in _REPEATS or (op in _SEALED and isinstance(av, tuple) and len(av) == 3):
        return _edge(list(av[2]), from_end=from_end)
    if op == _c.SUBPATTERN:
        return _edge(list(av[-1]), from_end=from_end)
    if op in _SEALED:
        return _edge(list(av), from_end=from_end)
    if op == _c.BRANCH:
        return frozenset().union(*(_edge(list(alt), from_end=from_end) for alt in av[1]))
    return _atom(op, av)


def _chars(items: Sequence[Any]) -> frozenset[str]:
    """Every character a match of ``items`` can consume (on the sample alphabet)."""
    found: set[str] = set()
    for op, av in items:
        if op in _REPEATS or (op in _SEALED and isinstance(av, tuple) and len(av) == 3):
            found |= _chars(list(av[2]))
        elif op == _c.SUBPATTERN:
            found |= _chars(list(av[-1]))
        elif op in _SEALED:
            found |= _chars(list(av))
        elif op == _c.BRANCH:
            for alt in av[1]:
                found |= _chars(list(alt))
        else:
            found |= _atom(op, av)
    return frozenset(found)


def _atom(op: Any, av: Any) -> frozenset[str]:
    if op == _c.LITERAL:
        return frozenset([chr(av)])
    if op == _c.NOT_LITERAL:
        return _ALPHABET - {chr(av)}
    if op == _c.ANY:
        return _ALPHABET
    if op == _c.IN:
        return _class(av)
    if op == _c.GROUPREF:
        return _ALPHABET  # a back reference can repeat anything its group took
    return frozenset()


def _class(items: Sequence[Any]) -> frozenset[str]:
    found: set[str] = set()
    negate = False
    for op, av in items:
        if op == _c.NEGATE:
            negate = True
        elif op == _c.LITERAL:
            found.add(chr(av))
        elif op == _c.RANGE:
            low, high = av
            found |= {char for char in _ALPHABET if low <= ord(char) <= high}
            if high - low > 1:  # a range stands for its members outside the sample too
                found.add(chr(low))
        elif op == _c.CATEGORY:
            pattern = _CATEGORY_PATTERNS.get(av)
            found |= set(_ALPHABET) if pattern is None else {char for char in _ALPHABET if re.match(pattern, char)}
    return frozenset(_ALPHABET - found) if negate else frozenset(found)


# -- alternations, read from the text ------------------------------------------------------

_QUANTIFIER = re.compile(r"[*+]|\{([0-9]+)(,([0-9]*))?\}")


def _structure(text: str) -> Iterator[tuple[int, str]]:
    """``(index, character)`` for each character of a pattern that is structure: not escaped
    and not inside a character class. Both readers of the pattern's text walk it this way."""
    in_class, i = 0, 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class += {"[": 1, "]": -1}.get(char, 0)
        elif char == "[":
            in_class = 1
            i += 2 if text[i + 1 : i + 2] == "]" else 1  # a leading ']' is a literal
            continue
        else:
            yield i, char
        i += 1


def _repeated_alternations(pattern: str) -> list[list[str]]:
    """The alternatives of every group that a backtracking quantifier repeats (max >= 3)."""
    found: list[list[str]] = []
    opened: list[int] = []
    for i, char in _structure(pattern):
        if char == "(":
            opened.append(i)
        elif char == ")" and opened:
            start = opened.pop()
            quantifier = _QUANTIFIER.match(pattern, i + 1)
            if quantifier and pattern[quantifier.end() : quantifier.end() + 1] != "+" and _repeats_often(quantifier):
                body = _group_body(pattern[start + 1 : i])
                if body is not None:
                    found.append(_split_alternatives(body))
    return found


def _repeats_often(quantifier: re.Match[str]) -> bool:
    if quantifier.group(1) is None:
        return True
    high = quantifier.group(3)
    return quantifier.group(2) is not None and (high == "" or int(high) >= 3)


def _group_body(inner: str) -> str | None:
    """The group's pattern without its opening syntax; None for atomic groups and lookarounds."""
    if not inner.startswith("?"):
        return inner
    if inner.startswith(("?>", "?=", "?!", "?<=", "?<!")):
        return None
    named = re.match(r"\?P?<[A-Za-z][A-Za-z0-9_]*>|\?[A-Za-z-]*:", inner)
    return inner[named.end() :] if named else None


def _split_alternatives(body: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in _structure(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return parts


def _overlap(alternatives: list[str]) -> bool:
    if len(alternatives) < 2:
        return False
    firsts = []
    for alternative in alternatives:
        try:
            firsts.append(_first(_flatten(list(_parse(alternative)))))
        except Exception:  # an alternative that refers to a group outside it
            return False
    return any(first & other for at, first in enumerate(firsts) for other in firsts[at + 1 :])

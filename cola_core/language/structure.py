"""A structural pre-pass over a raw rule block, before any expansion or parsing.

A rule block is data that often comes from a file edited by someone without a shell on the
cluster, so the parser must never meet a value it cannot print, copy or compare. This pass
walks the whole block once, iteratively (a list nested 100,000 deep must not exhaust
Python's stack), and refuses with a :class:`ColaRuleError` naming the rule:

- keys that are not strings, anywhere (``{1: "x"}``, ``{("a",): 1}``);
- a list or object that contains itself (YAML anchors and aliases can build one);
- nesting deeper than :data:`MAX_DEPTH`, and blocks of more than :data:`MAX_VALUES` values
  (counted with repetition, so a YAML "billion laughs" alias bomb is refused quickly);
- whole numbers of more than :data:`MAX_NUMBER_DIGITS` digits (no Spark type holds them, and
  Python refuses to turn an int of more than 4,300 digits into text), non-finite floats
  (NaN, inf) and decimals that Spark's ``DecimalType`` cannot hold;
- text longer than :data:`MAX_TEXT_LENGTH` characters, more than :data:`MAX_BLOCK_TEXT`
  characters of text in the whole block (counted with repetition: a 200 KB YAML file whose
  aliases repeat one long name 2,000 times is refused), and text (a value or a key) that UTF-8
  cannot encode: a surrogate such as JSON's valid ``"\\ud800"`` passes Python but fails inside
  py4j, mid-run, when the text is sent to the JVM;
- anything that is not JSON-like data: bytes, sets, custom objects (a rule is data, never code).

Then, with the registry at hand, it refuses whole numbers beyond the 64-bit range in the
parameters whose kind says Spark takes them as a ``long`` (see ``Kind.whole_range``).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from cola_core.errors import ColaRuleError

__all__ = [
    "MAX_BLOCK_TEXT", "MAX_DEPTH", "MAX_NUMBER_DIGITS", "MAX_TEXT_LENGTH", "MAX_VALUES", "check_structure",
    "document_problem",
]

# A rule is an object of parameters, a few levels deep at most (a reference source with its
# options is four). 32 leaves room for any real rule, and stays far below Python's recursion
# limit, so later code that recurses (repr, json.dumps, deepcopy) is safe.
MAX_DEPTH = 32
# Every list, object and scalar of the block, counted each time it is reached. A million is
# far above any real block (10,000 rules of 100 values) and walks in about a second.
MAX_VALUES = 1_000_000
# Spark's widest exact number is DecimalType(38, s).
MAX_NUMBER_DIGITS = 38
# A SQL query or a value list entry is far shorter; the bound keeps messages and regex
# compilation small.
MAX_TEXT_LENGTH = 100_000
# The characters of text a whole block may hold, counted with repetition (keys left out): the
# size a rules file may have (rules_file.MAX_RULES_FILE_BYTES), so that YAML aliases repeating one long
# text cannot make a block, and then its results and messages, larger than any file could.
MAX_BLOCK_TEXT = 8 * 1024 * 1024

_ALLOWED = "text, numbers, true/false, null, dates, lists and objects"
_VALID_TEXT = ("a rule's text must be valid Unicode (in JSON, a \\ud800-\\udfff escape "
               "is only half of a character: write the pair, or the character itself)")
# Shown as the rule's type in messages only when it reads like one.
_MAX_SHOWN_TYPE = 100
# A path deeper than this is shown cut short: its start says where it is.
_MAX_SHOWN_STEPS = 8


def check_structure(rules: Sequence[Any], registry: Mapping[str, type] | None = None) -> None:
    """Refuse a block that is not plain, bounded, finite data (see the module docstring).

    Raises:
        ColaRuleError: naming the rule by position (and type, when it has a readable one).
    """
    walker = _Walker(rules)
    for position, raw in enumerate(rules):
        problem = walker.walk(raw)
        if problem is None and registry is not None:
            problem = _long_problem(raw, registry)
        if problem is not None:
            raise ColaRuleError(problem, position=position, rule_type=_shown_type(raw))


def document_problem(document: Any) -> str | None:
    """What :func:`check_structure` would refuse in a whole document that is no rule block (a
    data contract), with the same bounds, or None. Paths are the document's own
    (``'schema[0].properties[1].required'``)."""
    return _Walker(None).walk(document)


class _Walker:
    """An explicit-stack walk; ``seen`` counts values across the whole block."""

    def __init__(self, block: Any) -> None:
        self.block_id = id(block)
        self.seen = 1  # the block itself
        self.text = 0  # characters of text values, counted each time they are reached

    def walk(self, root: Any) -> str | None:
        on_path = {self.block_id}  # ids of the containers from the block down to the current value
        # (path, value, leaving): leaving=True pops the container off on_path once its children are done.
        stack: list[tuple[tuple[str | int, ...], Any, bool]] = [((), root, False)]
        while stack:
            path, value, leaving = stack.pop()
            if leaving:
                on_path.discard(id(value))
                continue
            self.seen += 1
            if self.seen > MAX_VALUES:
                return (f"the block holds more than {MAX_VALUES} values (lists, objects and scalars, "
                        "counted each time an alias repeats them); split it into smaller blocks")
            if len(path) > MAX_DEPTH:
                return (f"{_where(path)} nests deeper than {MAX_DEPTH} levels; "
                        "a rule is an object of parameters, a few levels deep at most")
            if isinstance(value, Mapping) or _is_list(value):
                if id(value) in on_path:
                    return (f"{_where(path)} contains itself (a self-reference, as YAML anchors and "
                            "aliases can make); write the value out in full")
                on_path.add(id(value))
                stack.append((path, value, True))
                problem = self._push_children(path, value, stack)
                if problem is not None:
                    return problem
                continue
            problem = _scalar_problem(value)
            if problem is not None:
                return f"{_where(path)} {problem}"
            if isinstance(value, str):
                self.text += len(value)
                if self.text > MAX_BLOCK_TEXT:
                    return (
                        f"the block holds more than {MAX_BLOCK_TEXT:,} characters of text (counted each time an "
                        f"alias repeats a value, {_where(path)} passing the bound); a rules file may hold at most "
                        "as much text as its size limit, so that no result or message can grow past it"
                    )
        return None

    @staticmethod
    def _push_children(
        path: tuple[str | int, ...], value: Any, stack: list[tuple[tuple[str | int, ...], Any, bool]]
    ) -> str | None:
        if not isinstance(value, Mapping):
            stack.extend(((*path, index), item, False) for index, item in reversed(list(enumerate(value))))
            return None
        children = []
        for key, item in value.items():
            if not isinstance(key, str):
                return (f"{_where(path)} has a key that is not a string: {_shown(key)}; "
                        "keys are always text, such as \"column\"")
            if len(key) > MAX_TEXT_LENGTH:
                return f"{_where(path)} has a key of {len(key)} characters; the limit is {MAX_TEXT_LENGTH}"
            surrogate = _surrogate(key)
            if surrogate is not None:
                shown = repr(key) if len(key) <= 40 else repr(key[:40]) + "..."
                return f"{_where(path)} has a key holding {surrogate}: {shown}; {_VALID_TEXT}"
            children.append(((*path, key), item, False))
        stack.extend(reversed(children))
        return None


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _scalar_problem(value: Any) -> str | None:
    """What is wrong with a leaf value, or None when a rule may hold it."""
    if value is None or isinstance(value, (bool, dt.date)):  # datetime is a date
        return None
    if isinstance(value, str):
        if len(value) > MAX_TEXT_LENGTH:
            return f"is a text of {len(value)} characters; the limit is {MAX_TEXT_LENGTH}"
        surrogate = _surrogate(value)
        if surrogate is not None:
            return f"is a text holding {surrogate}; {_VALID_TEXT}"
        return None
    if isinstance(value, int):
        if abs(value) >= 10**MAX_NUMBER_DIGITS:
            return (f"is a whole number of more than {MAX_NUMBER_DIGITS} digits; no Spark type holds it "
                    f"(the widest, a decimal, has {MAX_NUMBER_DIGITS} digits)")
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"is {value}; a number in a rule must be finite"
        return None
    if isinstance(value, Decimal):
        return _decimal_problem(value)
    return f"is {_a(type(value).__name__)}, which a rule cannot hold; a rule holds only {_ALLOWED}"


def _surrogate(text: str) -> str | None:
    """Where ``text`` holds a code point UTF-8 cannot encode (a surrogate), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (f"a surrogate (U+{ord(text[error.start]):04X} at character {error.start}), half of a "
                "UTF-16 pair, which UTF-8 cannot encode")
    return None


def _decimal_problem(value: Decimal) -> str | None:
    if not value.is_finite():
        return f"is {value}; a number in a rule must be finite"
    _sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite decimals have an integer exponent
    whole_digits = max(len(digits) + exponent, 0)
    fraction_digits = max(-exponent, 0)
    if whole_digits + fraction_digits > MAX_NUMBER_DIGITS:
        return (f"is a decimal of more than {MAX_NUMBER_DIGITS} digits; "
                f"Spark's decimals hold at most {MAX_NUMBER_DIGITS}")
    return None


def _long_problem(rule: Any, registry: Mapping[str, type]) -> str | None:
    """A whole number beyond the 64-bit range in a parameter Spark takes as a long."""
    if not isinstance(rule, Mapping):
        return None
    rule_type = rule.get("type")
    if rule_type == "check":
        rule_type = rule.get("metric")
    cls = registry.get(rule_type) if isinstance(rule_type, str) else None
    spec = getattr(cls, "params_spec", None)
    if not spec:
        return None
    targets = rule.get("targets")
    scopes: list[tuple[tuple[str | int, ...], Mapping[str, Any]]] = [((), rule)]
    if isinstance(targets, list):
        scopes += [(("targets", index), target) for index, target in enumerate(targets) if isinstance(target, Mapping)]
    for prefix, scope in scopes:
        for key, value in scope.items():
            low_high = getattr(getattr(spec.get(key), "kind", None), "whole_range", None)
            if low_high is None:
                continue
            for path, number in _whole_numbers((*prefix, key), value):
                if not low_high[0] <= number <= low_high[1]:
                    return (f"{_where(path)} is {number}, outside the 64-bit range Spark takes for it "
                            f"({low_high[0]} to {low_high[1]})")
    return None


def _whole_numbers(path: tuple[str | int, ...], value: Any) -> list[tuple[tuple[str | int, ...], int]]:
    """The ints in a parameter value: the value itself, or the items of a list."""
    def whole(item: Any) -> bool:
        return isinstance(item, int) and not isinstance(item, bool)

    if _is_list(value):
        return [((*path, index), item) for index, item in enumerate(value) if whole(item)]
    return [(path, value)] if whole(value) else []


def _where(path: tuple[str | int, ...]) -> str:
    """``'targets[0].columns'``, or ``the rule`` for the rule itself."""
    if not path:
        return "the rule"
    text = ""
    for step in path[:_MAX_SHOWN_STEPS]:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            shown = step if len(step) <= 40 else step[:40] + "..."
            text += f".{shown}" if text else shown
    if len(path) > _MAX_SHOWN_STEPS:
        text += "..."
    return repr(text)


def _shown(key: Any) -> str:
    """A key for a message; never calls a custom ``__repr__`` nor prints a huge number."""
    if isinstance(key, bool) or key is None or (isinstance(key, float) and math.isfinite(key)):
        return f"{key!r} ({type(key).__name__})"
    if isinstance(key, int) and abs(key) < 10**MAX_NUMBER_DIGITS:
        return f"{key!r} ({type(key).__name__})"
    if isinstance(key, tuple) and len(key) <= 4 and all(isinstance(item, str) and len(item) <= 40 for item in key):
        return f"{key!r} (tuple)"
    return _a(type(key).__name__)


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _shown_type(rule: Any) -> str | None:
    if not isinstance(rule, Mapping):
        return None
    rule_type = rule.get("type")
    if isinstance(rule_type, str) and 0 < len(rule_type) <= _MAX_SHOWN_TYPE and _surrogate(rule_type) is None:
        return rule_type
    return None

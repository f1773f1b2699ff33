"""The structure pre-pass (``language/structure.py``): a rule block that is not plain, bounded, finite
data is a ColaRuleError naming the rule by position and type, in pure Python (issue 10). A
broken rules file is ``test_language_files``'s.

Before it, these gave TypeError, ValueError (Python's 4,300-digit limit on int/str
conversion) and RecursionError, or passed parsing and failed inside a Spark job.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cola_core import Cola, ColaRuleError
from cola_core.language.params import LONG_RANGE, NUMBER, SCALAR_LIST, WHOLE
from cola_core.language.structure import MAX_DEPTH, MAX_NUMBER_DIGITS, MAX_TEXT_LENGTH, MAX_VALUES
from cola_helpers import ALLOWED, CYCLE, FINITE, KEYS, SURROGATE, UNICODE, too_deep

DEEP = too_deep(MAX_DEPTH)
HUGE = "is a whole number of more than 38 digits; no Spark type holds it (the widest, a decimal, has 38 digits)"
LONG = "outside the 64-bit range Spark takes for it (-9223372036854775808 to 9223372036854775807)"


def _nested_list(depth: int) -> list:
    root: list = []
    current = root
    for _ in range(depth):
        inner: list = []
        current.append(inner)
        current = inner
    return root


def _self_list() -> list:
    looped: list = ["id"]
    looped.append(looped)
    return looped


def _self_dict() -> dict:
    looped: dict = {"type": "not_null"}
    looped["columns"] = looped
    return looped


class _Hostile:
    """A custom object whose repr would itself fail: messages must never call it."""

    def __repr__(self) -> str:
        raise RuntimeError("repr called")


REFUSED = [
    # Keys that are not strings, at the rule's top and nested.
    ([{1: "x"}], f"rules[0]: the rule has a key that is not a string: 1 (int); {KEYS}"),
    (
        [{"type": "not_null", "columns": ["a"], ("a",): 1}],
        f"rules[0] (not_null): the rule has a key that is not a string: ('a',) (tuple); {KEYS}",
    ),
    (
        [{"type": "row_count"}, {"type": "not_null", "targets": [{"columns": ["a"], None: 1}]}],
        f"rules[1] (not_null): 'targets[0]' has a key that is not a string: None (NoneType); {KEYS}",
    ),
    (
        [{"type": "foreign_key", "column": "a", "reference": {"path": "x", "options": {_Hostile(): 1}}}],
        f"rules[0] (foreign_key): 'reference.options' has a key that is not a string: a _Hostile; {KEYS}",
    ),
    ([{"type": "not_null", 10**5000: 1}], f"rules[0] (not_null): the rule has a key that is not a string: an int; {KEYS}"),
    # Self-references.
    (_self_list(), f"rules[1]: the rule {CYCLE}"),  # the block is its own second rule
    ([{"type": "not_null", "columns": _self_list()}], f"rules[0] (not_null): 'columns[1]' {CYCLE}"),
    ([_self_dict()], f"rules[0] (not_null): 'columns' {CYCLE}"),
    # Nesting: 100,000 levels used to be a RecursionError.
    ([{"type": "not_null", "columns": _nested_list(100_000)}], f"rules[0] (not_null): 'columns[0][0][0][0][0][0][0]...' {DEEP}"),
    ([{"type": "not_null", "columns": _nested_list(MAX_DEPTH)}], f"rules[0] (not_null): 'columns[0][0][0][0][0][0][0]...' {DEEP}"),
    (_nested_list(100_000), f"rules[0]: '[0][0][0][0][0][0][0][0]...' {DEEP}"),
    # Numbers with thousands of digits (ValueError from int -> str beyond 4,300 digits).
    ([{"type": "row_count", "must_be": 10**5000}], f"rules[0] (row_count): 'must_be' {HUGE}"),
    ([{"type": 10**5000}], f"rules[0]: 'type' {HUGE}"),
    ([{"type": "not_null", "columns": ["a"], "tolerance": -(10**38)}], f"rules[0] (not_null): 'tolerance' {HUGE}"),
    ([{"type": "values_present", "column": "a", "values": [1, 10**4400]}], f"rules[0] (values_present): 'values[1]' {HUGE}"),
    ([{"type": "row_count", "max": 10**MAX_NUMBER_DIGITS}], f"rules[0] (row_count): 'max' {HUGE}"),
    (
        [{"type": "range", "column": "a", "min": Decimal("1E+40")}],
        "rules[0] (range): 'min' is a decimal of more than 38 digits; Spark's decimals hold at most 38",
    ),
    (
        [{"type": "range", "column": "a", "min": Decimal("0." + "1" * 39)}],
        "rules[0] (range): 'min' is a decimal of more than 38 digits; Spark's decimals hold at most 38",
    ),
    # Whole numbers that Spark takes as a long (LONG_RANGE) in plain NUMBER / WHOLE / value lists.
    ([{"type": "row_count", "min": 2**63}], f"rules[0] (row_count): 'min' is 9223372036854775808, {LONG}"),
    (
        [{"type": "row_count", "targets": [{"max": 1}, {"max": 2**64}]}],
        f"rules[0] (row_count): 'targets[1].max' is 18446744073709551616, {LONG}",
    ),
    (
        [{"type": "invalid_count", "column": "a", "valid_min": -(2**63) - 1, "must_be": 0}],
        f"rules[0] (invalid_count): 'valid_min' is -9223372036854775809, {LONG}",
    ),
    (
        [{"type": "check", "metric": "invalid_count", "column": "a", "valid_length": 2**63, "must_be": 0}],
        f"rules[0] (check): 'valid_length' is 9223372036854775808, {LONG}",
    ),
    (
        [{"type": "values_present", "column": "a", "values": ["x", 2**63]}],
        f"rules[0] (values_present): 'values[1]' is 9223372036854775808, {LONG}",
    ),
    # Non-finite floats, wherever a number is taken.
    ([{"type": "row_count", "must_be": float("nan")}], f"rules[0] (row_count): 'must_be' is nan; {FINITE}"),
    ([{"type": "range", "column": "a", "max": float("inf")}], f"rules[0] (range): 'max' is inf; {FINITE}"),
    ([{"type": "values_present", "column": "a", "values": [float("-inf")]}], f"rules[0] (values_present): 'values[0]' is -inf; {FINITE}"),
    ([{"type": "range", "column": "a", "min": Decimal("NaN")}], f"rules[0] (range): 'min' is NaN; {FINITE}"),
    # Values that are not data.
    ([{"type": "not_null", "columns": [b"a"]}], f"rules[0] (not_null): 'columns[0]' is a bytes, which a rule cannot hold; {ALLOWED}"),
    ([{"type": b"not_null"}], f"rules[0]: 'type' is a bytes, which a rule cannot hold; {ALLOWED}"),
    ([{"type": "not_null", "columns": {"a"}}], f"rules[0] (not_null): 'columns' is a set, which a rule cannot hold; {ALLOWED}"),
    (
        [{"type": "not_null", "columns": ["a"], "name": _Hostile()}],
        f"rules[0] (not_null): 'name' is a _Hostile, which a rule cannot hold; {ALLOWED}",
    ),
    (
        [{"type": "regex", "column": "a", "pattern": object()}],
        f"rules[0] (regex): 'pattern' is an object, which a rule cannot hold; {ALLOWED}",
    ),
    ([{"type": "not_null", "columns": ["a"], "where": len}], f"rules[0] (not_null): 'where' is a builtin_function_or_method, which a rule cannot hold; {ALLOWED}"),
    # Text too long to echo or compile.
    (
        [{"type": "sql", "sql": "x" * (MAX_TEXT_LENGTH + 1)}],
        f"rules[0] (sql): 'sql' is a text of {MAX_TEXT_LENGTH + 1} characters; the limit is {MAX_TEXT_LENGTH}",
    ),
    (
        [{"type": "not_null", "k" * (MAX_TEXT_LENGTH + 1): 1}],
        f"rules[0] (not_null): the rule has a key of {MAX_TEXT_LENGTH + 1} characters; the limit is {MAX_TEXT_LENGTH}",
    ),
    # Surrogates (valid JSON escapes, not characters): py4j used to fail on them mid-run.
    (
        [{"type": "not_null", "columns": ["id", "caf\u00e9\ud800"]}],
        f"rules[0] (not_null): 'columns[1]' is a text holding a surrogate (U+D800 at character 4), {SURROGATE}; {UNICODE}",
    ),
    (
        [{"type": "sql", "failed_rows": "select * from t", "name": "\udfff"}],
        f"rules[0] (sql): 'name' is a text holding a surrogate (U+DFFF at character 0), {SURROGATE}; {UNICODE}",
    ),
    (
        [{"type": "not_null\ud800"}],
        f"rules[0]: 'type' is a text holding a surrogate (U+D800 at character 8), {SURROGATE}; {UNICODE}",
    ),
    (
        [{"type": "not_null", "columns": ["a"], "x\udc00": 1}],
        (f"rules[0] (not_null): the rule has a key holding a surrogate (U+DC00 at character 1), {SURROGATE}: "
         f"'x\\udc00'; {UNICODE}"),
    ),
    (
        [{"type": "foreign_key", "column": "a", "reference": {"path": "x", "options": {"sep": "\ud83d"}}}],
        (f"rules[0] (foreign_key): 'reference.options.sep' is a text holding a surrogate (U+D83D at character 0), "
         f"{SURROGATE}; {UNICODE}"),
    ),
    (
        [{"type": "row_count"}, {"type": "row_count", "targets": [{"\ud83d\ude00": 1}]}],
        (f"rules[1] (row_count): 'targets[0]' has a key holding a surrogate (U+D83D at character 0), {SURROGATE}: "
         f"'\\ud83d\\ude00'; {UNICODE}"),
    ),
]


@pytest.mark.parametrize(("rules", "message"), REFUSED, ids=range(len(REFUSED)))
def test_malformed_structures_are_rule_errors_naming_the_rule(rules, message):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse(rules)
    assert str(raised.value) == message


def test_an_alias_bomb_is_refused_by_counting_values_with_repetition():
    # The "billion laughs" shape: 9 levels that each repeat the one below 10 times share
    # their objects (as YAML aliases do), so the block is tiny in memory but 10**9 values.
    level: list = ["lol"] * 10
    for _ in range(8):
        level = [level] * 10
    # Refused once the count passes the bound: expanding 10**9 values would never end. (No
    # timing here: speed is measured by benchmarks/, and a loaded CI machine took 21 s.)
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "values_present", "column": "a", "values": level}])
    assert str(raised.value) == (
        f"rules[0] (values_present): the block holds more than {MAX_VALUES} values (lists, objects and "
        "scalars, counted each time an alias repeats them); split it into smaller blocks"
    )


def test_shared_values_that_do_not_loop_are_plain_data():
    columns = ["id", "email"]
    checks = Cola().parse([{"type": "not_null", "columns": columns}, {"type": "unique", "columns": columns}])
    assert [check.code for check in checks] == ["not_null(id,email)", "unique(id,email)"]


def test_the_widest_numbers_spark_takes_still_parse():
    rules = [
        {"type": "row_count", "min": 0, "max": LONG_RANGE[1]},
        {"type": "invalid_count", "column": "a", "valid_min": LONG_RANGE[0], "valid_max": 1.5e308, "must_be": 0},
        {"type": "values_present", "column": "a", "values": [dt.date(2024, 1, 31), dt.datetime(2024, 1, 31, 10), None, True]},
        {"type": "not_null", "columns": ("a", "b")},
    ]
    assert [check.code for check in Cola().parse(rules)] == [
        "row_count",
        "invalid_count(a)",
        "values_present(a)",
        "not_null(a,b)",
    ]


def test_kinds_refuse_whole_numbers_beyond_64_bits_on_their_own():
    # The pre-pass gives the message; the kinds agree, so no other path lets such a number through.
    assert NUMBER.accepts(LONG_RANGE[1]) and not NUMBER.accepts(LONG_RANGE[1] + 1)
    assert NUMBER.accepts(LONG_RANGE[0]) and not NUMBER.accepts(LONG_RANGE[0] - 1)
    assert WHOLE.accepts(LONG_RANGE[1]) and not WHOLE.accepts(LONG_RANGE[1] + 1)
    assert SCALAR_LIST.accepts([1, "a"]) and not SCALAR_LIST.accepts([2**63]) and not SCALAR_LIST.accepts([float("nan")])
    assert NUMBER.accepts(1.5e308) and not NUMBER.accepts(float("inf"))

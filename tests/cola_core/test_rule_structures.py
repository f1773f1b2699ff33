"""The structure pre-pass: a rule block that is not plain, bounded, finite data is a
ColaRuleError naming the rule by position and type, in pure Python, and a broken rules file
is a ColaError naming the file (issue 10).

Before it, these gave TypeError, ValueError (Python's 4,300-digit limit on int/str
conversion) and RecursionError, or passed parsing and failed inside a Spark job.
"""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

import pytest

from cola_core import Cola, ColaRuleError
from cola_core.errors import ColaError
from cola_core.rules_file import MAX_RULES_FILE_BYTES, read_rules_file
from cola_core.params import LONG_RANGE, NUMBER, SCALAR_LIST, WHOLE
from cola_core._structure import MAX_DEPTH, MAX_NUMBER_DIGITS, MAX_TEXT_LENGTH, MAX_VALUES

ALLOWED = "a rule holds only text, numbers, true/false, null, dates, lists and objects"
KEYS = 'keys are always text, such as "column"'
CYCLE = "contains itself (a self-reference, as YAML anchors and aliases can make); write the value out in full"
DEEP = f"nests deeper than {MAX_DEPTH} levels; a rule is an object of parameters, a few levels deep at most"
HUGE = "is a whole number of more than 38 digits; no Spark type holds it (the widest, a decimal, has 38 digits)"
LONG = "outside the 64-bit range Spark takes for it (-9223372036854775808 to 9223372036854775807)"
FINITE = "a number in a rule must be finite"
SURROGATE = "half of a UTF-16 pair, which UTF-8 cannot encode"
UNICODE = ("a rule's text must be valid Unicode (in JSON, a \\ud800-\\udfff escape is only half of a character: "
           "write the pair, or the character itself)")
REPEATED = ("twice in one object; only the last value would count, so a reader would see a rule that is not "
            "the one run: write each key once")


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
    started = time.perf_counter()
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "values_present", "column": "a", "values": level}])
    assert str(raised.value) == (
        f"rules[0] (values_present): the block holds more than {MAX_VALUES} values (lists, objects and "
        "scalars, counted each time an alias repeats them); split it into smaller blocks"
    )
    assert time.perf_counter() - started < 10


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


# -- rules files ----------------------------------------------------------------------------

RULES_FILE_HINT = "it must be a list of rules, or an object whose only key is 'rules'"


def _alias_bomb() -> str:
    """YAML's "billion laughs": nine rules, each repeating the one before nine times."""
    lines = ["- {type: values_present, column: x, values: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]}"]
    for previous, anchor in zip("abcdefgh", "bcdefghi"):
        lines.append(f"- {{type: values_present, column: x, values: &{anchor} [{', '.join(['*' + previous] * 9)}]}}")
    return "\n".join(lines) + "\n"


FILES = [
    ("latin1.json", b'[{"type": "not_null", "columns": ["caf\xe9"]}]',
     "is not UTF-8 text: byte 0xe9 at offset 38 (line 1) cannot be decoded; save the file as UTF-8"),
    ("utf16.yaml", "- {type: row_count}\n".encode("utf-16"),
     "is not UTF-8 text: byte 0xff at offset 0 (line 1) cannot be decoded; save the file as UTF-8"),
    ("deep.json", "[" * 100_000 + "]" * 100_000,
     "nests too deep to read (a rule is an object of parameters, at most 32 levels deep)"),
    ("deep.yaml", "[" * 100_000 + "]" * 100_000,
     "nests too deep to read (a rule is an object of parameters, at most 32 levels deep)"),
    ("deep40.json", '[{"type": "not_null", "columns": ' + "[" * 40 + "]" * 40 + "}]",
     f": rules[0] (not_null): 'columns[0][0][0][0][0][0][0]...' {DEEP}"),
    ("cycle.yaml", "- &rule {type: not_null, columns: *rule}\n", f": rules[0] (not_null): 'columns' {CYCLE}"),
    ("cycle_list.yaml", "- {type: not_null, columns: &c [id, *c]}\n", f": rules[0] (not_null): 'columns[1]' {CYCLE}"),
    ("bomb.yaml", _alias_bomb(),
     f": rules[6] (values_present): the block holds more than {MAX_VALUES} values (lists, objects and scalars, "
     "counted each time an alias repeats them); split it into smaller blocks"),
    ("digits.json", '[{"type": "row_count", "min": ' + "9" * 5000 + "}]",
     "holds a whole number of 5000 digits; a number in a rule has at most 38 (line 1, column 31)\n"
     '    [{"type": "row_count", "min": ' + "9" * 40 + "...\n"
     + " " * 34 + "^"),
    ("digits.yaml", "- {type: row_count, min: " + "9" * 5000 + "}\n",
     "is not valid YAML: found a whole number of 5000 digits; a number in a rule has at most 38 (line 1, column 26)\n"
     "    - {type: row_count, min: " + "9" * 40 + "...\n"
     + " " * 29 + "^"),
    ("nan.json", '[{"type": "row_count", "must_be": NaN}]',
     "holds NaN, which is not a JSON number; a number in a rule must be finite (line 1, column 35)\n"
     '    [{"type": "row_count", "must_be": NaN}]\n' + " " * 38 + "^"),
    ("infinity.json", '[{"type": "row_count", "must_be": -Infinity}]',
     "holds -Infinity, which is not a JSON number; a number in a rule must be finite (line 1, column 35)\n"
     '    [{"type": "row_count", "must_be": -Infinity}]\n' + " " * 38 + "^"),
    ("overflow.json", '[{"type": "row_count", "must_be": 1e400}]',
     "holds 1e400, which is beyond the largest double; a number in a rule must be finite (line 1, column 35)\n"
     '    [{"type": "row_count", "must_be": 1e400}]\n' + " " * 38 + "^"),
    ("inf.yaml", "- {type: row_count, must_be: .inf}\n", f": rules[0] (row_count): 'must_be' is inf; {FINITE}"),
    ("date.yaml", "- {type: range, column: d, min: 2022-02-30}\n",
     "is not valid YAML: found an impossible date or time '2022-02-30' (day is out of range for month) "
     "(line 1, column 33)\n    - {type: range, column: d, min: 2022-02-30}\n" + " " * 36 + "^"),
    ("key.yaml", "- {type: not_null, 1: x}\n", f": rules[0] (not_null): the rule has a key that is not a string: 1 (int); {KEYS}"),
    ("binary.yaml", "- {type: not_null, columns: [!!binary aGVsbG8=]}\n",
     f": rules[0] (not_null): 'columns[0]' is a bytes, which a rule cannot hold; {ALLOWED}"),
    ("number.json", "5", f"holds a number; {RULES_FILE_HINT}"),
    ("text.json", '"not_null"', f"holds a text; {RULES_FILE_HINT}"),
    ("null.json", "null", f"holds nothing; {RULES_FILE_HINT}"),
    ("empty.yaml", "", f"holds nothing; {RULES_FILE_HINT}"),
    ("wrapped.json", '{"rules": {"type": "row_count"}}', f"holds an object; {RULES_FILE_HINT}"),
    ("mixed_keys.yaml", "{1: x, rules: []}\n", f"holds an object; {RULES_FILE_HINT} (found keys: 1, rules)"),
    # A repeated key: only the last value counted, so a reviewer read another rule than the one run.
    ("repeated.json", '[{"type": "not_null", "columns": ["a"], "columns": ["b"]}]',
     f"repeats the key 'columns' {REPEATED} (line 1, column 41)\n"
     '    [{"type": "not_null", "columns": ["a"], "columns": ["b"]}]\n' + " " * 44 + "^"),
    ("repeated_type.json", '[\n  {"type": "not_null",\n   "columns": ["a"],\n   "type": "unique"}\n]\n',
     f"repeats the key 'type' {REPEATED} (line 4, column 4)\n" '       "type": "unique"}\n' + " " * 7 + "^"),
    # The C scanner meets the inner repeat first (that object closes first); the file's first repeat is named.
    ("repeated_outer.json", '[{"type": "x", "a": 1, "a": {"k": 1, "k": 2}}]',
     f"repeats the key 'a' {REPEATED} (line 1, column 24)\n"
     '    [{"type": "x", "a": 1, "a": {"k": 1, "k": 2}}]\n' + " " * 27 + "^"),
    ("repeated_nested.json", '[{"type": "foreign_key", "reference": {"path": "x", "path": "y"}}]',
     f"repeats the key 'path' {REPEATED} (line 1, column 53)\n"
     '    [{"type": "foreign_key", "reference": {"path": "x", "path": "y"}}]\n' + " " * 56 + "^"),
    ("repeated_rules.json", '{"rules": [], "rules": [{"type": "row_count"}]}',
     f"repeats the key 'rules' {REPEATED} (line 1, column 15)\n"
     '    {"rules": [], "rules": [{"type": "row_count"}]}\n' + " " * 18 + "^"),
    # Too deep for the locating scan: the key and the file, without a position.
    ("repeated_deep.json", "[" * 600 + '{"a": 1, "a": 2}' + "]" * 600, f"repeats the key 'a' {REPEATED}"),
    ("repeated.yaml", "- type: not_null\n  columns: [a]\n  columns: [b]\n",
     f"is not valid YAML: found the key 'columns' {REPEATED} (line 3, column 3)\n      columns: [b]\n      ^"),
    ("repeated_type.yaml", "- {type: not_null, columns: [a], type: unique}\n",
     f"is not valid YAML: found the key 'type' {REPEATED} (line 1, column 34)\n"
     "    - {type: not_null, columns: [a], type: unique}\n" + " " * 37 + "^"),
    # 1 and 1.0 are one key to Python: the mapping would keep one value.
    ("repeated_number.yaml", "- {type: not_null, 1: a, 1.0: b}\n",
     f"is not valid YAML: found the key 1.0 {REPEATED} (line 1, column 26)\n"
     "    - {type: not_null, 1: a, 1.0: b}\n" + " " * 29 + "^"),
    # Two merge keys in one mapping are a repeat too; '<<: [*a, *b]' merges both.
    ("repeated_merge.yaml", "- <<: {type: not_null}\n  <<: {columns: [a]}\n",
     f"is not valid YAML: found the key '<<' {REPEATED} (line 2, column 3)\n      <<: {{columns: [a]}}\n      ^"),
    ("surrogate.json", '[{"type": "not_null", "columns": ["\\ud800"]}]',
     f": rules[0] (not_null): 'columns[0]' is a text holding a surrogate (U+D800 at character 0), {SURROGATE}; {UNICODE}"),
    ("surrogate_key.yaml", '- {type: not_null, columns: [a], "w\\udfff": 1}\n',
     (f": rules[0] (not_null): the rule has a key holding a surrogate (U+DFFF at character 1), {SURROGATE}: "
      f"'w\\udfff'; {UNICODE}")),
]


@pytest.mark.parametrize(("file_name", "content", "problem"), FILES, ids=[case[0] for case in FILES])
def test_every_broken_rules_file_is_a_cola_error_naming_the_file(tmp_path, file_name, content, problem):
    path = tmp_path / file_name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    separator = "" if problem.startswith(":") else " "
    assert str(raised.value) == f"rules file {str(path)!r}{separator}{problem}"


def test_a_rules_file_over_the_size_bound_is_refused_before_parsing(tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(b"[" + b" " * MAX_RULES_FILE_BYTES + b"]")
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} is larger than 8 MiB; a rules file holds rules, not data "
        "(split a very large block into several files)"
    )


def test_a_utf8_byte_order_mark_and_38_digit_numbers_are_fine(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes('\ufeff[{"type": "row_count", "min": 1, "max": 9223372036854775807, "name": "café"}]'.encode())
    assert read_rules_file(path) == [{"type": "row_count", "min": 1, "max": 2**63 - 1, "name": "café"}]


def test_yaml_merge_keys_still_work_and_an_explicit_key_overrides_a_merged_one(tmp_path):
    # YAML lets a key written in the mapping override one a merge key brings in: not a repeat.
    path = tmp_path / "merge.yaml"
    path.write_text(
        "- &base {type: not_null, columns: [a], name: base}\n"
        "- <<: *base\n"
        "  columns: [b]\n"
        "- <<: [{type: unique}, {columns: [c], name: second}]\n"
        "  name: mine\n"
    )
    assert read_rules_file(path) == [
        {"type": "not_null", "columns": ["a"], "name": "base"},
        {"type": "not_null", "columns": ["b"], "name": "base"},
        {"type": "unique", "columns": ["c"], "name": "mine"},
    ]


def test_a_key_may_repeat_across_objects_and_a_surrogate_pair_is_one_character(tmp_path):
    path = tmp_path / "fine.json"
    path.write_text('[{"type": "not_null", "columns": ["\\ud83d\\ude00"]}, {"type": "not_null", "columns": ["b"]}]')
    assert read_rules_file(path) == [{"type": "not_null", "columns": ["\U0001f600"]}, {"type": "not_null", "columns": ["b"]}]


def test_yaml_scalars_follow_yaml_12_so_no_yes_and_times_stay_text(tmp_path):
    # PyYAML's YAML 1.1 reads NO (Norway) as false, yes/off as booleans, 1:30 as 90 and 010 as 8.
    path = tmp_path / "rules.yaml"
    path.write_text(
        "- type: invalid_count\n"
        "  column: country\n"
        "  valid_values: [NO, SE, yes, off, 1:30, 0x1F, 010, true, False, -7, +3, 1.5, 2024-01-31]\n"
        "  must_be: '= 0'\n"
    )
    assert read_rules_file(path)[0]["valid_values"] == [
        "NO", "SE", "yes", "off", "1:30", 31, 10, True, False, -7, 3, 1.5, dt.date(2024, 1, 31),
    ]

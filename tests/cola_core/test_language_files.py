"""Rules files (``language/files.py``): JSON and YAML read into rule dicts, and every broken file a
ColaError naming the file, its line and column where there is one."""

from __future__ import annotations

import datetime as dt
import sys

import pytest

from cola_core.errors import ColaError
from cola_core.language.files import MAX_RULES_FILE_BYTES, read_rules_file
from cola_core.language.structure import MAX_DEPTH, MAX_VALUES
from cola_helpers import ALLOWED, CYCLE, DATA, FINITE, KEYS, REPEATED, SURROGATE, UNICODE, too_deep

DEEP = too_deep(MAX_DEPTH)


# -- reading a rules file --------------------------------------------------------------------


def test_rules_files_in_json_and_yaml():
    assert read_rules_file(DATA / "rules_warn.json") == [
        {"type": "not_null", "columns": ["order_id"]},
        {"type": "row_count", "min": 1},
        {"type": "missing_count", "column": "email", "must_be": "<= 2", "warn": "= 0", "name": "email present"},
    ]
    assert read_rules_file(str(DATA / "rules_fail.yaml")) == [
        {"type": "unique", "columns": ["order_id"]},
        {"type": "range", "column": "amount", "min": 0, "code": "AMOUNT_NEGATIVE"},
        {"type": "avg", "column": "amount", "must_be": "between 10 and 20"},
    ]


def test_a_rules_file_may_hold_an_object_with_only_rules(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('{"rules": [{"type": "row_count"}]}')
    assert read_rules_file(path) == [{"type": "row_count"}]
    path.write_text('{"rules": [], "pipeline": "x"}')
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} holds an object; it must be a list of rules, or an object whose only key "
        "is 'rules' (found keys: rules, pipeline)"
    )


def test_invalid_json_names_the_line_and_column(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('[\n  {"type": "not_null", "columns": ["id"]}\n  {"type": "row_count"}\n]\n')
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} is not valid JSON: Expecting ',' delimiter (line 3, column 3)\n"
        '      {"type": "row_count"}\n'
        "      ^"
    )


def test_invalid_yaml_names_the_line_and_column(tmp_path):
    path = tmp_path / "rules.yml"
    path.write_text("- type: not_null\n  columns: [id\n- type: row_count\n")
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} is not valid YAML: expected ',' or ']', but got ':' (line 3, column 7)\n"
        "    - type: row_count\n"
        "          ^"
    )


def test_an_unreadable_rules_file(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ColaError) as raised:
        read_rules_file(missing)
    assert str(raised.value) == f"cannot read rules file {str(missing)!r}: [Errno 2] No such file or directory: {str(missing)!r}"


def test_yaml_without_pyyaml_says_how_to_get_it(tmp_path, monkeypatch):
    # Uninstalling PyYAML is not possible inside the test run; None in sys.modules makes the
    # import fail exactly as it does when the package is absent.
    monkeypatch.setitem(sys.modules, "yaml", None)
    path = tmp_path / "rules.yaml"
    path.write_text("- type: row_count\n")
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert str(raised.value) == (
        f"rules file {str(path)!r} is YAML, which needs PyYAML: pip install PyYAML "
        "(or airflow-provider-cola[yaml]), or write the rules as JSON"
    )


def test_a_json_rules_file_does_not_import_yaml(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)
    assert read_rules_file(DATA / "rules_warn.json")[1] == {"type": "row_count", "min": 1}



# -- broken rules files ----------------------------------------------------------------------------

RULES_FILE_HINT = "it must be a list of rules, or an object whose only key is 'rules'"


def _alias_bomb() -> str:
    """YAML's "billion laughs": nine rules, each repeating the one before nine times."""
    lines = ["- {type: values_present, column: x, values: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]}"]
    for previous, anchor in zip("abcdefgh", "bcdefghi", strict=True):
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


def test_aliases_that_repeat_a_long_text_cannot_grow_a_block_past_a_files_size(tmp_path):
    """A 190 KB file: one 99,000-character name anchored, then aliased by 2,000 rules, loaded as
    198 million characters (and a 198 MB results file and XCom). The text a block holds is
    counted with its repetitions, and bounded as the file is."""
    from cola_core import Cola, ColaRuleError
    from cola_core.language.structure import MAX_BLOCK_TEXT

    name = "n" * 99_000
    lines = [f'- {{type: not_null, columns: [a], name: &long "{name}"}}']
    lines += ["- {type: not_null, columns: [a], name: *long}"] * 1_999
    path = tmp_path / "aliases.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size < 200_000
    with pytest.raises(ColaError) as raised:
        read_rules_file(path)
    assert MAX_BLOCK_TEXT == 8 * 1024 * 1024
    assert str(raised.value) == (
        f"rules file {str(path)!r}: rules[84] (not_null): the block holds more than 8,388,608 characters of text "
        "(counted each time an alias repeats a value, 'name' passing the bound); a rules file may hold at most as "
        "much text as its size limit, so that no result or message can grow past it"
    )
    # The same block built in Python is bounded alike.
    with pytest.raises(ColaRuleError) as refused:
        Cola().parse([{"type": "not_null", "columns": ["a"], "name": name}] * 2_000)
    assert str(refused.value).startswith("rules[84] (not_null): the block holds more than 8,388,608 characters")

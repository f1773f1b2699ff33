"""What counts as text in a rule (``language.text``), as the parser and the rules schema both have it.

A rule's ``id``, ``name``, ``code`` and ``dimension`` are one line: they name the rule in an
alert's headline, a log line, a page, where a line break forges a result line of its own. Any
text holds a visible character: a lone byte order mark is blank, though Python's ``strip()``
keeps it (ECMAScript's ``\\S``, which the schema was checked with, does not).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cola_core import Cola, ColaRuleError
from cola_core.language.text import is_line, is_text, line_break

SCHEMA = jsonschema.Draft202012Validator(Cola().rules_schema())
_FIX = "without control characters (a longer text belongs in 'description')"


def refusal(rules: list[dict[str, Any]]) -> str:
    with pytest.raises(ColaRuleError) as caught:
        Cola().parse(rules)
    return str(caught.value)


def schema_errors(rules: list[dict[str, Any]]) -> list[list[Any]]:
    return sorted(list(error.absolute_path) for error in SCHEMA.iter_errors(rules))


ROW_COUNT = {"type": "row_count", "min": 1}


@pytest.mark.parametrize(("rule", "message", "path"), [
    ({"type": "not_null", "columns": ["email"], "name": "emails\n[PASS] everything"},
     "rules[1] (not_null): 'name' must be one line of text, and 'emails\\n[PASS] everything' holds U+000A "
     f"(a line break) at character 7; write the name on one line {_FIX}", [1, "name"]),
    ({"type": "not_null", "columns": ["email"], "code": "EMAIL\r\nReport: http://x"},
     "rules[1] (not_null): 'code' must be one line of text, and 'EMAIL\\r\\nReport: http://x' holds U+000D "
     f"(a line break) at character 6; write the code on one line {_FIX}", [1, "code"]),
    ({"type": "not_null", "columns": ["email"], "id": "emails\u2028x"},
     "rules[1] (not_null): 'id' must be one line of text, and 'emails\\u2028x' holds U+2028 "
     f"(a line break) at character 7; write the id on one line {_FIX}", [1, "id"]),
    ({"type": "not_null", "columns": ["email"], "dimension": "Completeness\x85"},
     "rules[1] (not_null): 'dimension' must be one line of text, and 'Completeness\\x85' holds U+0085 "
     f"(a line break) at character 13; write the dimension on one line {_FIX}", [1, "dimension"]),
    ({"type": "not_null", "columns": ["email"], "name": "emails\tall"},
     "rules[1] (not_null): 'name' must be one line of text, and 'emails\\tall' holds U+0009 "
     f"(a control character) at character 7; write the name on one line {_FIX}", [1, "name"]),
    ({"type": "not_null", "columns": ["email"], "name": "ok \u202eLIAF"},
     "rules[1] (not_null): 'name' must be one line of text, and 'ok \\u202eLIAF' holds U+202E "
     "(a bidirectional control, which reorders the rest of the line) at character 4; write the name on one "
     f"line {_FIX}", [1, "name"]),
    ({"type": "not_null", "name": "a\nb", "targets": [{"columns": ["a"]}]},
     "rules[1] (not_null): 'name' must be one line of text, and 'a\\nb' holds U+000A (a line break) at "
     f"character 2; write the name on one line {_FIX}", [1, "name"]),
    ({"type": "not_null", "targets": [{"columns": ["a"]}, {"columns": ["b"], "code": "b\n[PASS]"}]},
     "rules[1].targets[1] (not_null): 'code' must be one line of text, and 'b\\n[PASS]' holds U+000A (a line "
     f"break) at character 2; write the code on one line {_FIX}", [1, "targets", 1, "code"]),
])
def test_a_name_code_id_or_dimension_off_one_line_is_refused_by_the_parser_and_the_schema(rule, message, path):
    assert refusal([ROW_COUNT, rule]) == message
    assert schema_errors([ROW_COUNT, rule]) == [path]


@pytest.mark.parametrize(("rule", "message", "path"), [
    ({**ROW_COUNT, "name": "\ufeff"},
     "rules[0] (row_count): 'name' must be a non-empty string, got '\\ufeff' (only spaces and invisible characters)",
     [0, "name"]),
    ({**ROW_COUNT, "code": "\u200b\u3000"},
     "rules[0] (row_count): 'code' must be a non-empty string, got '\\u200b\\u3000' (only spaces and invisible "
     "characters)", [0, "code"]),
    ({**ROW_COUNT, "description": "\ufeff\n\u2060"},
     "rules[0] (row_count): 'description' must be a non-empty string, got '\\ufeff\\n\\u2060' (only spaces and "
     "invisible characters)", [0, "description"]),
    ({**ROW_COUNT, "dimension": "\x1c"},  # a space to Python, not to ECMAScript
     "rules[0] (row_count): 'dimension' must be a non-empty string, got '\\x1c'", [0, "dimension"]),
    ({"type": "not_null", "columns": ["\ufeff"]},
     "rules[0] (not_null): 'columns' must be a non-empty list of column names, got ['\\ufeff']", [0, "columns", 0]),
])
def test_text_of_spaces_and_invisible_characters_alone_is_blank_for_the_parser_and_the_schema(rule, message, path):
    assert refusal([rule]) == message
    assert schema_errors([rule]) == [path]


def test_a_description_a_condition_and_a_query_may_span_lines_and_a_name_may_be_any_visible_line():
    rules = [
        {"type": "not_null", "columns": ["email"], "description": "Every order has an e-mail.\nSee DQ-12.",
         "where": "status = 'open'\n  AND NOT is_test", "name": "e-mails ✓ 😀 \u05e9\u05dc\u05d5\u05dd \u200f!",
         "code": "\ufeffEMAIL", "dimension": "Complétude", "id": "orders\u00a0email"},
        {"type": "sql", "query": "SELECT count(*) = 0\nFROM _validation_df\nWHERE id IS NULL"},
        # A character beyond U+FFFF is visible for both, even one that displays as nothing: the
        # schema's ECMAScript engine without its Unicode flag sees it as two code units.
        {**ROW_COUNT, "name": "\U000e0041"},
    ]
    assert [check.name for check in Cola().parse(rules)] == [rules[0]["name"], None, "\U000e0041"]
    assert schema_errors(rules) == []


def test_line_break_names_the_first_character_that_keeps_text_off_one_line():
    assert [line_break(text) for text in ["ok", "a\x00b\n", "\u2066x", " \x7f"]] == [
        None, "U+0000 (a control character) at character 2",
        "U+2066 (a bidirectional control, which reorders the rest of the line) at character 1",
        "U+007F (a control character) at character 2",
    ]
    assert [(is_text(text), is_line(text)) for text in ["a", " a\n", "\u180e", "\u2800", 1, None]] == [
        (True, True), (True, False), (False, False), (True, True), (False, False), (False, False),
    ]


@pytest.mark.parametrize(("name", "refused"), [("\ufeff", True), ("orders\n[PASS] all", True), ("orders ✓", False)])
def test_the_documented_ci_check_and_the_parser_agree(tmp_path: Path, name: str, refused: bool):
    # docs/rules/index.md: `check-jsonschema --schemafile rules.schema.json orders.rules.yaml`,
    # with its default regex engine (ECMAScript, with the Unicode flag) and without the flag.
    rules = tmp_path / "orders.rules.json"
    rules.write_text(json.dumps([{"type": "not_null", "columns": ["id"], "name": name}]), encoding="utf-8")
    schema = Path(__file__).resolve().parents[2] / "schema" / "rules.schema.json"
    command = [sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema), str(rules)]
    for variant in ("default", "nonunicode"):
        checked = subprocess.run([*command, "--regex-variant", variant], capture_output=True, text=True, check=False)
        assert checked.returncode == (1 if refused else 0), checked.stdout + checked.stderr
    try:
        Cola().parse(json.loads(rules.read_text(encoding="utf-8")))
    except ColaRuleError:
        assert refused
    else:
        assert not refused

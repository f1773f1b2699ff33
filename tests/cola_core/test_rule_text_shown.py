"""A rule author's text (a name, code, message, dimension, rule id; a column's name) is data
wherever it is shown (issue 44): one line in every plain-text output (``str(CheckResult)``, the
printed results table, a profile), escaped text and no element of its own in every page.

The rules parser refuses such names, but a result also comes from a custom check, from a
results file or an XCom (``CheckResult.from_dict``) and from the history store: each surface
makes the text safe itself. The alerts' and the task log's lines are in
``tests/airflow_provider_cola/test_alerts.py``; ``cola history``'s table in ``test_cli_history.py``.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from html.parser import HTMLParser

import pytest

from cola_core.common.formatting import one_line
from cola_core.language.profiles import ColumnProfile, Profile
from cola_core.language.result import CheckResult
from cola_core.report.index_page import render_index
from cola_core.report.pages import render_html
from cola_core.report.results import render_table

# A name that, taken as text, would add a failed result line and a report link to a plain-text
# message, move a terminal's cursor (ESC), and close a <pre> to open a link in HTML.
NAME = 'ok\n  [FAIL] forged: 9\nReport: http://evil\r\x85\u2028\u2029\x1b[2J</pre><a href="http://evil">x</a>'
NAME_SHOWN = 'ok\\n  [FAIL] forged: 9\\nReport: http://evil\\r\\x85\\u2028\\u2029\\x1b[2J</pre><a href="http://evil">x</a>'
CODE = "C\n[PASS] all good\u2028<script>alert(1)</script>"
CODE_SHOWN = "C\\n[PASS] all good\\u2028<script>alert(1)</script>"
# Every character one_line escapes: each one ends a line for str.splitlines(), a mail or a log
# reader, acts on a terminal, has no UTF-8 form (a lone surrogate) or reorders the line (bidi).
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
ESCAPED = [chr(point) for point in range(sys.maxunicode + 1)
           if unicodedata.category(chr(point)) in ("Cc", "Zl", "Zp", "Cs") or chr(point) in BIDI]


def _hostile_results() -> list[CheckResult]:
    """Results as a results file or an XCom gives them back: through JSON and from_dict."""
    built = [
        CheckResult("not_null", False, "not_null(id): 1 NULL value (id: 1)", 1, check_name=NAME, code=CODE,
                    dimension=NAME, rule_id=CODE),
        # A custom check's message holds text from the data.
        CheckResult("custom", False, "bad value 'x\n  [PASS] forged'\x1b[0m", 2, code="CUSTOM", rule_id="custom"),
        CheckResult("row_count", True, "row_count = 3", 0, 3.0, code="row_count", rule_id="volume"),
    ]
    return [CheckResult.from_dict(json.loads(json.dumps(result.to_dict()))) for result in built]


def test_one_line_escapes_each_character_that_breaks_or_rewrites_a_line_and_keeps_the_rest():
    assert len(ESCAPED) == 65 + 2 + 2048 + 9  # Cc, Zl and Zp, Cs, the bidi controls
    for character in ESCAPED:
        shown = one_line(f"a{character}b")
        assert shown == "a" + character.encode("unicode_escape").decode("ascii") + "b"
        assert shown.isascii() and shown.isprintable()
    assert one_line("a\nb\r\nc") == "a\\nb\\r\\nc"  # the two characters \ and n
    assert one_line("\x85\u2028\u2029\t\x1b\x00\x7f\ud800\u202e") == "\\x85\\u2028\\u2029\\t\\x1b\\x00\\x7f\\ud800\\u202e"
    # What reads as written stays so: backslashes, other scripts, spaces of every kind, joiners.
    for text in ("regex(code,^\\d+$)", "r\\n already escaped", "prénom 名前 \xa0\u2003x", "👩\u200d💻", ""):
        assert one_line(text) == text
    assert one_line(None) == "None"
    assert one_line(3) == "3"


def test_a_printed_result_stays_on_one_line():
    hostile, custom, _ = _hostile_results()
    assert str(hostile) == f"[FAIL] {NAME_SHOWN}: not_null(id): 1 NULL value (id: 1)"
    assert str(custom) == "[FAIL] check: bad value 'x\\n  [PASS] forged'\\x1b[0m"
    assert len(str(hostile).splitlines()) == len(str(custom).splitlines()) == 1


def test_the_results_table_has_one_line_per_result_whatever_the_names_codes_and_messages_hold():
    results = _hostile_results()
    table = render_table(results, valid_count=1, invalid_count=2)
    lines = table.splitlines()  # splits at \x85, \u2028, \u2029 too
    assert len(lines) == 1 + len(results) + 3  # the header, the results, a blank line, the counts, the split
    assert table.split("\n") == lines
    assert "\x1b" not in table
    assert lines[1].startswith(f"FAIL      {NAME_SHOWN}  {CODE_SHOWN}")
    assert lines[1].endswith("not_null(id): 1 NULL value (id: 1)")
    # A message's own whitespace is folded to a space, as the table always did; ESC is escaped.
    assert lines[2].endswith("bad value 'x [PASS] forged'\\x1b[0m")
    assert lines[-2:] == ["3 results: 1 pass, 0 warn, 2 fail", "split: 1 valid row, 2 invalid rows"]


def test_a_profile_keeps_each_column_on_one_line_whatever_its_name():
    profile = Profile(3, (
        ColumnProfile("a\nb\x1b[31m", "string", "text", 3, nulls=0, top_values=(("v\u2028w", 3),)),
        ColumnProfile("id", "bigint", "number", 3, nulls=0),
    ))
    lines = str(profile).splitlines()
    assert len(lines) == 1 + 1 + 2  # the title, the header, one line per column
    assert lines[2].startswith("a b\\x1b[31m  string")
    assert lines[2].endswith("v w: 3")


class _Elements(HTMLParser):
    """The elements of a page, in order, with their attributes; and its text."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def _benign(result: CheckResult) -> CheckResult:
    """The same result with plain names: its page has the same elements as the hostile one's."""
    data = result.to_dict()
    for key in ("check_name", "code", "dimension", "rule_id"):
        if data.get(key) in (NAME, CODE):
            data[key] = "plain"
    return CheckResult.from_dict({**data, "message": "plain"})


def test_the_report_page_shows_rule_text_as_text_only():
    results = _hostile_results()
    page = render_html(results, dataset=NAME, pipeline=CODE, rejections={CODE: 1, NAME: 2}, valid_count=1,
                       invalid_count=2, trends={CODE: [(None, 1.0, "fail"), (None, 2.0, NAME)]})
    plain = render_html([_benign(result) for result in results], dataset="plain", pipeline="plain",
                        rejections={"plain": 1, "other": 2}, valid_count=1, invalid_count=2,
                        trends={"plain": [(None, 1.0, "fail"), (None, 2.0, "plain")]})
    parsed = _Elements(page)
    # No element, attribute or link of the rule's text: the page's elements are those of the same
    # results with plain names, one for one.
    assert parsed.elements == _Elements(plain).elements
    assert not [tag for tag, _ in parsed.elements if tag in ("a", "script", "pre")]
    text = "".join(parsed.text)
    for shown in (NAME, CODE, "bad value 'x\n  [PASS] forged'\x1b[0m"):
        assert shown in text  # as text: the parser read it back whole, as written


def test_the_index_page_shows_rule_text_as_text_only():
    def row(text: str, severity: str) -> dict:
        return {"dataset": text, "rule_id": text, "severity": severity, "code": text, "check_name": text,
                "data_date": None, "trend": [(None, 1.0, severity)], "current": text != "gone"}

    page = render_index([row(NAME, "fail"), row(CODE, "pass"), row("gone", NAME)], title=NAME)
    plain = render_index([row("plain", "fail"), row("plain", "pass"), row("gone", "plain")], title="plain")
    parsed = _Elements(page)
    assert parsed.elements == _Elements(plain).elements
    assert not [tag for tag, _ in parsed.elements if tag in ("a", "script", "pre")]
    assert "".join(parsed.text).count(NAME) == 1 + 1 + 4  # the title, the heading, the row's four cells


@pytest.mark.parametrize("text", [NAME, CODE])
def test_the_hostile_texts_fit_a_pages_cut_so_the_tests_see_them_whole(text):
    from cola_core.report.page_parts import TEXT_BYTES, clip_html

    assert not clip_html(text, TEXT_BYTES).endswith("…")
